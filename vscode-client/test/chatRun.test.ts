/**
 * The chat as a view of server state, against the real pi-lsp (PI_LSP_COMMAND) and a loopback fake
 * model: a view opened in the middle of a run draws the partial reply and the queue from
 * pi/getRunState, keeps streaming from pi/event, and ends equal to a fresh load of the branch.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { ChatSync } from "../src/host/chatSync";
import { FakeModel } from "./fakeModel";
import { needsServer, say, startServer } from "./realServer";
import type { PiEventParams } from "../src/shared/protocol";

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const texts = (sync: ChatSync): string[][] => sync.transcript.messages.map((m) => [m.kind, m.text]);

test("a view opened mid-run redraws the reply and queue, keeps streaming, and restores the queue", { skip: needsServer }, async () => {
  const fake = new FakeModel(["Hel", "lo there"]);
  const url = await fake.start();
  const server = await startServer(
    { thinkingLevel: "off", tokenizer: "estimate", retry: { enabled: false } },
    { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: url },
  );
  const { request, home } = server;
  const views: ChatSync[] = [];
  server.connection.onNotification("pi/event", (params: PiEventParams) => {
    for (const view of views) view.onEvent(params.seq, params.event);
  });
  try {
    fs.mkdirSync(path.join(home, "work"));
    await request("pi/newSession", { cwd: path.join(home, "work"), sessionDir: path.join(home, "sessions") });
    assert.equal((await request<{ hasApiKey: boolean }>("pi/listModels", {})).hasApiKey, true);

    const live = new ChatSync(request);
    await live.load();
    views.push(live);
    const prompt = request<{ stopReason: string }>("pi/prompt", { text: "hello", streamingBehavior: "steer" });
    await fake.pausedOnce;
    await until(() => texts(live).some(([kind, text]) => kind === "assistant" && text === "Hel"), "the first delta");
    assert.deepEqual(await request("pi/prompt", { text: "later", streamingBehavior: "followUp" }), { queued: "followUp" });
    await until(() => live.queue.followUp.length === 1, "the queue_update");

    // The panel is opened again in the middle of the run: it draws the same from server state.
    const reopened = new ChatSync(request);
    views.push(reopened);
    await reopened.load();
    assert.deepEqual(texts(reopened), [["user", "hello"], ["assistant", "Hel"]]);
    assert.deepEqual(reopened.queue, { steering: [], followUp: ["later"] });
    assert.equal(reopened.running, true);

    // Restore to input: the queue's texts come back and both views see it empty.
    assert.deepEqual(await request("pi/clearQueue", {}), { steering: [], followUp: ["later"] });
    await until(() => reopened.queue.followUp.length === 0 && live.queue.followUp.length === 0, "the cleared queue");

    fake.finish();
    assert.equal((await prompt).stopReason, "stop");
    await until(() => !reopened.running && !live.running, "agent_end");
    const truth = new ChatSync(request);
    await truth.load();
    assert.deepEqual(texts(truth), [["user", "hello"], ["assistant", "Hello there"]]);
    assert.deepEqual(reopened.transcript.messages, truth.transcript.messages);
    assert.deepEqual(live.transcript.messages, truth.transcript.messages);
    assert.equal(fake.requests, 1, "the cleared follow-up never reached the model");
  } finally {
    server.close();
    fake.close();
  }
});

test("a long branch loads in pages of the last entries, older ones on request", { skip: needsServer }, async () => {
  const server = await startServer();
  try {
    await server.request("pi/newSession", { cwd: server.home, sessionDir: path.join(server.home, "sessions") });
    assert.equal((await server.request<{ hasApiKey: boolean }>("pi/listModels", {})).hasApiKey, false);
    for (let n = 1; n <= 25; n += 1) await say(server, `m${n}`);
    const sync = new ChatSync(server.request, 10);
    await sync.load();
    assert.deepEqual(sync.transcript.messages.map((m) => m.text), Array.from({ length: 10 }, (_, i) => `m${i + 16}`));
    assert.equal(sync.hasMore, true);
    assert.equal(await sync.loadOlder(), true);
    assert.equal(await sync.loadOlder(), true);
    assert.equal(sync.hasMore, false);
    assert.deepEqual(sync.transcript.messages.map((m) => m.text), Array.from({ length: 25 }, (_, i) => `m${i + 1}`));
  } finally {
    server.close();
  }
});

/** A session on the real server talking to `fake`, with pi's retries fast (and the SDK's own off); a live view follows it. */
async function retrySession(fake: FakeModel) {
  const url = await fake.start();
  const server = await startServer(
    { thinkingLevel: "off", tokenizer: "estimate", retry: { enabled: true, maxRetries: 3, baseDelayMs: 1, provider: { maxRetries: 0 } } },
    { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: url },
  );
  const live = new ChatSync(server.request);
  const rows: string[] = [];
  server.connection.onNotification("pi/event", (params: PiEventParams) => {
    live.onEvent(params.seq, params.event);
    if (live.retry) rows.push(`${live.retry.attempt}/${live.retry.maxAttempts}: ${live.retry.errorMessage}`);
  });
  fs.mkdirSync(path.join(server.home, "work"));
  await server.request("pi/newSession", { cwd: path.join(server.home, "work"), sessionDir: path.join(server.home, "sessions") });
  await live.load();
  return { server, live, rows };
}

const replies = (sync: ChatSync) => sync.transcript.messages.map((m) => [m.kind, m.text, m.stopReason, m.attempts]);

test("a 429 then an answer is one reply after 2 attempts, live and reloaded, with a retry row meanwhile", { skip: needsServer }, async () => {
  const fake = new FakeModel(["Hel", "lo"], { failures: [429], pause: false });
  const { server, live, rows } = await retrySession(fake);
  try {
    assert.equal((await server.request<{ stopReason: string }>("pi/prompt", { text: "hello" })).stopReason, "stop");
    await until(() => !live.running && live.retry === undefined, "the end of the run");
    assert.ok(rows.length > 0 && rows.every((row) => row.startsWith("1/3: 429")), rows.join("\n"));
    const truth = new ChatSync(server.request);
    await truth.load();
    assert.deepEqual(replies(truth), [["user", "hello", undefined, undefined], ["assistant", "Hello", undefined, 2]]);
    assert.deepEqual(live.transcript.messages, truth.transcript.messages);
    assert.equal(fake.requests, 2);
  } finally {
    server.close();
    fake.close();
  }
});

test("a model overloaded for good is one error card after 4 attempts, live and reloaded", { skip: needsServer }, async () => {
  const fake = new FakeModel(["never", "sent"], { failures: [529, 529, 529, 529], pause: false });
  const { server, live, rows } = await retrySession(fake);
  try {
    const result = await server.request<{ stopReason: string; errorMessage?: string }>("pi/prompt", { text: "hello" });
    assert.equal(result.stopReason, "error");
    await until(() => !live.running && live.retry === undefined, "the end of the run");
    assert.deepEqual([...new Set(rows.map((row) => row.slice(0, 4)))], ["1/3:", "2/3:", "3/3:"]);
    const truth = new ChatSync(server.request);
    await truth.load();
    assert.deepEqual(replies(truth), [["user", "hello", undefined, undefined], ["assistant", "", "error", 4]]);
    assert.match(truth.transcript.messages[1].errorMessage ?? "", /^529\b/);
    assert.deepEqual(live.transcript.messages, truth.transcript.messages);
    assert.equal(fake.requests, 4);
  } finally {
    server.close();
    fake.close();
  }
});
