/** The chat's surface: scrolling (own send, New messages, approvals), one tab stop per message, the empty state. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import type { ChatMessage } from "../src/shared/chatModel";
import type { ChatViewState, WebviewToHost } from "../src/shared/chatProtocol";
import { startChat } from "../src/webview/chatApp";

const base: ChatViewState = { messages: [], queue: { steering: [], followUp: [] }, running: false, hasMore: false, approvals: [] };

function open() {
  const dom = new JSDOM("<!DOCTYPE html><body></body>");
  const doc = dom.window.document;
  // jsdom has no layout: remember which elements were scrolled into view.
  const scrolledIntoView: Element[] = [];
  (dom.window.HTMLElement.prototype as unknown as { scrollIntoView: () => void }).scrollIntoView = function (this: Element) {
    scrolledIntoView.push(this);
  };
  const posted: WebviewToHost[] = [];
  const app = startChat(doc, dom.window as unknown as Window, { postMessage: (m) => posted.push(m), getState: () => undefined, setState: () => undefined });
  const log = doc.getElementById("log") as HTMLElement;
  // Each article is 100 px tall in a 50 px high view.
  let top = 0;
  const height = (): number => log.querySelectorAll("article").length * 100;
  Object.defineProperty(log, "scrollHeight", { get: height });
  Object.defineProperty(log, "clientHeight", { get: () => 50 });
  Object.defineProperty(log, "scrollTop", { get: () => top, set: (value: number) => (top = Math.max(0, Math.min(value, height() - 50))) });
  const input = doc.querySelector("textarea") as HTMLTextAreaElement;
  const send = (text: string): void => {
    input.value = text;
    input.dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
  };
  const newMessages = (): HTMLButtonElement => {
    const found = Array.from(doc.querySelectorAll("button")).find((b) => b.textContent === "New messages");
    assert.ok(found, "the New messages button exists");
    return found;
  };
  return {
    dom,
    doc,
    app,
    log,
    send,
    newMessages,
    scrolledIntoView,
    posted,
    top: () => top,
    scrollTo: (value: number) => {
      log.scrollTop = value;
      log.dispatchEvent(new dom.window.Event("scroll"));
    },
  };
}

const users = (count: number): ChatMessage[] => Array.from({ length: count }, (_, i) => ({ key: `u${i}`, kind: "user" as const, text: `m${i}` }));

test("scrolled up, new content shows New messages instead of moving the view; the button goes to the bottom", () => {
  const chat = open();
  chat.app.receive({ type: "state", state: { ...base, running: true, messages: users(3) } });
  assert.equal(chat.top(), 250);
  assert.equal(chat.newMessages().hidden, true, "at the bottom: no button");
  chat.scrollTo(40);
  chat.app.receive({ type: "state", state: { ...base, running: true, messages: users(4) } });
  assert.equal(chat.top(), 40, "the reader's place is kept");
  assert.equal(chat.newMessages().hidden, false);
  chat.newMessages().click();
  assert.equal(chat.top(), 350);
  assert.equal(chat.newMessages().hidden, true);
  chat.scrollTo(40);
  chat.app.receive({ type: "state", state: { ...base, running: true, messages: users(5) } });
  assert.equal(chat.newMessages().hidden, false);
  chat.scrollTo(450); // scrolling down by hand hides it too
  assert.equal(chat.newMessages().hidden, true);
});

test("your own send jumps to the bottom even when scrolled up, and the next draw follows", () => {
  const chat = open();
  chat.app.receive({ type: "state", state: { ...base, messages: users(4) } });
  chat.scrollTo(10);
  chat.send("look at this");
  assert.deepEqual(chat.posted.at(-1), { type: "send", text: "look at this", mode: "steer" });
  assert.equal(chat.top(), 350);
  chat.app.receive({ type: "state", state: { ...base, running: true, messages: users(5) } });
  assert.equal(chat.top(), 450, "the new message is in view");
  assert.equal(chat.newMessages().hidden, true);
});

test("an approval card brings itself into view once, when it appears", () => {
  const chat = open();
  chat.app.receive({ type: "state", state: { ...base, running: true, messages: users(6) } });
  chat.scrollTo(0);
  const card = { toolCallId: "t1", title: "pi wants to run a command", detail: "rm -rf build", diffable: false };
  chat.app.receive({ type: "state", state: { ...base, running: true, messages: users(6), approvals: [card] } });
  const block = chat.doc.querySelector("[aria-label='approval request']");
  assert.deepEqual(chat.scrolledIntoView, [block]);
  chat.app.receive({ type: "state", state: { ...base, running: true, messages: users(7), approvals: [card] } });
  assert.equal(chat.scrolledIntoView.length, 1, "not again on every redraw");
});

test("the message list is one tab stop: the active message only, arrows move between messages", () => {
  const chat = open();
  const messages: ChatMessage[] = [...users(3), { key: "a1", kind: "assistant", text: "done" }];
  chat.app.receive({ type: "state", state: { ...base, messages } });
  const articles = Array.from(chat.log.querySelectorAll("article"));
  const tabbable = (): Element[] =>
    Array.from(chat.log.querySelectorAll<HTMLElement>("article, button, summary, input, a[href]")).filter((el) => el.tabIndex >= 0);
  // The newest message is the tab stop, with its own actions; no other message's buttons are.
  assert.deepEqual(tabbable()[0], articles[3]);
  assert.ok(tabbable().slice(1).every((el) => articles[3].contains(el)));
  assert.ok(tabbable().length <= 1 + 2, `tab stops: ${tabbable().length}`);
  articles[3].focus();
  articles[3].dispatchEvent(new chat.dom.window.KeyboardEvent("keydown", { key: "ArrowUp", bubbles: true }));
  assert.equal(chat.doc.activeElement, articles[2]);
  assert.equal(articles[2].tabIndex, 0);
  assert.equal(articles[3].tabIndex, -1);
  const buttons = Array.from(articles[2].querySelectorAll("button"));
  assert.ok(buttons.length > 0 && buttons.every((b) => b.tabIndex === 0), "the active message's actions are reachable");
  assert.ok(Array.from(articles[3].querySelectorAll("button")).every((b) => b.tabIndex === -1));
  articles[2].dispatchEvent(new chat.dom.window.KeyboardEvent("keydown", { key: "Home", bubbles: true }));
  assert.equal(chat.doc.activeElement, articles[0]);
  // A redraw keeps the reader's message as the tab stop.
  chat.app.receive({ type: "state", state: { ...base, messages: [...messages, { key: "u9", kind: "user", text: "more" }] } });
  assert.equal(articles[0].tabIndex, 0);
  assert.equal(chat.log.querySelectorAll("article")[4].tabIndex, -1);
});

test("an empty chat says what to do, and with no key how to add one", () => {
  const chat = open();
  chat.app.receive({ type: "state", state: base });
  const empty = (): HTMLElement | null => chat.doc.querySelector("[aria-label='getting started']");
  assert.match(empty()?.textContent ?? "", /Type your request in the box/);
  assert.match(empty()?.textContent ?? "", /@ mentions a file/);
  chat.app.receive({ type: "state", state: { ...base, notice: "noApiKey" } });
  assert.match(empty()?.textContent ?? "", /API key first: run “pi: Set API Key…”/);
  chat.app.receive({ type: "state", state: { ...base, messages: users(1) } });
  assert.equal(empty(), null);
});

test("controls carry the theme's kinds: Send and Allow primary, Stop and Deny secondary", () => {
  const chat = open();
  const card = { toolCallId: "t1", title: "pi wants to edit a.py", detail: "-a\n+b", diffable: true };
  chat.app.receive({ type: "state", state: { ...base, running: true, approvals: [card] } });
  const named = (name: string): HTMLButtonElement => {
    const found = Array.from(chat.doc.querySelectorAll("button")).find((b) => b.textContent === name);
    assert.ok(found, name);
    return found;
  };
  for (const name of ["Send", "Allow"]) assert.equal(named(name).classList.contains("secondary"), false, `${name} is primary`);
  for (const name of ["Stop", "Deny", "Allow always", "Open diff"]) assert.equal(named(name).classList.contains("secondary"), true, `${name} is secondary`);
});

test("the no-key notice offers pi: Set API Key… (no restart) and names the server's real agent dir", () => {
  const chat = open();
  chat.app.receive({ type: "state", state: { ...base, notice: "noApiKey", agentDir: "/home/me/custom-agent/" } });
  const notice = chat.doc.querySelector("[aria-label='no API key']")?.textContent ?? "";
  assert.match(notice, /Run “pi: Set API Key…”: VS Code keeps the key in its secret storage .* no restart needed/);
  assert.match(notice, /\/home\/me\/custom-agent\/auth\.json holds a key/);
  assert.doesNotMatch(notice, /~\/\.pi\/agent/);
});
