/**
 * Failed replies and automatic retries in the chat model: a retry sequence (errored replies, each
 * followed by a retry of the same turn) is one reply, live from pi/event and redrawn from the branch
 * alike; the retry is a status row from auto_retry_start to auto_retry_end.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ChatTranscript, promptBefore, type RetryStatus } from "../src/shared/chatModel";
import { ChatSync } from "../src/host/chatSync";
import type { PiEvent } from "../src/shared/protocol";

type Json = Record<string, unknown>;

const errored = (text: string, errorMessage: string): Json => ({
  role: "assistant",
  content: text === "" ? [] : [{ type: "text", text }],
  stopReason: "error",
  errorMessage,
});
const answered = (text: string): Json => ({ role: "assistant", content: [{ type: "text", text }], stopReason: "stop" });

/** One attempt's events as pi-lsp sends them: agent_start, the reply (streamed as `deltas`), agent_end. */
function attempt(entryId: string, final: Json, deltas: string[] = []): Json[] {
  return [
    { type: "agent_start" },
    { type: "message_start", message: { role: "assistant", content: [] } },
    ...deltas.map((delta) => ({ type: "message_update", assistantMessageEvent: { type: "text_delta", delta } })),
    { type: "message_end", entryId, message: final },
    { type: "agent_end" },
  ];
}

const retryStart = (attemptNo: number, errorMessage: string): Json => ({
  type: "auto_retry_start",
  attempt: attemptNo,
  maxAttempts: 3,
  delayMs: 2000 * 2 ** (attemptNo - 1),
  errorMessage,
});

/** The branch the events above leave in the file: the user message, then each reply a child of the one before. */
const branch = (...replies: [string, Json][]): Json[] => [
  { type: "message", id: "u1", message: { role: "user", content: "hello" } },
  ...replies.map(([id, message]) => ({ type: "message", id, message })),
];

let seq = 0;
/** Events in order, each with the next seq. */
function feed(sync: ChatSync, events: Json[]): void {
  for (const event of events) sync.onEvent(++seq, event as unknown as PiEvent); // fixtures: only the fields the chat reads
}

function syncWith(events: Json[]): ChatSync {
  const sync = new ChatSync(() => Promise.reject(new Error("no server")));
  feed(sync, [
    { type: "message_start", message: { role: "user", content: "hello" } },
    { type: "message_end", entryId: "u1", message: { role: "user", content: "hello" } },
    ...events,
  ]);
  return sync;
}

const RATE = '429 {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}';

test("a reply that fails with 429 and then succeeds is one reply 'after 3 attempts', live and redrawn", () => {
  const sync = syncWith([...attempt("a1", errored("", RATE)), retryStart(1, RATE)]);
  assert.equal(sync.running, true, "the run goes on through the delay");
  assert.deepEqual(sync.retry, { attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: RATE });
  // The failed reply is drawn as what it is meanwhile.
  assert.deepEqual(
    sync.transcript.messages.map((m) => [m.key, m.stopReason, m.errorMessage]),
    [["u1", undefined, undefined], ["a1", "error", RATE]],
  );
  feed(sync, [...attempt("a2", errored("", RATE)), retryStart(2, RATE), { type: "agent_start" }]);
  const retrying = sync.retry as RetryStatus | undefined;
  assert.equal(retrying?.started, true, "the delay is over, the attempt runs");
  assert.equal(retrying?.attempt, 2);
  const live = sync;
  feed(live, [
    { type: "message_start", message: { role: "assistant", content: [] } },
    { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "Hi" } },
  ]);
  // From its first delta the retried reply takes the failed one's place.
  assert.deepEqual(live.transcript.messages.map((m) => [m.kind, m.text, m.attempts]), [["user", "hello", undefined], ["assistant", "Hi", 3]]);
  feed(live, [
    { type: "message_end", entryId: "a3", message: answered("Hi there") },
    { type: "auto_retry_end", success: true, attempt: 2 },
    { type: "agent_end" },
  ]);
  assert.equal(live.retry, undefined);
  assert.deepEqual(live.transcript.messages, [
    { key: "u1", kind: "user", text: "hello" },
    { key: "a3", kind: "assistant", text: "Hi there", attempts: 3 },
  ]);
  const reloaded = ChatTranscript.fromBranch(branch(["a1", errored("", RATE)], ["a2", errored("", RATE)], ["a3", answered("Hi there")]));
  assert.deepEqual(reloaded.messages, live.transcript.messages);
});

