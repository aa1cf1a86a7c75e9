import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatMessage } from "../src/shared/chatModel";
import { ChatSync } from "../src/host/chatSync";

type Json = Record<string, unknown>;
const user = (id: string, text: string): Json => ({ type: "message", id, message: { role: "user", content: text } });

/** A requester answering from a table, recording each request; `gate` holds a method's answer until released. */
function fakeServer(answers: Record<string, (params: Json) => unknown>) {
  const requests: [string, Json][] = [];
  const gates = new Map<string, () => void>();
  const request = async <T>(method: string, params: object): Promise<T> => {
    requests.push([method, params as Json]);
    const gate = gates.get(method);
    if (gate) await new Promise<void>((release) => gates.set(method, release));
    return answers[method](params as Json) as T;
  };
  return { request, requests, gates };
}

test("load draws the last page and the run in progress, then applies only newer events", async () => {
  const server = fakeServer({
    "pi/getRunState": () => ({
      running: true,
      seq: 7,
      partial: { role: "assistant", content: [{ type: "text", text: "Hal" }] },
      tools: [],
      queue: { steering: ["also this"], followUp: [] },
    }),
    "pi/getBranch": () => ({ entries: [user("u2", "two")], hasMore: true }),
  });
  const sync = new ChatSync(server.request, 1);
  await sync.load();
  assert.deepEqual(server.requests, [["pi/getRunState", {}], ["pi/getBranch", { limit: 1 }]]);
  assert.equal(sync.running, true);
  assert.equal(sync.hasMore, true);
  assert.deepEqual(sync.queue, { steering: ["also this"], followUp: [] });
  assert.deepEqual(sync.transcript.messages.map((m) => m.text), ["two", "Hal"]);
  // seq 7 is already in the run state; 8 continues the reply.
  assert.equal(sync.onEvent(7, { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "XX" } }), false);
  assert.equal(sync.onEvent(8, { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "lo" } }), true);
  assert.equal(sync.transcript.messages[1].text, "Hallo");
  assert.equal(sync.onEvent(9, { type: "queue_update", steering: [], followUp: ["later"] }), true);
  assert.deepEqual(sync.queue, { steering: [], followUp: ["later"] });
  sync.onEvent(10, { type: "agent_end", entryIds: [], stopReason: "stop" });
  assert.equal(sync.running, false);
});

test("older pages load before the first entry drawn, until there are no more", async () => {
  const server = fakeServer({
    "pi/getRunState": () => ({ running: false, seq: 0, tools: [] }),
    "pi/getBranch": (params) =>
      params.beforeId === "u2" ? { entries: [user("u1", "one")], hasMore: false } : { entries: [user("u2", "two")], hasMore: true },
  });
  const sync = new ChatSync(server.request, 1);
  await sync.load();
  assert.equal(await sync.loadOlder(), true);
  assert.deepEqual(server.requests.at(-1), ["pi/getBranch", { beforeId: "u2", limit: 1 }]);
  assert.deepEqual(sync.transcript.messages.map((m) => m.key), ["u1", "u2"]);
  assert.equal(sync.hasMore, false);
  assert.equal(await sync.loadOlder(), false);
  assert.equal(server.requests.length, 3);
});

test("events arriving during a load wait for it and are applied after, each once", async () => {
  const server = fakeServer({
    "pi/getRunState": () => ({ running: true, seq: 3, tools: [] }),
    "pi/getBranch": () => ({ entries: [user("u1", "hi")] }),
  });
  server.gates.set("pi/getBranch", () => undefined);
  const sync = new ChatSync(server.request);
  const loading = sync.load();
  await new Promise((resolve) => setImmediate(resolve));
  // The reply was written between the two requests: the branch holds it and the events replay it.
  assert.equal(sync.onEvent(3, { type: "agent_start" }), false);
  assert.equal(sync.onEvent(4, { type: "message_start", message: { role: "user", content: "hi" } }), false);
  assert.equal(sync.onEvent(5, { type: "message_end", entryId: "u1", message: { role: "user", content: "hi" } }), false);
  server.gates.get("pi/getBranch")!();
  await loading;
  assert.deepEqual(sync.transcript.messages.map((m) => m.key), ["u1"]);
});

