import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import type { ChatViewState, WebviewToHost } from "../src/shared/chatProtocol";
import { startChat, type SavedState } from "../src/webview/chatApp";

function open(saved?: SavedState) {
  const dom = new JSDOM("<!DOCTYPE html><body></body>");
  const posted: WebviewToHost[] = [];
  let state: SavedState | undefined = saved;
  const app = startChat(dom.window.document, dom.window as unknown as Window, {
    postMessage: (message) => posted.push(message),
    getState: () => state,
    setState: (next) => (state = next),
  });
  const doc = dom.window.document;
  const input = doc.querySelector("textarea[aria-label='Message pi']") as HTMLTextAreaElement;
  const press = (key: string, init: { altKey?: boolean; shiftKey?: boolean } = {}): void => {
    input.dispatchEvent(new dom.window.KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init }));
  };
  const type = (text: string): void => {
    input.value = text;
    input.setSelectionRange(text.length, text.length);
    input.dispatchEvent(new dom.window.Event("input", { bubbles: true }));
  };
  const button = (name: string, within: ParentNode = doc): HTMLButtonElement => {
    const found = Array.from(within.querySelectorAll("button")).find((b) => b.textContent === name);
    assert.ok(found, `button ${name}`);
    return found;
  };
  return { app, dom, doc, input, press, type, button, posted, saved: () => state };
}

const base: ChatViewState = { messages: [], queue: { steering: [], followUp: [] }, running: false, hasMore: false, approvals: [] };

test("the page says ready, Enter sends (steer), Alt+Enter queues a follow-up, Shift+Enter does not send", () => {
  const { input, press, type, posted, saved, button } = open();
  assert.deepEqual(posted, [{ type: "ready" }]);
  type("first");
  press("Enter", { shiftKey: true });
  assert.equal(posted.length, 1);
  press("Enter");
  type("later");
  press("Enter", { altKey: true });
  assert.deepEqual(posted.slice(1), [
    { type: "send", text: "first", mode: "steer" },
    { type: "send", text: "later", mode: "followUp" },
  ]);
  assert.equal(input.value, "");
  assert.deepEqual(saved(), { draft: "" });
  button("Stop").click();
  assert.deepEqual(posted.at(-1), { type: "stop" });
});

test("the draft survives a reload (webview state) and restored texts go back into the box", () => {
  const { input, type, app, saved } = open({ draft: "half a thought" });
  assert.equal(input.value, "half a thought");
  type("typed");
  assert.deepEqual(saved(), { draft: "typed" });
  app.receive({ type: "draft", text: "queued one\n\nqueued two" });
  assert.equal(input.value, "queued one\n\nqueued two\ntyped");
});

test("queued messages are shown as queued, with Restore to input", () => {
  const { doc, app, posted, button } = open();
  app.receive({ type: "state", state: { ...base, running: true, queue: { steering: ["steer me"], followUp: ["after"] } } });
  const queue = doc.querySelector("[aria-label='queued messages']") as HTMLElement;
  assert.match(queue.textContent ?? "", /queued \(steering\) steer me/);
  assert.match(queue.textContent ?? "", /queued \(follow-up\) after/);
  button("Restore to input", queue).click();
  assert.deepEqual(posted.at(-1), { type: "restoreQueue" });
  app.receive({ type: "state", state: base });
  assert.equal(doc.querySelector("[aria-label='queued messages']"), null);
});

