/**
 * The chat as a view of server state, against the real pi-lsp (PI_LSP_COMMAND) and a loopback fake
 * model: a view opened in the middle of a run draws the partial reply and the queue from
 * pi/getRunState, keeps streaming from pi/event, and ends equal to a fresh load of the branch.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { ChatSync } from "../src/chatSync";
import type { Requester } from "../src/messageActions";
import { FakeModel } from "./fakeModel";

const serverCommand = process.env.PI_LSP_COMMAND;

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const texts = (sync: ChatSync): string[][] => sync.transcript.messages.map((m) => [m.kind, m.text]);

test("a view opened mid-run redraws the reply and queue, keeps streaming, and restores the queue", { skip: serverCommand ? false : "PI_LSP_COMMAND not set" }, async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "pi-vscode-run-"));
  const fake = new FakeModel(["Hel", "lo there"]);
  const url = await fake.start();
  const child = spawn(serverCommand as string, ["--stdio"], {
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: path.join(home, "agent"), ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: url },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const views: ChatSync[] = [];
  connection.onNotification("pi/event", (params: { seq: number; event: Record<string, unknown> }) => {
    for (const view of views) view.onEvent(params.seq, params.event);
  });
  connection.listen();
  const request: Requester = (method, params) => connection.sendRequest(method, params);
  try {
    await connection.sendRequest("initialize", {
      processId: process.pid,
      rootUri: null,
      capabilities: { experimental: { pi: { approvals: true } } },
      initializationOptions: { pi: { thinkingLevel: "off", tokenizer: "estimate", retry: { enabled: false } } },
    });
    await connection.sendNotification("initialized", {});
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
    connection.dispose();
    child.kill();
    fake.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test("a long branch loads in pages of the last entries, older ones on request", { skip: serverCommand ? false : "PI_LSP_COMMAND not set" }, async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "pi-vscode-page-"));
  const child = spawn(serverCommand as string, ["--stdio"], {
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: path.join(home, "agent"), ANTHROPIC_API_KEY: "" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  connection.listen();
  const request: Requester = (method, params) => connection.sendRequest(method, params);
  try {
    await connection.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {} });
    await connection.sendNotification("initialized", {});
    await request("pi/newSession", { cwd: home, sessionDir: path.join(home, "sessions") });
    assert.equal((await request<{ hasApiKey: boolean }>("pi/listModels", {})).hasApiKey, false);
    for (let n = 1; n <= 25; n += 1) {
      await request("pi/appendEntry", { entry: { type: "message", message: { role: "user", content: `m${n}`, timestamp: Date.now() } } });
    }
    const sync = new ChatSync(request, 10);
    await sync.load();
    assert.deepEqual(sync.transcript.messages.map((m) => m.text), Array.from({ length: 10 }, (_, i) => `m${i + 16}`));
    assert.equal(sync.hasMore, true);
    assert.equal(await sync.loadOlder(), true);
    assert.equal(await sync.loadOlder(), true);
    assert.equal(sync.hasMore, false);
    assert.deepEqual(sync.transcript.messages.map((m) => m.text), Array.from({ length: 25 }, (_, i) => `m${i + 1}`));
  } finally {
    connection.dispose();
    child.kill();
    fs.rmSync(home, { recursive: true, force: true });
  }
});
