/** The webview under a fast stream (jsdom with animation frames): states posted per delta are drawn once per frame. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import type { ChatViewState, HostToWebview } from "../src/shared/chatProtocol";
import { startChat } from "../src/webview/chatApp";

const base: ChatViewState = { messages: [], queue: { steering: [], followUp: [] }, running: true, hasMore: false, approvals: [] };

function reply(text: string): ChatViewState {
  return { ...base, messages: [{ key: "u", kind: "user", text: "go" }, { key: "assistant:1", kind: "assistant", text }] };
}

test("states posted faster than frames are drawn once, from the latest; other messages keep their order", async () => {
  const dom = new JSDOM("<!DOCTYPE html><body></body>", { pretendToBeVisual: true });
  const win = dom.window;
  startChat(win.document, win as unknown as Window, { postMessage: () => undefined, getState: () => undefined, setState: () => undefined });
  const post = (message: HostToWebview) => win.dispatchEvent(new win.MessageEvent("message", { data: message }));
  const replyText = () => win.document.querySelector("article[aria-label='assistant message']")?.textContent ?? null;
  const nextFrame = () => new Promise((resolve) => win.requestAnimationFrame(resolve));

  let draws = 0;
  const log = win.document.querySelector("[aria-live]") ?? win.document.body;
  new win.MutationObserver(() => (draws += 1)).observe(log, { childList: true });

  for (const text of ["He", "Hello", "Hello, wor", "Hello, world"]) post({ type: "state", state: reply(text) });
  assert.equal(replyText(), null, "nothing drawn before the frame");
  await nextFrame();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.match(replyText() ?? "", /Hello, world/);
  assert.equal(draws, 1);

  // A state then a reveal: the reveal finds the article the state draws.
  post({ type: "state", state: { ...reply("done"), messages: [{ key: "u", kind: "user", text: "go" }, { key: "e9", kind: "assistant", text: "done" }] } });
  post({ type: "reveal", entryId: "e9" });
  const target = win.document.querySelector("article[data-entry-id='e9']");
  assert.ok(target, "the pending state was drawn before the reveal");
  assert.equal(win.document.activeElement, target);
  dom.window.close();
});
