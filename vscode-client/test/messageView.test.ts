import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import type { ChatMessage } from "../src/shared/chatModel";
import type { MessageAction } from "../src/shared/messageActions";
import { createMarkdown } from "../src/webview/markdown";
import { messageArticle, type MessageViewContext } from "../src/webview/messageView";

function setup(): { context: MessageViewContext; actions: [MessageAction, string, string][] } {
  const dom = new JSDOM("<!DOCTYPE html><body></body>");
  const actions: [MessageAction, string, string][] = [];
  const markdown = createMarkdown(dom.window as unknown as Window);
  const context: MessageViewContext = {
    document: dom.window.document,
    renderMarkdown: markdown.render,
    streamMarkdown: markdown.stream,
    openThinking: new Set(),
    toggledTools: new Set(),
    onAction: (action, entryId, text) => actions.push([action, entryId, text]),
    onOpenDiff: (toolCallId) => actions.push(["openDiff" as MessageAction, toolCallId, ""]),
    onRetry: (key) => actions.push(["retry" as MessageAction, key, ""]),
  };
  return { context, actions };
}

/** The buttons' accessible names (an icon button's is its aria-label). */
const buttonNames = (article: HTMLElement): string[] =>
  Array.from(article.querySelectorAll("button")).map((button) => button.getAttribute("aria-label") ?? button.textContent ?? "");

