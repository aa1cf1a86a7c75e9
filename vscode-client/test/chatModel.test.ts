import assert from "node:assert/strict";
import { test } from "node:test";
import { ChatTranscript, contentText, entryIdOf } from "../src/shared/chatModel";
import type { PiEvent } from "../src/shared/protocol";

test("a streamed reply becomes an assistant article from its first delta on", () => {
  const chat = new ChatTranscript();
  assert.equal(chat.apply({ type: "message_start", message: { role: "user", content: "hi" } }), true);
  assert.equal(chat.apply({ type: "message_start", message: { role: "assistant", content: [] } }), false);
  assert.deepEqual(chat.messages.map((m) => m.kind), ["user"]);
  chat.apply({ type: "message_update", assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "Hel" } });
  chat.apply({ type: "message_update", assistantMessageEvent: { type: "thinking_delta", delta: "hm" } });
  chat.apply({ type: "message_update", assistantMessageEvent: { type: "thinking_delta", delta: "m" } });
  chat.apply({ type: "message_update", assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "lo" } });
  assert.deepEqual(chat.messages.map((m) => [m.kind, m.text, m.thinking]), [["user", "hi", undefined], ["assistant", "Hello", "hmm"]]);
  chat.apply({
    type: "message_end",
    entryId: "e1",
    message: { role: "assistant", content: [{ type: "thinking", thinking: "x" }, { type: "text", text: "Hello!" }] },
  });
  assert.deepEqual(chat.messages[1], { key: "e1", kind: "assistant", text: "Hello!", thinking: "x" });
});

test("tool calls are cards updated with live and final output", () => {
  const chat = new ChatTranscript();
  chat.apply({ type: "tool_execution_start", toolCallId: "t1", toolName: "bash", args: { command: "ls" } });
  chat.apply({ type: "tool_execution_update", toolCallId: "t1", toolName: "bash", args: { command: "ls" }, partialResult: { content: [{ type: "text", text: "a" }] } });
  assert.equal(chat.messages[0].text, "$ ls");
  assert.deepEqual(chat.messages[0].tool, { callId: "t1", name: "bash", args: { command: "ls" }, output: "a", running: true });
  chat.apply({ type: "tool_execution_end", toolCallId: "t1", toolName: "bash", isError: true, result: { content: [{ type: "text", text: "a\nb" }] } });
  assert.deepEqual(chat.messages.map((m) => [m.kind, m.text, m.tool?.output, m.tool?.running, m.isError]), [
    ["tool", "$ ls", "a\nb", false, true],
  ]);
});

test("a branch redraws user, assistant and tool messages in order", () => {
  const chat = ChatTranscript.fromBranch([
    { type: "session_info", id: "s" },
    { type: "message", id: "u", message: { role: "user", content: [{ type: "text", text: "list" }] } },
    {
      type: "message",
      id: "a",
      message: { role: "assistant", content: [{ type: "toolCall", id: "t", name: "ls", arguments: { path: "." } }] },
    },
    { type: "message", id: "r", message: { role: "toolResult", toolCallId: "t", content: [{ type: "text", text: "x.py" }] } },
    { type: "message", id: "b", message: { role: "assistant", content: [{ type: "text", text: "One file." }] } },
  ]);
  assert.deepEqual(chat.messages.map((m) => [m.kind, m.text, m.tool?.output]), [
    ["user", "list", undefined],
    ["tool", "ls .", "x.py"],
    ["assistant", "One file.", undefined],
  ]);
});

test("content text ignores non-text parts and odd shapes", () => {
  assert.equal(contentText([{ type: "image" }, { type: "text", text: "a" }, null, { type: "text", text: "b" }]), "ab");
  assert.equal(contentText(undefined), "");
});

test("a sent user message takes its entry id at message_end, so its actions can name it", () => {
  const chat = new ChatTranscript();
  chat.apply({ type: "message_start", message: { role: "user", content: "hi" } });
  assert.equal(entryIdOf(chat.messages[0]), undefined);
  assert.equal(chat.apply({ type: "message_end", entryId: "u9", message: { role: "user", content: "hi" } }), true);
  assert.equal(entryIdOf(chat.messages[0]), "u9");
  chat.apply({ type: "tool_execution_start", toolCallId: "t1", toolName: "bash", args: {} });
  assert.equal(entryIdOf(chat.messages[1]), undefined);
});

test("a reply that only thinks so far is shown, and a branch keeps each reply's thinking", () => {
  const chat = new ChatTranscript();
  chat.apply({ type: "message_start", message: { role: "assistant", content: [] } });
  assert.equal(chat.apply({ type: "message_update", assistantMessageEvent: { type: "thinking_delta", delta: "plan" } }), true);
  chat.apply({ type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "ok" } });
  assert.deepEqual(chat.messages.map((m) => [m.text, m.thinking]), [["ok", "plan"]]);
  const branch = ChatTranscript.fromBranch([
    { type: "message", id: "a1", message: { role: "assistant", content: [{ type: "thinking", thinking: "a" }, { type: "thinking", thinking: "b" }] } },
    { type: "message", id: "a2", message: { role: "assistant", content: [{ type: "text", text: "plain" }] } },
  ]);
  assert.deepEqual(branch.messages, [
    { key: "a1", kind: "assistant", text: "", thinking: "a\n\nb" },
    { key: "a2", kind: "assistant", text: "plain" },
  ]);
});

