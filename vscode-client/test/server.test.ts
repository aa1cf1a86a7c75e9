/**
 * Against the real pi-lsp over stdio (PI_LSP_COMMAND, set by `make vscode-test`): the shapes the
 * extension relies on (flat tree, session stats' contextUsage) feed the tree and gauge models.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { ChatTranscript } from "../src/shared/chatModel";
import { gaugeView } from "../src/host/gaugeModel";
import { FoldedTree, SessionTreeModel, describeEntry } from "../src/host/treeModel";

const serverCommand = process.env.PI_LSP_COMMAND;

test("session tree and gauge from a real server", { skip: serverCommand ? false : "PI_LSP_COMMAND not set" }, async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "pi-vscode-"));
  const child = spawn(serverCommand as string, ["--stdio"], {
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: path.join(home, "agent"), ANTHROPIC_API_KEY: "" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  connection.listen();
  try {
    const init = await connection.sendRequest<{ capabilities: { experimental: { pi: { getTreeFormats: string[] } } } }>(
      "initialize",
      {
        processId: process.pid,
        rootUri: null,
        capabilities: { experimental: { pi: { approvals: true } } },
        initializationOptions: { pi: { compaction: { reserveTokens: 8000 }, tokenizer: "estimate" } },
      },
    );
    assert.ok(init.capabilities.experimental.pi.getTreeFormats.includes("flat"));
    await connection.sendNotification("initialized", {});
    const state = await connection.sendRequest<{ sessionId: string }>("pi/newSession", {
      cwd: home,
      sessionDir: path.join(home, "sessions"),
    });
    const user = await connection.sendRequest<{ id: string }>("pi/appendEntry", {
      entry: { type: "message", message: { role: "user", content: "hello tree", timestamp: Date.now() } },
    });
    await connection.sendRequest("pi/appendEntry", {
      entry: { type: "message", message: { role: "user", content: "second", timestamp: Date.now() } },
    });
    // Branch back to the first message and append a sibling.
    await connection.sendRequest("pi/setLeaf", { id: user.id });
    const sibling = await connection.sendRequest<{ id: string }>("pi/appendEntry", {
      entry: { type: "message", message: { role: "user", content: "other way", timestamp: Date.now() } },
    });

    const tree = await connection.sendRequest<FoldedTree>("pi/getTree", { fold: true });
    const model = new SessionTreeModel(tree, (method, params) => connection.sendRequest(method, params));
    assert.equal(model.leafId, sibling.id);
    const [root] = model.roots();
    assert.equal(model.entryOf(root)?.id, user.id);
    assert.equal((await model.children(root)).length, 2);
    assert.ok(model.isOnBranch(user.id) && model.isLeaf(sibling.id));
    assert.match(describeEntry(model.entryOf(root)!), /^user: hello tree/);

    const branch = await connection.sendRequest<{ entries: Record<string, unknown>[] }>("pi/getBranch", {});
    assert.deepEqual(
      ChatTranscript.fromBranch(branch.entries).messages.map((m) => [m.kind, m.text]),
      [["user", "hello tree"], ["user", "other way"]],
    );

    const stats = await connection.sendRequest<{ contextUsage: Parameters<typeof gaugeView>[0] }>(
      "pi/getSessionStats",
      {},
    );
    assert.equal(stats.contextUsage.contextWindow > 0, true);
    assert.match(gaugeView(stats.contextUsage, 8000).text, /^pi (\d+|\?)%$/);
    assert.ok(state.sessionId);
  } finally {
    connection.dispose();
    child.kill();
    fs.rmSync(home, { recursive: true, force: true });
  }
});
