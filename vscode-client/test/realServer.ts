/** The real pi-lsp over stdio for tests (PI_LSP_COMMAND, set by `make vscode-test`), in a scratch HOME. */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import type { Requester } from "../src/host/treeModel";

export const serverCommand = process.env.PI_LSP_COMMAND;
/** For test options: skip with a reason when no server was given. */
export const needsServer = serverCommand ? false : "PI_LSP_COMMAND not set";

export interface RealServer {
  connection: MessageConnection;
  request: Requester;
  home: string;
  close(): void;
}

/** `env` adds to (or overrides) the server's environment, e.g. a key and a fake model's address. */
export async function startServer(
  piSettings: Record<string, unknown> = { tokenizer: "estimate" },
  env: Record<string, string> = {},
): Promise<RealServer> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "pi-vscode-"));
  const child = spawn(serverCommand as string, ["--stdio"], {
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: path.join(home, "agent"), ANTHROPIC_API_KEY: "", ...env },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  connection.listen();
  await connection.sendRequest("initialize", {
    processId: process.pid,
    rootUri: null,
    capabilities: { experimental: { pi: { approvals: true } } },
    initializationOptions: { pi: piSettings },
  });
  await connection.sendNotification("initialized", {});
  return {
    connection,
    request: <T>(method: string, params: object) => connection.sendRequest<T>(method, params),
    home,
    close() {
      connection.dispose();
      child.kill();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Append a user message at the leaf; its entry id. */
export async function say(server: RealServer, text: string): Promise<string> {
  const { id } = await server.request<{ id: string }>("pi/appendEntry", {
    entry: { type: "message", message: { role: "user", content: text, timestamp: Date.now() } },
  });
  return id;
}

const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };

/** An assistant message entry as pi writes one (for `pi/appendEntry`), with `content` and its usage. */
export function assistantEntry(content: object[], totalTokens = 100, stopReason = "stop"): Record<string, unknown> {
  return {
    type: "message",
    message: {
      role: "assistant",
      content,
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-test",
      usage: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens, cost: ZERO_COST },
      stopReason,
      timestamp: Date.now(),
    },
  };
}