test("an approval card offers Open diff, Allow, Allow always and Deny with a reason that survives redraws", () => {
  const { doc, app, posted, button } = open();
  const card = { toolCallId: "t1", title: "pi wants to edit a.py", detail: "-a\n+<b>b</b>", diffable: true };
  app.receive({ type: "state", state: { ...base, running: true, approvals: [card] } });
  const block = doc.querySelector("[aria-label='approval request']") as HTMLElement;
  assert.equal(block.querySelector("b"), null);
  assert.match(block.textContent ?? "", /\+<b>b<\/b>/);
  button("Open diff", block).click();
  button("Allow", block).click();
  button("Allow always", block).click();
  const reason = block.querySelector("input[aria-label='Reason for denying (optional)']") as HTMLInputElement;
  reason.value = "wrong file";
  app.receive({ type: "state", state: { ...base, running: true, approvals: [card] } });
  button("Deny", doc.querySelector("[aria-label='approval request']") as HTMLElement).click();
  assert.deepEqual(posted.slice(1), [
    { type: "openDiff", toolCallId: "t1" },
    { type: "approval", toolCallId: "t1", decision: "allow" },
    { type: "approval", toolCallId: "t1", decision: "allowAlways" },
    { type: "approval", toolCallId: "t1", decision: "deny", reason: "wrong file" },
  ]);
});

