/** Block-by-block markdown (what a streamed reply is drawn with) equals rendering the text whole, at every step. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import { createMarkdown, createMarkdownRenderer } from "../src/webview/markdown";
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

/** Feeds `text` to a stream in chunks of `sizes` (cycled) and checks the element after each one. */
function streamMatchesWhole(text: string, sizes: number[]): void {
  const win = new JSDOM("").window as unknown as Window;
  const markdown = createMarkdown(win);
  const element = win.document.createElement("div");
  const stream = markdown.stream(element);
  let end = 0;
  for (let step = 0; end < text.length; step++) {
    end = Math.min(text.length, end + sizes[step % sizes.length]);
    stream.update(text.slice(0, end));
    assert.equal(element.innerHTML, html(markdown.whole(text.slice(0, end)), win), `after ${end} of ${text.length} characters`);
  }
}

test("a stream redrawing only its last block draws every prefix as the whole text does", () => {
  const tricky = [
    "para\n---\n\n- a\n\n  loose continued\n- b\n\nafter the list\n\n| x | y |\n|---|---|\n| 1 | 2 |\n",
    "\tindented\twith tabs\n\n    code block\n\nnext\n> quote\nlazy line\n\n***\n\n# Heading\ntext",
    "```\nunclosed fence\n\nstill code\n",
  ].join("\n");
  const nested = [
    "- outer\n  - inner\n    - deeper\n\n  back in outer\n\n- next outer\n",
    "> - quoted list\n>   more\n>\n> quoted para\n\n<div>\nraw html block\n</div>\n\n~~~js\nlet x = 1;\n~~~\n",
    "Heading\n=======\n\n1) one\n\n   two paragraphs in one\n\n2) two\n\n  \n\n    indented code\n    more\n\nend *em* **strong** `code`",
  ].join("\n");
  // A fixed pseudo-random sequence of chunk sizes (1..60), so a failure repeats.
  let seed = 7;
  const randomSizes = Array.from({ length: 97 }, () => ((seed = (seed * 48271) % 2147483647) % 60) + 1);
  for (const text of [HOSTILE, tricky, nested]) {
    for (const sizes of [[1], [3, 17, 2], [40], [250], randomSizes]) streamMatchesWhole(text, sizes);
  }
  for (const sizes of [[23], randomSizes]) streamMatchesWhole(replyText(6000), sizes);
});

test("a stream given a text that does not extend the last one, or with reference links, draws it whole", () => {
  const win = new JSDOM("").window as unknown as Window;
  const markdown = createMarkdown(win);
  const element = win.document.createElement("div");
  const stream = markdown.stream(element);
  const check = (text: string): void => {
    stream.update(text);
    assert.equal(element.innerHTML, html(markdown.whole(text), win), text);
  };
  check("first paragraph\n\nsecond");
  check("rewritten paragraph\n\nnow");
  check("rewritten paragraph\n\nnow [the docs][d] here\n\n");
  check("rewritten paragraph\n\nnow [the docs][d] here\n\n[d]: https://example.com/docs");
  check("rewritten paragraph\n\nnow [the docs][d] here\n\n[d]: https://example.com/docs\n\nmore");
  check("line one\r\nline two\r\n\r\nnext");
});