test("a connection cut mid-reply, retried until it fails for good, is one error card with the last partial text", () => {
  const sync = syncWith([
    ...attempt("a1", errored("Hel", "terminated"), ["Hel"]),
    retryStart(1, "terminated"),
    ...attempt("a2", errored("Hello w", "terminated"), ["Hel", "lo w"]),
    retryStart(2, "terminated"),
    ...attempt("a3", errored("He", "terminated"), ["He"]),
    retryStart(3, "terminated"),
    ...attempt("a4", errored("Hello", "terminated"), ["Hello"]),
    { type: "auto_retry_end", success: false, attempt: 3, finalError: "terminated" },
  ]);
  assert.equal(sync.retry, undefined);
  const expected = [
    { key: "u1", kind: "user", text: "hello" },
    { key: "a4", kind: "assistant", text: "Hello", stopReason: "error", errorMessage: "terminated", attempts: 4 },
  ];
  assert.deepEqual(sync.transcript.messages, expected);
  const reloaded = ChatTranscript.fromBranch(
    branch(["a1", errored("Hel", "terminated")], ["a2", errored("Hello w", "terminated")], ["a3", errored("He", "terminated")], ["a4", errored("Hello", "terminated")]),
  );
  assert.deepEqual(reloaded.messages, expected);
  assert.equal(promptBefore(reloaded.messages, "a4"), "hello", "Retry sends the user text again");
});

test("an aborted reply is drawn as stopped, also an empty one; a new prompt after a failure starts a new reply", () => {
  const aborted = { role: "assistant", content: [], stopReason: "aborted", errorMessage: "Request was aborted." };
  const entries = [
    ...branch(["a1", errored("", "500 Internal server error")]),
    { type: "message", id: "u2", message: { role: "user", content: "again" } },
    { type: "message", id: "a2", message: aborted },
  ];
  assert.deepEqual(
    ChatTranscript.fromBranch(entries).messages.map((m) => [m.key, m.stopReason, m.attempts]),
    [["u1", undefined, undefined], ["a1", "error", undefined], ["u2", undefined, undefined], ["a2", "aborted", undefined]],
  );
  const live = syncWith([...attempt("a1", errored("", "500 Internal server error"))]);
  feed(live, [
    { type: "message_start", message: { role: "user", content: "again" } },
    { type: "message_end", entryId: "u2", message: { role: "user", content: "again" } },
    ...attempt("a2", aborted),
  ]);
  assert.deepEqual(live.transcript.messages, ChatTranscript.fromBranch(entries).messages);
});

test("a retry that answers with tool calls only replaces the failed reply by its tool cards", () => {
  const toolReply = { role: "assistant", content: [{ type: "toolCall", id: "t1", name: "ls", arguments: {} }], stopReason: "toolUse" };
  const reloaded = ChatTranscript.fromBranch(branch(["a1", errored("", RATE)], ["a2", toolReply]));
  assert.deepEqual(reloaded.messages.map((m) => m.kind), ["user", "tool"]);
  const live = syncWith([...attempt("a1", errored("", RATE)), retryStart(1, RATE), ...attempt("a2", toolReply)]);
  feed(live, [{ type: "tool_execution_start", toolCallId: "t1", toolName: "ls", args: {} }]);
  assert.deepEqual(live.transcript.messages.map((m) => m.kind), ["user", "tool"]);
});

test("a chat loaded while a retry waits shows the retry row and the failed reply once", async () => {
  const sync = new ChatSync(<T>(method: string): Promise<T> =>
    Promise.resolve(
      (method === "pi/getRunState"
        ? { running: true, seq: 9, tools: [] }
        : { entries: branch(["a1", errored("", RATE)], ["a2", errored("", RATE)]) }) as T,
    ),
  );
  await sync.load();
  assert.deepEqual(sync.retry, { attempt: 2, errorMessage: RATE });
  assert.deepEqual(sync.transcript.messages.map((m) => [m.key, m.attempts]), [["u1", undefined], ["a2", 2]]);
  sync.onEvent(10, retryStart(2, RATE) as unknown as PiEvent);
  assert.equal(sync.retry?.delayMs, 4000);
});
