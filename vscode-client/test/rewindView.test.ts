/** The chat webview's rewind and review parts in jsdom (startChat builds the page the webview runs). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import type { ChatMessage } from "../src/shared/chatModel";
import type { ChatViewState, WebviewToHost } from "../src/shared/chatProtocol";
import { startChat } from "../src/webview/chatApp";

function open() {
  const dom = new JSDOM("<!DOCTYPE html><body></body>");
  const posted: WebviewToHost[] = [];
  const app = startChat(dom.window.document, dom.window as unknown as Window, {
    postMessage: (message) => posted.push(message),
    getState: () => undefined,
    setState: () => undefined,
  });
  return { app, doc: dom.window.document, posted };
}

const base: ChatViewState = { messages: [], queue: { steering: [], followUp: [] }, running: false, hasMore: false, approvals: [] };
const user: ChatMessage = { key: "u1", kind: "user", text: "write a.txt" };
const reply: ChatMessage = { key: "a1", kind: "assistant", text: "Done." };
/** Buttons by accessible name: an icon button's aria-label, else its text. */
const buttons = (within: ParentNode, name: string) =>
  Array.from(within.querySelectorAll("button")).filter((b) => (b.getAttribute("aria-label") ?? b.textContent?.trim()) === name);

test("messages with a workspace state offer Rewind code to here; the restore line offers Undo restore", () => {
  const { app, doc, posted } = open();
  app.receive({ type: "state", state: { ...base, messages: [user, reply] } });
  const articles = Array.from(doc.querySelectorAll("article"));
  assert.equal(articles.length, 2);
  const entryIds = articles.map((a) => a.dataset.entryId);
  assert.equal(buttons(doc, "Rewind code to here").length, 0);
  app.receive({ type: "state", state: { ...base, messages: [user, reply], rewindable: [entryIds[1] ?? ""] } });
  const [rewind] = buttons(articles[1], "Rewind code to here");
  assert.ok(rewind, "the reply offers the rewind");
  // An icon button like the message's other actions, in their bar: named, with a tooltip, no text.
  assert.ok(rewind.classList.contains("icon-button"));
  assert.equal(rewind.title, "Rewind code to here");
  assert.equal(rewind.textContent, "");
  assert.ok(rewind.querySelector(".codicon.codicon-discard[aria-hidden=true]"));
  assert.equal(rewind.parentElement, articles[1].querySelector(":scope > [role=group][aria-label='message actions']"));
  assert.ok(buttons(rewind.parentElement as HTMLElement, "Branch from here")[0], "beside Branch from here");
  assert.equal(buttons(articles[0], "Rewind code to here").length, 0);
  // The same article is kept (a redraw adds the button, no new DOM), and the button is not doubled.
  app.receive({ type: "state", state: { ...base, messages: [user, reply], rewindable: [entryIds[1] ?? ""] } });
  assert.equal(doc.querySelectorAll("article")[1], articles[1]);
  assert.equal(buttons(doc, "Rewind code to here").length, 1);
  rewind.click();
  assert.deepEqual(posted.at(-1), { type: "action", action: "rewindCode", entryId: entryIds[1], text: "" });

  app.receive({ type: "state", state: { ...base, messages: [user, reply], restore: { text: "Rewound the code: restored 1 file: a.txt (deleted).", undoId: "u7" } } });
  const line = doc.querySelector("[aria-label='restore result']") as HTMLElement;
  assert.match(line.textContent ?? "", /restored 1 file: a\.txt \(deleted\)/);
  assert.equal(line.getAttribute("role"), "status");
  buttons(line, "Undo restore")[0].click();
  assert.deepEqual(posted.at(-1), { type: "undoRestore", undoId: "u7" });
  assert.equal(buttons(doc, "Rewind code to here").length, 0, "no longer rewindable: the button goes");
});

test("an approval under review has a checkbox per change and the count, kept in the same card", () => {
  const { app, doc, posted } = open();
  const card = (accepted: boolean[], summary: string, edited = false) => ({
    toolCallId: "t1",
    title: "pi wants to edit /w/notes.txt",
    detail: "@@ …",
    diffable: true,
    review: { hunks: accepted.map((ok, index) => ({ index, header: `@@ -${index * 10 + 1},7 +${index * 10 + 1},7 @@`, accepted: ok })), summary, edited },
  });
  app.receive({ type: "state", state: { ...base, approvals: [card([true, true, true], "3 of 3 changes accepted")] } });
  const block = doc.querySelector("[aria-label='approval request']") as HTMLElement;
  const boxes = () => Array.from(block.querySelectorAll<HTMLInputElement>("input[type=checkbox]"));
  assert.equal(boxes().length, 3);
  assert.ok(boxes().every((box) => box.checked));
  assert.match(block.textContent ?? "", /3 of 3 changes accepted/);
  assert.match(boxes()[1].parentElement?.textContent ?? "", /Accept change 2: @@ -11,7 \+11,7 @@/);
  boxes()[1].checked = false;
  boxes()[1].dispatchEvent(new (doc.defaultView as Window & typeof globalThis).Event("change"));
  assert.deepEqual(posted.at(-1), { type: "hunk", toolCallId: "t1", index: 1, accepted: false });
  app.receive({ type: "state", state: { ...base, approvals: [card([true, false, true], "2 of 3 changes accepted")] } });
  assert.equal(doc.querySelector("[aria-label='approval request']"), block);
  assert.deepEqual(boxes().map((box) => box.checked), [true, false, true]);
  assert.match(block.textContent ?? "", /2 of 3 changes accepted/);
  // Edited by hand: the checkboxes no longer apply.
  app.receive({ type: "state", state: { ...base, approvals: [card([true, false, true], "The proposed text was edited: your version will be written.", true)] } });
  assert.ok(boxes().every((box) => box.disabled));
});