test("tool calls are compact cards: reading tools closed, bash open with live output, edits with Open diff", () => {
  const { doc, app, posted, button } = open();
  const tool = (callId: string, name: string, text: string, output: string, running = false) => ({
    key: `tool:${callId}`,
    kind: "tool" as const,
    text,
    tool: { callId, name, args: {}, output, running },
  });
  app.receive({
    type: "state",
    state: {
      ...base,
      messages: [
        tool("r", "read", "read a.py", "print(1)"),
        tool("b", "bash", "$ yes", Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n"), true),
        tool("e", "edit", "edit a.py", "Successfully replaced 1 block(s) in a.py."),
      ],
    },
  });
  const [read, bash, edit] = Array.from(doc.querySelectorAll("article[aria-label='tool call']"));
  assert.equal(read.querySelector("details")?.open, false);
  assert.equal(bash.querySelector("details")?.open, true);
  assert.equal(bash.querySelector("summary")?.textContent, "$ yes (running…)");
  assert.match(bash.querySelector("pre")?.textContent ?? "", /^line 18\n[\s\S]*line 29$/);
  button("Open diff", edit).click();
  assert.deepEqual(posted.at(-1), { type: "openDiff", toolCallId: "e" });
});

test("@ and / open suggestions from the host; Enter picks one instead of sending", () => {
  const { doc, input, app, type, press, posted } = open();
  type("see @ma");
  assert.deepEqual(posted.at(-1), { type: "complete", kind: "mention", query: "ma" });
  app.receive({ type: "completions", kind: "mention", query: "ma", items: [{ value: "main.py", detail: "" }, { value: "my file.md", detail: "" }] });
  const list = doc.querySelector("[role=listbox][aria-label='Suggestions']") as HTMLElement;
  assert.equal(list.hidden, false);
  press("ArrowDown");
  assert.equal(list.querySelectorAll("[aria-selected=true]")[0].textContent, "my file.md");
  press("Enter");
  assert.equal(input.value, 'see @"my file.md" ');
  assert.equal(list.hidden, true);
  assert.equal(posted.filter((m) => m.type === "send").length, 0);
  type("/rev");
  app.receive({ type: "completions", kind: "command", query: "stale", items: [{ value: "other", detail: "" }] });
  assert.equal(list.hidden, true);
  app.receive({ type: "completions", kind: "command", query: "rev", items: [{ value: "review", detail: "Review the diff" }] });
  assert.equal(list.textContent, "review — Review the diff");
  press("Tab");
  assert.equal(input.value, "/review ");
});

test("model and thinking pickers show the current choice and ask the host to change it", () => {
  const { doc, app, posted } = open();
  app.receive({
    type: "models",
    models: [{ id: "m1", name: "Model One", reasoning: true }, { id: "m2", name: "Plain", reasoning: false }],
    modelId: "m1",
    thinkingLevel: "high",
  });
  const model = doc.querySelector("select[aria-label='Model']") as HTMLSelectElement;
  const thinking = doc.querySelector("select[aria-label='Thinking level']") as HTMLSelectElement;
  assert.equal(model.value, "m1");
  assert.equal(thinking.value, "high");
  thinking.value = "low";
  thinking.dispatchEvent(new doc.defaultView!.Event("change"));
  model.value = "m2";
  model.dispatchEvent(new doc.defaultView!.Event("change"));
  assert.deepEqual(posted.slice(-2), [{ type: "setModel", thinkingLevel: "low" }, { type: "setModel", modelId: "m2" }]);
  app.receive({ type: "models", models: [{ id: "m2", name: "Plain", reasoning: false }], modelId: "m2", thinkingLevel: "off" });
  assert.deepEqual(Array.from(thinking.options).map((o) => o.value), ["off"]);
});

test("without an API key the chat says how to set one and that compaction works offline", () => {
  const { doc, app } = open();
  app.receive({ type: "state", state: { ...base, notice: "noApiKey" } });
  const notice = doc.querySelector("[aria-label='no API key']")?.textContent ?? "";
  assert.match(notice, /ANTHROPIC_API_KEY/);
  assert.match(notice, /auth\.json/);
  assert.match(notice, /compaction/i);
});

test("older messages load from the top; an unchanged message keeps its article across redraws", () => {
  const { doc, app, posted, button } = open();
  const messages = [{ key: "u1", kind: "user" as const, text: "hi" }];
  app.receive({ type: "state", state: { ...base, messages, hasMore: true } });
  const first = doc.querySelector("article");
  button("Load older messages").click();
  assert.deepEqual(posted.at(-1), { type: "loadOlder" });
  button("Load older messages").click();
  assert.equal(posted.filter((m) => m.type === "loadOlder").length, 1, "one page at a time");
  app.receive({ type: "state", state: { ...base, messages: [{ key: "u0", kind: "user", text: "older" }, ...messages] } });
  assert.equal(doc.querySelectorAll("article")[1], first);
  assert.equal(doc.querySelector("button.older"), null);
});

test("Open in Chat focuses the message's article", () => {
  const { doc, app } = open();
  app.receive({ type: "state", state: { ...base, messages: [{ key: "u1", kind: "user", text: "hi" }, { key: "a1", kind: "assistant", text: "yo" }] } });
  app.receive({ type: "reveal", entryId: "a1" });
  assert.equal(doc.activeElement?.getAttribute("aria-label"), "assistant message");
  assert.equal((doc.activeElement as HTMLElement).dataset.entryId, "a1");
});

test("the view follows the stream only while it is at the bottom", () => {
  const { doc, app } = open();
  const log = doc.getElementById("log") as HTMLElement;
  // jsdom has no layout: each article is 100 px tall in a 50 px high view.
  let top = 0;
  const height = (): number => log.querySelectorAll("article").length * 100;
  Object.defineProperty(log, "scrollHeight", { get: height });
  Object.defineProperty(log, "clientHeight", { get: () => 50 });
  Object.defineProperty(log, "scrollTop", { get: () => top, set: (value: number) => (top = Math.max(0, Math.min(value, height() - 50))) });
  const messages = (count: number) => Array.from({ length: count }, (_, i) => ({ key: `u${i}`, kind: "user" as const, text: `m${i}` }));
  app.receive({ type: "state", state: { ...base, running: true, messages: messages(1) } });
  assert.equal(top, 50);
  app.receive({ type: "state", state: { ...base, running: true, messages: messages(2) } });
  assert.equal(top, 150, "at the bottom: follows");
  top = 60; // the reader scrolls up
  app.receive({ type: "state", state: { ...base, running: true, messages: messages(3) } });
  assert.equal(top, 60, "scrolled up: stays");
  assert.equal((doc.querySelector(".working") as HTMLElement).hidden, false);
  app.receive({ type: "state", state: { ...base, messages: messages(3) } });
  assert.equal((doc.querySelector(".working") as HTMLElement).hidden, true);
});

test("pasted and dropped images are attached to the next message; other files are refused with a word", async () => {
  const { dom, doc, input, type, press, posted, button, app } = open();
  const paste = new dom.window.Event("paste", { bubbles: true, cancelable: true });
  const png = new dom.window.File([new Uint8Array([137, 80, 78, 71])], "shot.png", { type: "image/png" });
  Object.defineProperty(paste, "clipboardData", { value: { files: [png] } });
  input.dispatchEvent(paste);
  assert.equal(paste.defaultPrevented, true);
  const list = doc.querySelector("[aria-label='Attached images']") as HTMLElement;
  for (let i = 0; i < 100 && list.children.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.match(list.textContent ?? "", /shot\.png/);
  const drop = new dom.window.Event("drop", { bubbles: true, cancelable: true });
  const text = new dom.window.File(["x"], "notes.txt", { type: "text/plain" });
  Object.defineProperty(drop, "dataTransfer", { value: { files: [text], types: ["Files"] } });
  doc.body.dispatchEvent(drop);
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.match(doc.querySelector("[role=status]")?.textContent ?? "", /notes\.txt is not a PNG, JPEG, GIF or WebP image/);
  assert.equal(list.children.length, 1);
  type("what is this?");
  press("Enter");
  assert.deepEqual(posted.at(-1), { type: "send", text: "what is this?", mode: "steer", images: [{ data: "iVBORw==", mimeType: "image/png" }] });
  assert.equal(list.children.length, 0);
  // A prompt that failed comes back with its images; one can be removed again.
  app.receive({ type: "draft", text: "what is this?", images: [{ data: "iVBORw==", mimeType: "image/png" }] });
  assert.equal(list.children.length, 1);
  button("×", list).click();
  assert.equal(list.children.length, 0);
});

test("a one-message update redraws that article only, and a new one is appended", () => {
  const { doc, app } = open();
  app.receive({ type: "state", state: { ...base, running: true, messages: [{ key: "u1", kind: "user", text: "hi" }] } });
  const userArticle = doc.querySelector("article");
  app.receive({ type: "message", message: { key: "assistant:1", kind: "assistant", text: "Hel" } });
  app.receive({ type: "message", message: { key: "assistant:1", kind: "assistant", text: "Hello" } });
  const articles = Array.from(doc.querySelectorAll("article"));
  assert.equal(articles.length, 2);
  assert.equal(articles[0], userArticle);
  assert.equal(articles[1].textContent?.trim(), "Hello");
});

test("posted states and one-message updates arriving within a frame are drawn once, in order", async () => {
  const dom = new JSDOM("<!DOCTYPE html><body></body>", { pretendToBeVisual: true });
  const win = dom.window;
  startChat(win.document, win as unknown as Window, { postMessage: () => undefined, getState: () => undefined, setState: () => undefined });
  const deliver = (message: unknown) => win.dispatchEvent(new win.MessageEvent("message", { data: message }));
  let draws = 0;
  new win.MutationObserver(() => (draws += 1)).observe(win.document.getElementById("log")!, { childList: true });
  deliver({ type: "state", state: { ...base, running: true, messages: [{ key: "user:0", kind: "user", text: "go" }] } });
  for (const text of ["He", "Hell", "Hello"]) deliver({ type: "message", message: { key: "assistant:1", kind: "assistant", text } });
  assert.equal(win.document.querySelectorAll("article").length, 0, "nothing drawn before the frame");
  await new Promise((resolve) => win.requestAnimationFrame(resolve));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(draws, 1);
  const articles = Array.from(win.document.querySelectorAll("article"));
  assert.deepEqual(articles.map((a) => a.textContent?.trim()), ["go", "Hello"]);
  win.close();
});

test("a compaction shows a status row while it runs, its error when it fails, and its card after", () => {
  const { doc, app } = open();
  const row = () => doc.querySelector("[aria-label='compaction status']");
  app.receive({ type: "state", state: { ...base, compaction: { reason: "threshold", state: "running" } } });
  assert.equal(row()?.getAttribute("role"), "status");
  assert.match(row()?.textContent ?? "", /^Auto-compacting/);
  app.receive({ type: "state", state: { ...base, compaction: { reason: "threshold", state: "failed", error: "Auto-compaction failed: <b>boom</b>" } } });
  assert.equal(row()?.getAttribute("role"), "alert");
  assert.equal(row()?.textContent, "Auto-compaction failed: <b>boom</b>");
  assert.equal(doc.querySelector("b"), null);
  const card = { key: "c1", kind: "compaction" as const, text: "<img src=x onerror=alert(1)>done", tokensBefore: 5000 };
  app.receive({ type: "state", state: { ...base, messages: [card] } });
  assert.equal(row(), null);
  const article = doc.querySelector("article[aria-label='compaction summary']") as HTMLElement;
  assert.equal(article.querySelector("summary")?.textContent, "Compacted — 5,000 tokens summarised");
  assert.equal(article.querySelector("img"), null);
});

test("an automatic retry is one status row saying what failed, when and which attempt, with Stop", () => {
  const { app, doc, button, posted } = open();
  const RATE = "429 rate_limit_error";
  app.receive({ type: "state", state: { ...base, running: true, retry: { attempt: 2, maxAttempts: 3, delayMs: 8000, errorMessage: RATE } } });
  const rows = doc.querySelectorAll("[aria-label='retry status']");
  assert.equal(rows.length, 1);
  assert.equal(rows[0].getAttribute("role"), "status");
  assert.equal(rows[0].querySelector(".retry-line")?.textContent, "Rate limited — retrying in 8 s (2/3)");
  button("Stop", rows[0]).click();
  assert.deepEqual(posted.at(-1), { type: "stop" });
  app.receive({ type: "state", state: { ...base, running: true, retry: { attempt: 2, maxAttempts: 3, delayMs: 8000, errorMessage: "529 overloaded", started: true } } });
  assert.equal(doc.querySelector(".retry-line")?.textContent, "Model overloaded — retrying (2/3)…");
  app.receive({ type: "state", state: { ...base, running: true, retry: { attempt: 1, errorMessage: "500 boom" } } });
  assert.equal(doc.querySelector(".retry-line")?.textContent, "Model error — retrying…");
  app.receive({ type: "state", state: base });
  assert.equal(doc.querySelector("[aria-label='retry status']"), null);
});

test("Retry on a failed reply asks the host to send its prompt again", () => {
  const { app, doc, button, posted } = open();
  app.receive({
    type: "state",
    state: {
      ...base,
      messages: [
        { key: "u1", kind: "user", text: "hello" },
        { key: "a1", kind: "assistant", text: "", stopReason: "error", errorMessage: "500 boom", attempts: 4 },
      ],
    },
  });
  const alert = doc.querySelector("article [role=alert]");
  assert.ok(alert);
  button("Retry", alert).click();
  assert.deepEqual(posted.at(-1), { type: "retry", key: "a1" });
});

test("Edit and resend opens an editor in the message itself: Send posts the edited text, a redraw keeps what is typed", () => {
  const { doc, dom, app, posted, button } = open();
  const said = { key: "u1", kind: "user" as const, text: "Say hello\nin two lines" };
  app.receive({ type: "state", state: { ...base, messages: [said] } });
  const article = doc.querySelector("article[aria-label='user message']") as HTMLElement;
  (article.querySelector("button[aria-label='Edit and resend']") as HTMLButtonElement).click();
  assert.equal(posted.length, 1); // nothing asked of the host yet: no input box, the editing is here
  const editor = article.querySelector("textarea[aria-label='Edit message']") as HTMLTextAreaElement;
  assert.equal(editor.value, "Say hello\nin two lines");
  assert.ok(article.classList.contains("editing"));
  assert.equal(doc.activeElement, editor);
  editor.value = "Say hello again\nin three\nlines";
  // Shift+Enter is a new line, and the list's arrow keys stay the editor's.
  editor.dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: "Enter", shiftKey: true, bubbles: true, cancelable: true }));
  app.receive({ type: "state", state: { ...base, messages: [{ ...said }], running: true } });
  assert.equal(doc.querySelector("textarea[aria-label='Edit message']"), editor);
  assert.equal(posted.length, 1);
  button("Send", article).click();
  assert.deepEqual(posted.at(-1), { type: "action", action: "editAndResend", entryId: "u1", text: "Say hello again\nin three\nlines" });
  assert.equal(article.querySelector(".edit-box"), null);
  assert.ok(!article.classList.contains("editing"));
});

