/**
 * The chat as a view of server state, against the real pi-lsp (PI_LSP_COMMAND) and a loopback fake
 * model: a view opened in the middle of a run draws the partial reply and the queue from
 * pi/getRunState, keeps streaming from pi/event, and ends equal to a fresh load of the branch.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { ChatSync } from "../src/chatSync";
import { FakeModel } from "./fakeModel";
import { needsServer, say, startServer } from "./realServer";

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
  server.connection.onNotification("pi/event", (params: { seq: number; event: Record<string, unknown> }) => {
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
