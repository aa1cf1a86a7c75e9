/** Labels of a waiting tool call: the bash card says it waits, the approval card shows the command once, diffs coloured with relative paths. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import { approvalCard, relativePath, type ApprovalRequest } from "../src/shared/approvalModel";
import type { ChatViewState } from "../src/shared/chatProtocol";
import { startChat } from "../src/webview/chatApp";

const base: ChatViewState = { messages: [], queue: { steering: [], followUp: [] }, running: true, hasMore: false, approvals: [] };

test("the approval card shows a command once, and a diff with paths relative to the session's folder", () => {
  const bash: ApprovalRequest = { sessionId: "s", toolCallId: "b1", toolName: "bash", args: { command: "make test" }, cwd: "/w/proj", preview: { command: "make test" } };
  const card = approvalCard(bash);
  assert.equal(card.title, "pi wants to run a command");
  assert.equal(card.detail, "make test");
  const diff = "--- /w/proj/src/a.py\n+++ /w/proj/src/a.py\n@@ -1 +1 @@\n-a\n+b\n";
  const edit: ApprovalRequest = { sessionId: "s", toolCallId: "e1", toolName: "edit", args: {}, cwd: "/w/proj/", preview: { path: "/w/proj/src/a.py", diff } };
  const editCard = approvalCard(edit);
  assert.equal(editCard.title, "pi wants to edit src/a.py");
  assert.equal(editCard.detail, "--- src/a.py\n+++ src/a.py\n@@ -1 +1 @@\n-a\n+b\n");
  assert.equal(relativePath("/w/projX/a", "/w/proj"), "/w/projX/a", "a sibling folder is not inside");
  assert.equal(relativePath("/elsewhere/a", "/w/proj"), "/elsewhere/a");
});

test("a bash card waiting for approval says so, not running; the in-card diff is coloured by line", () => {
  const dom = new JSDOM("<!DOCTYPE html><body></body>");
  const doc = dom.window.document;
  const app = startChat(doc, dom.window as unknown as Window, { postMessage: () => undefined, getState: () => undefined, setState: () => undefined });
  const tool = { key: "tool:b1", kind: "tool" as const, text: "$ make test", tool: { callId: "b1", name: "bash", args: { command: "make test" }, output: "", running: true } };
  const waiting = { toolCallId: "b1", title: "pi wants to run a command", detail: "make test", diffable: false };
  app.receive({ type: "state", state: { ...base, messages: [tool], approvals: [waiting] } });
  const summary = (): string => doc.querySelector("article[aria-label='tool call'] summary")?.textContent ?? "";
  assert.equal(summary(), "$ make test (waiting for your approval)");
  app.receive({ type: "state", state: { ...base, messages: [tool], approvals: [] } });
  assert.equal(summary(), "$ make test (running…)", "once allowed it runs");
  const edit = { toolCallId: "e1", title: "pi wants to edit a.py", detail: "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-a\n+b", diffable: true };
  app.receive({ type: "state", state: { ...base, approvals: [edit] } });
  const spans = Array.from(doc.querySelectorAll(".approval-detail span")).map((s) => `${s.className}:${s.textContent?.trim() ?? ""}`);
  assert.deepEqual(spans, ["diff-file:--- a.py", "diff-file:+++ a.py", "diff-hunk:@@ -1 +1 @@", "diff-removed:-a", "diff-added:+b"]);
});
