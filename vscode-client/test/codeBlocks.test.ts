/** Code blocks in replies: a language label and Copy / Insert at cursor / Save as new file, also while streaming. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import type { ChatViewState, WebviewToHost } from "../src/shared/chatProtocol";
import { startChat } from "../src/webview/chatApp";

const base: ChatViewState = { messages: [], queue: { steering: [], followUp: [] }, running: false, hasMore: false, approvals: [] };

function open() {
  const dom = new JSDOM("<!DOCTYPE html><body></body>");
  const posted: WebviewToHost[] = [];
  const app = startChat(dom.window.document, dom.window as unknown as Window, { postMessage: (m) => posted.push(m), getState: () => undefined, setState: () => undefined });
  return { doc: dom.window.document, app, posted };
}

const named = (root: ParentNode, name: string): HTMLButtonElement => {
  const found = Array.from(root.querySelectorAll("button")).find((b) => b.getAttribute("aria-label") === name);
  assert.ok(found, name);
  return found;
};

test("a code block has its language and Copy / Insert at cursor / Save as new file, which ask the host", () => {
  const { doc, app, posted } = open();
  const text = "Try:\n\n```python\nprint('<b>hi</b>')\n```\n\n```\nplain\n```\n\nThen `a-very-long-inline-path/that/wraps`.";
  app.receive({ type: "state", state: { ...base, messages: [{ key: "a1", kind: "assistant", text }] } });
  const [python, plain] = Array.from(doc.querySelectorAll<HTMLElement>(".code-block"));
  assert.equal(python.querySelector(".code-lang")?.textContent, "python");
  assert.equal(plain.querySelector(".code-lang")?.textContent, "text");
  assert.deepEqual(
    Array.from(python.querySelectorAll("button")).map((b) => b.getAttribute("aria-label")),
    ["Copy", "Insert at cursor", "Save as new file"],
  );
  named(python, "Copy").click();
  named(python, "Insert at cursor").querySelector("span")?.dispatchEvent(new doc.defaultView!.MouseEvent("click", { bubbles: true }));
  named(plain, "Save as new file").click();
  assert.deepEqual(posted.slice(-3), [
    { type: "codeAction", action: "copy", code: "print('<b>hi</b>')\n", language: "python" },
    { type: "codeAction", action: "insert", code: "print('<b>hi</b>')\n", language: "python" },
    { type: "codeAction", action: "newFile", code: "plain\n", language: "" },
  ]);
});

test("a streamed reply's code block gets its actions as it arrives", () => {
  const { doc, app, posted } = open();
  const key = "assistant:1";
  app.receive({ type: "state", state: { ...base, running: true, messages: [{ key, kind: "assistant", text: "```ts\nconst a" }] } });
  app.receive({ type: "message", message: { key, kind: "assistant", text: "```ts\nconst a = 1;\n```\n\nDone." } });
  const block = doc.querySelector<HTMLElement>(".code-block");
  assert.equal(doc.querySelectorAll(".code-block").length, 1);
  assert.equal(block?.querySelector(".code-lang")?.textContent, "ts");
  assert.ok(block);
  named(block, "Copy").click();
  assert.deepEqual(posted.at(-1), { type: "codeAction", action: "copy", code: "const a = 1;\n", language: "ts" });
});