test("a delta or a tool's partial output changes one message only; other events change more", async () => {
  const server = fakeServer({
    "pi/getRunState": () => ({ running: true, seq: 0, tools: [] }),
    "pi/getBranch": () => ({ entries: [user("u1", "hi")] }),
  });
  const sync = new ChatSync(server.request);
  const touched = (): ChatMessage | undefined => sync.touchedOnly;
  await sync.load();
  sync.onEvent(1, { type: "message_start", message: { role: "assistant", content: [] } });
  assert.equal(touched(), undefined);
  sync.onEvent(2, { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "Hi" } });
  assert.equal(touched(), sync.transcript.messages[1]);
  sync.onEvent(3, { type: "tool_execution_start", toolCallId: "t", toolName: "bash", args: { command: "ls" } });
  assert.equal(touched(), undefined);
  sync.onEvent(4, { type: "tool_execution_update", toolCallId: "t", toolName: "bash", args: { command: "ls" }, partialResult: { content: [{ type: "text", text: "a" }] } });
  assert.equal(touched()?.tool?.output, "a");
  sync.onEvent(4, { type: "tool_execution_update", toolCallId: "t", toolName: "bash", args: { command: "ls" }, partialResult: { content: [{ type: "text", text: "b" }] } });
  assert.equal(touched(), undefined, "an event already applied changes nothing");
});

test("a compaction is a live status row: running, failed with the server's message, retrying, gone", async () => {
  let compacting: Json | undefined = { reason: "threshold" };
  const server = fakeServer({
    "pi/getRunState": () => ({ running: false, seq: 3, tools: [], ...(compacting ? { compaction: compacting } : {}) }),
    "pi/getBranch": () => ({ entries: [user("u1", "one")], hasMore: false }),
  });
  const sync = new ChatSync(server.request);
  const row = () => sync.compaction;
  // A chat opened while a compaction runs shows it from the run state.
  await sync.load();
  assert.deepEqual(row(), { reason: "threshold", state: "running" });
  // It ended while nobody looked: the next load clears the row.
  compacting = undefined;
  await sync.load();
  assert.equal(row(), undefined);

  // Notices (no seq) and run events (seq) drive the same row; each is applied once.
  assert.equal(sync.onCompactionNotice(true, { sessionId: "s", reason: "manual" }), true);
  assert.deepEqual(row(), { reason: "manual", state: "running" });
  sync.onCompactionNotice(false, { sessionId: "s", reason: "manual", error: "Compaction failed: no key", aborted: false, willRetry: false });
  assert.deepEqual(row(), { reason: "manual", state: "failed", error: "Compaction failed: no key" });
  // A failure is not server state: a reload keeps showing it; the next run clears it.
  await sync.load();
  assert.equal(row()?.state, "failed");
  sync.onEvent(4, { type: "agent_start" });
  assert.equal(row(), undefined);

  // Overflow during a run: compacted, then the request is retried (the row goes with the retry's reply).
  sync.onEvent(5, { type: "compaction_start", reason: "overflow" });
  assert.equal(sync.onEvent(5, { type: "compaction_end", reason: "overflow", aborted: false, willRetry: false }), false, "an old seq is skipped");
  sync.onEvent(6, { type: "compaction_end", reason: "overflow", aborted: false, willRetry: true, result: { entryId: "c1", summary: "S", tokensBefore: 10, firstKeptEntryId: "u1", tokensAfter: 5, details: { readFiles: [], modifiedFiles: [] }, summarizer: "offline" } });
  sync.onCompactionNotice(false, { sessionId: "s", reason: "overflow", aborted: false, willRetry: true, result: { entryId: "c1", summary: "S", tokensBefore: 10, firstKeptEntryId: "u1", tokensAfter: 5, details: { readFiles: [], modifiedFiles: [] }, summarizer: "offline" } });
  assert.deepEqual(row(), { reason: "overflow", state: "retrying" });
  assert.deepEqual(sync.transcript.messages.map((m) => m.key), ["u1", "c1"]);
  sync.onEvent(7, { type: "message_start", message: { role: "assistant", content: [] } });
  assert.equal(row(), undefined);

  // Cancelled: the row just goes.
  sync.onCompactionNotice(true, { sessionId: "s", reason: "manual" });
  sync.onCompactionNotice(false, { sessionId: "s", reason: "manual", aborted: true, willRetry: false });
  assert.equal(row(), undefined);
});

test("compaction notices arriving during a load wait for it", async () => {
  const server = fakeServer({
    "pi/getRunState": () => ({ running: false, seq: 0, tools: [] }),
    "pi/getBranch": () => ({ entries: [], hasMore: false }),
  });
  server.gates.set("pi/getBranch", () => undefined);
  const sync = new ChatSync(server.request);
  const loading = sync.load();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(sync.onCompactionNotice(true, { sessionId: "s", reason: "manual" }), false);
  server.gates.get("pi/getBranch")?.();
  await loading;
  assert.deepEqual(sync.compaction, { reason: "manual", state: "running" });
});