test("Escape or Cancel closes the message's editor and sends nothing; Enter sends", () => {
  const { doc, dom, app, posted, button } = open();
  app.receive({ type: "state", state: { ...base, messages: [{ key: "u1", kind: "user", text: "Say hello" }] } });
  const article = doc.querySelector("article[aria-label='user message']") as HTMLElement;
  const edit = article.querySelector("button[aria-label='Edit and resend']") as HTMLButtonElement;
  const editor = (): HTMLTextAreaElement => article.querySelector("textarea[aria-label='Edit message']") as HTMLTextAreaElement;
  const key = (name: string): void => void editor().dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: name, bubbles: true, cancelable: true }));
  edit.click();
  key("Escape");
  assert.equal(editor(), null);
  edit.click();
  button("Cancel", article).click();
  assert.equal(editor(), null);
  assert.equal(posted.length, 1);
  edit.click();
  editor().value = "   ";
  key("Enter"); // an empty text is not sent
  assert.equal(posted.length, 1);
  editor().value = "Say hi";
  key("Enter");
  assert.deepEqual(posted.at(-1), { type: "action", action: "editAndResend", entryId: "u1", text: "Say hi" });
});

test("a resent message offers ‹ 1/2 ›: each arrow asks the host for that version, none past the ends", () => {
  const { doc, app, posted } = open();
  const messages = [
    { key: "u0", kind: "user" as const, text: "Start" },
    { key: "u2", kind: "user" as const, text: "Say hello again" },
  ];
  app.receive({ type: "state", state: { ...base, messages, versions: { u2: { index: 2, count: 2 } } } });
  const [start, resent] = Array.from(doc.querySelectorAll<HTMLElement>("article[aria-label='user message']"));
  assert.equal(start.querySelector("[aria-label='versions']"), null);
  const versions = resent.querySelector("[role=group][aria-label='versions']") as HTMLElement;
  assert.equal(versions.textContent, "2/2");
  const previous = versions.querySelector("button[aria-label='Previous version']") as HTMLButtonElement;
  const next = versions.querySelector("button[aria-label='Next version']") as HTMLButtonElement;
  assert.equal(next.disabled, true);
  previous.click();
  assert.deepEqual(posted.at(-1), { type: "version", entryId: "u2", step: -1 });
  // Shown the first version: the same article now says 1/2, and a message with one version says nothing.
  app.receive({ type: "state", state: { ...base, messages, versions: { u2: { index: 1, count: 2 } } } });
  assert.equal(resent.querySelector("[aria-label='versions']")?.textContent, "1/2");
  app.receive({ type: "state", state: { ...base, messages } });
  assert.equal(resent.querySelector("[aria-label='versions']"), null);
});

test("text added to a reply is drawn; an addition that does not start where the reply's text ends is ignored", () => {
  const { doc, app } = open();
  app.receive({ type: "message", message: { key: "assistant:1", kind: "assistant", text: "Hel" } });
  app.receive({ type: "append", key: "assistant:1", field: "text", from: 3, delta: "lo" });
  const reply = () => doc.querySelector("article[aria-label='assistant message']")?.textContent?.trim();
  assert.equal(reply(), "Hello");
  app.receive({ type: "append", key: "assistant:1", field: "text", from: 3, delta: "p!" });
  app.receive({ type: "append", key: "assistant:9", field: "text", from: 0, delta: "stray" });
  assert.equal(reply(), "Hello");
  assert.equal(doc.querySelectorAll("article").length, 1);
});