test("a saved user message is text with Edit and resend, Branch from here and Fork to new session", () => {
  const { context, actions } = setup();
  const article = messageArticle(context, { key: "u1", kind: "user", text: "# not a *heading*" });
  assert.equal(article.getAttribute("aria-label"), "user message");
  assert.equal(article.querySelector("h1"), null);
  assert.match(article.textContent ?? "", /# not a \*heading\*/);
  assert.deepEqual(buttonNames(article), ["Edit and resend", "Branch from here", "Fork to new session"]);
  assert.equal(article.querySelector("[role=group]")?.getAttribute("aria-label"), "message actions");
  // Icons (codicons), not full-width text buttons: the label is the accessible name and the tooltip.
  for (const button of Array.from(article.querySelectorAll<HTMLButtonElement>("[role=group] button"))) {
    assert.equal(button.className, "icon-button");
    assert.equal(button.textContent, "");
    assert.equal(button.title, button.getAttribute("aria-label"));
    assert.match(button.querySelector("span")?.className ?? "", /^codicon codicon-[a-z-]+$/);
  }
  for (const button of Array.from(article.querySelectorAll("button"))) button.click();
  assert.deepEqual(actions, [
    ["editAndResend", "u1", "# not a *heading*"],
    ["branchFromHere", "u1", "# not a *heading*"],
    ["forkToNewSession", "u1", "# not a *heading*"],
  ]);
});

test("a reply is markdown with a collapsed thinking block; one still streaming has no buttons", () => {
  const { context } = setup();
  const reply: ChatMessage = { key: "assistant:3", kind: "assistant", text: "## Plan\n\n- a", thinking: "<b>hm</b>" };
  const article = messageArticle(context, reply);
  assert.equal(article.querySelector("h2")?.textContent, "Plan");
  const details = article.querySelector("details");
  assert.equal(details?.open, false);
  assert.equal(details?.querySelector("summary")?.textContent, "Thinking");
  assert.equal(details?.querySelector("b"), null);
  assert.match(details?.textContent ?? "", /<b>hm<\/b>/);
  assert.deepEqual(buttonNames(article), []);
  assert.deepEqual(buttonNames(messageArticle(context, { ...reply, key: "a1" })), ["Branch from here", "Fork to new session"]);
  assert.deepEqual(buttonNames(messageArticle(context, { key: "tool:t1", kind: "tool", text: "bash {}" })), []);
});

test("an opened thinking block stays open when the message is drawn again", () => {
  const { context } = setup();
  const reply: ChatMessage = { key: "a1", kind: "assistant", text: "ok", thinking: "plan" };
  const first = messageArticle(context, reply).querySelector("details") as HTMLDetailsElement;
  first.open = true;
  first.dispatchEvent(new context.document.defaultView!.Event("toggle"));
  assert.equal((messageArticle(context, reply).querySelector("details") as HTMLDetailsElement).open, true);
});

test("a user message's images are noted under its text", () => {
  const { context } = setup();
  assert.equal(messageArticle(context, { key: "u1", kind: "user", text: "see", images: 2 }).querySelector(".attachments-note")?.textContent, "[2 images]");
  assert.equal(messageArticle(context, { key: "u2", kind: "user", text: "see" }).querySelector(".attachments-note"), null);
});

test("a compaction is a collapsed card whose summary is sanitised markdown", () => {
  const { context } = setup();
  const summary = "## Goal\n\nFix **it**.\n\n<img src=x onerror=\"window.pwned=1\"> [click](javascript:alert(1)) <script>window.pwned=2</script>";
  const article = messageArticle(context, { key: "c1", kind: "compaction", text: summary, tokensBefore: 123456 });
  assert.equal(article.getAttribute("aria-label"), "compaction summary");
  assert.equal(article.dataset.entryId, "c1");
  const details = article.querySelector("details") as HTMLDetailsElement;
  assert.equal(details.open, false);
  assert.equal(details.querySelector("summary")?.textContent, "Compacted — 123,456 tokens summarised");
  assert.equal(article.querySelector("h2")?.textContent, "Goal");
  assert.equal(article.querySelector("strong")?.textContent, "it");
  // Raw HTML is text, the unsafe link has no address, nothing can run.
  assert.equal(article.querySelector("img, script, [onerror]"), null);
  assert.match(article.textContent ?? "", /<img src=x onerror="window.pwned=1">/);
  assert.equal(article.querySelector("a")?.hasAttribute("href"), false);
  assert.deepEqual(buttonNames(article), []);
  // Opened once, it stays open when drawn again.
  details.open = true;
  details.dispatchEvent(new context.document.defaultView!.Event("toggle"));
  assert.equal((messageArticle(context, { key: "c1", kind: "compaction", text: summary }).querySelector("details") as HTMLDetailsElement).open, true);
});

test("a branch summary is a card of its own", () => {
  const { context } = setup();
  const article = messageArticle(context, { key: "b1", kind: "branchSummary", text: "Tried `x`" });
  assert.equal(article.getAttribute("aria-label"), "branch summary");
  assert.equal(article.querySelector("summary")?.textContent, "Summary of the branch you left");
  assert.equal(article.querySelector("code")?.textContent, "x");
});

test("a failed reply is an alert card with what failed, the server's message and Retry; a stopped one says Stopped", () => {
  const { context, actions } = setup();
  const failed = messageArticle(context, {
    key: "a4",
    kind: "assistant",
    text: "Hel",
    stopReason: "error",
    errorMessage: "429 rate_limit_error: slow down",
    attempts: 4,
  });
  const alert = failed.querySelector("[role=alert]");
  assert.ok(alert, "the error is an alert");
  assert.equal(alert.querySelector(".error-title")?.textContent, "Rate limited after 4 attempts");
  assert.equal(alert.querySelector(".error-detail")?.textContent, "429 rate_limit_error: slow down");
  assert.match(failed.querySelector(".reply")?.textContent ?? "", /Hel/, "the partial text stays");
  assert.deepEqual(buttonNames(failed), ["Retry", "Branch from here", "Fork to new session"]);
  (failed.querySelector("[role=alert] button") as HTMLButtonElement).click();
  assert.deepEqual(actions, [["retry", "a4", ""]]);

  const overloaded = messageArticle(context, { key: "a5", kind: "assistant", text: "", stopReason: "error", errorMessage: "529 overloaded_error" });
  assert.equal(overloaded.querySelector(".error-title")?.textContent, "Model overloaded");
  const cut = messageArticle(context, { key: "a6", kind: "assistant", text: "", stopReason: "error", errorMessage: "terminated" });
  assert.equal(cut.querySelector(".error-title")?.textContent, "Model error");

  const stopped = messageArticle(context, { key: "a7", kind: "assistant", text: "", stopReason: "aborted", errorMessage: "Request was aborted." });
  assert.equal(stopped.querySelector("[role=alert]"), null);
  assert.equal(stopped.querySelector(".stopped")?.textContent, "Stopped");
  const retried = messageArticle(context, { key: "a8", kind: "assistant", text: "Hi", attempts: 3 });
  assert.equal(retried.querySelector(".attempts-note")?.textContent, "Answered after 3 attempts");
  assert.equal(retried.querySelector("[role=alert]"), null);
});

test("a failure's raw error body (as the SDK words a 429) is shown as its type and message", () => {
  const { context } = setup();
  const raw = '429 {"type":"error","error":{"type":"rate_limit_error","message":"Too many requests: your per-minute rate limit"}}';
  const failed = messageArticle(context, { key: "a7", kind: "assistant", text: "", stopReason: "error", errorMessage: raw });
  assert.equal(failed.querySelector(".error-title")?.textContent, "Rate limited");
  assert.equal(failed.querySelector(".error-detail")?.textContent, "429 rate_limit_error: Too many requests: your per-minute rate limit");
  // Not such a body: kept as it is.
  for (const kept of ["500 {not json}", '400 {"error":{}}', "terminated"]) {
    const other = messageArticle(context, { key: "a8", kind: "assistant", text: "", stopReason: "error", errorMessage: kept });
    assert.equal(other.querySelector(".error-detail")?.textContent, kept);
  }
});
