/**
 * A window reload against the real shared pi-lsp (PI_LSP_COMMAND) and a loopback fake model: the
 * first connection starts the server (detached, through sharedServer.ts) and a run, then goes away
 * mid-reply; a second connection finds the same server through the state file, opens the session
 * and sees the run in progress (pi/getRunState), its remaining events, and its end.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { createMessageConnection, MessageConnection, SocketMessageReader, SocketMessageWriter } from "vscode-jsonrpc/node";
import { ChatSync } from "../src/host/chatSync";
import { connectShared, readServerState, SharedServerFiles, sharedServerFiles, stopShared } from "../src/host/sharedServer";
import { FakeModel } from "./fakeModel";
import { needsServer, serverCommand } from "./realServer";
import type { PiEventParams } from "../src/shared/protocol";

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface Window {
  connection: MessageConnection;
  pid: number;
  started: boolean;
  views: ChatSync[];
}

/** What a window does at start: connect (starting the server if needed) and initialize with the token. */
async function openWindow(files: SharedServerFiles): Promise<Window> {
  const { socket, state, started } = await connectShared({ command: serverCommand as string, args: [] }, files);
  const connection = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  const views: ChatSync[] = [];
  connection.onNotification("pi/event", (params: PiEventParams) => {
    for (const view of views) view.onEvent(params.seq, params.event);
  });
  connection.listen();
  await connection.sendRequest("initialize", {
    processId: process.pid,
    rootUri: null,
    capabilities: { experimental: { pi: { approvals: true } } },
    initializationOptions: { pi: { thinkingLevel: "off", tokenizer: "estimate", retry: { enabled: false }, token: state.token } },
  });
  await connection.sendNotification("initialized", {});
  return { connection, pid: state.pid, started, views };
}

/** What a reload does to the old window: shutdown, exit, connection closed. */
async function closeWindow(window: Window): Promise<void> {
  await window.connection.sendRequest("shutdown");
  await window.connection.sendNotification("exit");
  window.connection.dispose();
}

const texts = (sync: ChatSync): string[][] => sync.transcript.messages.map((m) => [m.kind, m.text]);

/**
 * A loopback fake model replying in two `chunks` (it pauses between them), a scratch HOME and the shared server's state files.
 * The detached server keeps the environment of the window that started it (this process's), so the
 * model's address and a test key go into process.env.
 */
async function sharedWorld(chunks: [string, string], prefix: string) {
  const fake = new FakeModel(chunks);
  const url = await fake.start();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  Object.assign(process.env, { HOME: home, PI_CODING_AGENT_DIR: path.join(home, "agent"), ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: url });
  const files = sharedServerFiles(path.join(home, "storage"), { command: serverCommand as string, args: [] });
  return {
    fake,
    files,
    /** A new session in `home/work` through `window`. */
    newSession: async (window: Window): Promise<{ file: string }> => {
      fs.mkdirSync(path.join(home, "work"), { recursive: true });
      return window.connection.sendRequest<{ file: string }>("pi/newSession", { cwd: path.join(home, "work"), sessionDir: path.join(home, "sessions") });
    },
    close: async (): Promise<void> => {
      await stopShared(files);
      fake.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

test("a run goes on through a window reload: the second connection sees it continue to its end", { skip: needsServer, timeout: 60_000 }, async () => {
  const { fake, files, newSession, close } = await sharedWorld(["Hel", "lo there"], "pi-shared-run-");
  try {
    const first = await openWindow(files);
    assert.equal(first.started, true);
    const session = await newSession(first);
    const live = new ChatSync((method, params) => first.connection.sendRequest(method, params));
    await live.load();
    first.views.push(live);
    void first.connection.sendRequest("pi/prompt", { text: "hello", streamingBehavior: "steer" }).catch(() => undefined);
    await fake.pausedOnce;
    await until(() => texts(live).some(([kind, text]) => kind === "assistant" && text === "Hel"), "the first delta");

    await closeWindow(first); // the window reloads in the middle of the reply

    const second = await openWindow(files);
    assert.equal(second.started, false, "the reloaded window found the running server");
    assert.equal(second.pid, first.pid);
    await second.connection.sendRequest("pi/openSession", { path: session.file });
    const reloaded = new ChatSync((method, params) => second.connection.sendRequest(method, params));
    second.views.push(reloaded);
    await reloaded.load();
    assert.equal(reloaded.running, true, "the run is still in progress");
    assert.deepEqual(texts(reloaded), [["user", "hello"], ["assistant", "Hel"]]);

    fake.finish();
    await until(() => !reloaded.running, "agent_end on the second connection");
    assert.deepEqual(texts(reloaded), [["user", "hello"], ["assistant", "Hello there"]]);
    const truth = new ChatSync((method, params) => second.connection.sendRequest(method, params));
    await truth.load();
    assert.deepEqual(reloaded.transcript.messages, truth.transcript.messages);
    const written = fs.readFileSync(session.file, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { message?: { role: string; stopReason?: string } });
    assert.equal(written.filter((entry) => entry.message?.role === "assistant").at(-1)?.message?.stopReason, "stop");
    assert.equal(fake.requests, 1, "the run was not started again");
    await closeWindow(second);

    assert.equal(await stopShared(files), true);
    assert.equal(readServerState(files.state), undefined);
  } finally {
    await close();
  }
});

test("two windows on one session: the second sees the first one's run stream and end", { skip: needsServer, timeout: 60_000 }, async () => {
  const { fake, files, newSession, close } = await sharedWorld(["One ", "two"], "pi-shared-two-");
  try {
    const [a, b] = await Promise.all([openWindow(files), openWindow(files)]); // started at the same moment
    assert.equal(a.pid, b.pid, "both windows use one server");
    assert.equal([a.started, b.started].filter(Boolean).length, 1, "exactly one of them started it");
    const session = await newSession(a);
    await a.connection.sendRequest("pi/appendEntry", {
      entry: { type: "message", message: { role: "user", content: "before", timestamp: Date.now() } },
    });
    await b.connection.sendRequest("pi/openSession", { path: session.file });
    const other = new ChatSync((method, params) => b.connection.sendRequest(method, params));
    await other.load();
    b.views.push(other);
    const prompt = a.connection.sendRequest<{ stopReason: string }>("pi/prompt", { text: "count", streamingBehavior: "steer" });
    await fake.pausedOnce;
    await until(() => texts(other).some(([kind, text]) => kind === "assistant" && text === "One "), "the first delta in the other window");
    assert.equal(other.running, true);
    fake.finish();
    assert.equal((await prompt).stopReason, "stop");
    await until(() => !other.running, "agent_end in the other window");
    assert.deepEqual(texts(other), [["user", "before"], ["user", "count"], ["assistant", "One two"]]);
    await closeWindow(a);
    await closeWindow(b);
  } finally {
    await close();
  }
});
