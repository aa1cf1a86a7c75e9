/** Block-by-block markdown (what a streamed reply is drawn with) equals rendering the text whole, at every step. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import { createMarkdownRenderer } from "../src/webview/markdown";
import { replyText } from "../bench/reply";

const HOSTILE = [
  "Intro with <img src=x onerror=alert(1)> inline html.",
  "",
  "<script>alert(1)</script>",
  "",
  "[click](javascript:alert(1)) and [ok](https://example.com)",
  "",
  "1. one",
  "2. two",
  "   continued",
  "",
  "> quote",
  "> more",
  "",
  "| a | b |",
  "|---|---|",
  "| 1 | 2 |",
  "",
  "```python",
  "def f(x):",
  "    return x  # done",
  "```",
  "",
  "Trailing paragraph",
  "that goes on",
].join("\n");

function html(fragment: DocumentFragment, win: Window): string {
  const box = win.document.createElement("div");
  box.append(fragment);
  return box.innerHTML;
}

test("every prefix of a streamed reply renders as the whole text does", () => {
  const win = new JSDOM("").window as unknown as Window;
  const streamed = createMarkdownRenderer(win);
  const whole = createMarkdownRenderer(win, { byBlock: false });
  for (const text of [HOSTILE, replyText(3000)]) {
    for (let end = 1; end <= text.length; end += end < 200 ? 1 : 89) {
      const prefix = text.slice(0, end);
      assert.equal(html(streamed(prefix), win), html(whole(prefix), win), `prefix of ${end} characters`);
    }
    assert.equal(html(streamed(text), win), html(whole(text), win));
  }
});

test("a reply with reference links is rendered whole (its blocks depend on each other)", () => {
  const win = new JSDOM("").window as unknown as Window;
  const streamed = createMarkdownRenderer(win);
  const text = "See [the docs][d].\n\nMore text.\n\n[d]: https://example.com/docs";
  const out = html(streamed(text), win);
  assert.match(out, /<a href="https:\/\/example.com\/docs" rel="noopener noreferrer">the docs<\/a>/);
});