test("older pages go first, and a result whose call was in the older page joins its card", () => {
  const chat = ChatTranscript.fromBranch([
    { type: "message", id: "r", message: { role: "toolResult", toolCallId: "t", content: [{ type: "text", text: "x.py" }] } },
    { type: "message", id: "b", message: { role: "assistant", content: [{ type: "text", text: "done" }] } },
  ]);
  assert.deepEqual(chat.messages.map((m) => m.key), ["b"]);
  chat.prepend([
    { type: "message", id: "u", message: { role: "user", content: "list" } },
    { type: "message", id: "a", message: { role: "assistant", content: [{ type: "toolCall", id: "t", name: "ls", arguments: {} }] } },
  ]);
  assert.deepEqual(chat.messages.map((m) => [m.key, m.tool?.output]), [["u", undefined], ["tool:t", "x.py"], ["b", undefined]]);
});

test("a run in progress resumes: its partial reply and running tools, then it keeps streaming", () => {
  const chat = ChatTranscript.fromBranch([{ type: "message", id: "u", message: { role: "user", content: "go" } }]);
  chat.resume({
    partial: { role: "assistant", content: [{ type: "thinking", thinking: "hm" }, { type: "text", text: "Work" }] },
    tools: [{ toolCallId: "t0", toolName: "bash", args: { command: "sleep 1" }, partialResult: { content: [{ type: "text", text: "…" }] } }],
  });
  assert.deepEqual(chat.messages.map((m) => [m.kind, m.text, m.thinking, m.tool?.running]), [
    ["user", "go", undefined, undefined],
    ["assistant", "Work", "hm", undefined],
    ["tool", "$ sleep 1", undefined, true],
  ]);
  chat.apply({ type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "ing" } });
  assert.equal(chat.messages[1].text, "Working");
  chat.apply({ type: "message_end", entryId: "a1", message: { role: "assistant", content: [{ type: "text", text: "Working." }] } });
  assert.deepEqual([chat.messages[1].key, chat.messages[1].text], ["a1", "Working."]);
});

test("a message that ends under an entry id already drawn is kept once", () => {
  const chat = ChatTranscript.fromBranch([{ type: "message", id: "u1", message: { role: "user", content: "hi" } }]);
  chat.apply({ type: "message_start", message: { role: "user", content: "hi" } });
  chat.apply({ type: "message_end", entryId: "u1", message: { role: "user", content: "hi" } });
  assert.deepEqual(chat.messages.map((m) => m.key), ["u1"]);
});

test("a user message with images says how many it carries", () => {
  const parts = [{ type: "text", text: "look" }, { type: "image", data: "x", mimeType: "image/png" }];
  const chat = ChatTranscript.fromBranch([{ type: "message", id: "u", message: { role: "user", content: parts } }]);
  assert.deepEqual(chat.messages, [{ key: "u", kind: "user", text: "look", images: 1 }]);
  chat.apply({ type: "message_start", message: { role: "user", content: [...parts, parts[1]] } });
  assert.equal(chat.messages[1].images, 2);
});

test("compaction and branch summary entries are summary cards where they lie in the branch", () => {
  const chat = ChatTranscript.fromBranch([
    { type: "message", id: "u1", message: { role: "user", content: "old question" } },
    { type: "compaction", id: "c1", summary: "## Goal\nfix it", firstKeptEntryId: "u1", tokensBefore: 12345, details: {} },
    { type: "branch_summary", id: "b1", fromId: "x", summary: "Tried *another* way" },
    { type: "compaction", id: "c2", summary: 7 },
    { type: "message", id: "u2", message: { role: "user", content: "next" } },
  ]);
  assert.deepEqual(chat.messages, [
    { key: "u1", kind: "user", text: "old question" },
    { key: "c1", kind: "compaction", text: "## Goal\nfix it", tokensBefore: 12345 },
    { key: "b1", kind: "branchSummary", text: "Tried *another* way" },
    { key: "u2", kind: "user", text: "next" },
  ]);
  assert.equal(entryIdOf(chat.messages[1]), "c1");
});

test("a compaction written during a run shows its card once, from compaction_end's result", () => {
  const chat = ChatTranscript.fromBranch([{ type: "message", id: "u1", message: { role: "user", content: "hi" } }]);
  const result = { entryId: "c9", summary: "S", tokensBefore: 900, firstKeptEntryId: "u1", tokensAfter: 90, details: { readFiles: [], modifiedFiles: [] }, summarizer: "offline" };
  const end: PiEvent = { type: "compaction_end", reason: "overflow", aborted: false, willRetry: true, result };
  assert.equal(chat.apply(end), true);
  assert.equal(chat.apply(end), false);
  assert.equal(chat.apply({ type: "compaction_end", reason: "threshold", aborted: false, willRetry: false, errorMessage: "Auto-compaction failed: x" }), false);
  assert.deepEqual(chat.messages.map((m) => [m.key, m.kind, m.tokensBefore]), [["u1", "user", undefined], ["c9", "compaction", 900]]);
});
