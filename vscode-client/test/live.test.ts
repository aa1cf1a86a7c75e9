/**
 * A session written by another program (pi's CLI appending to the file) shows up live: the server
 * sends pi/sessionChanged (reason external), which the extension answers by fetching the tree
 * again; the new entry is then the leaf the Session Tree marks.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { FoldedTree, SessionTreeModel } from "../src/host/treeModel";
import { needsServer, say, startServer } from "./realServer";

test("an entry appended to the file by another program becomes the tree's leaf", { skip: needsServer, timeout: 60_000 }, async () => {
  const server = await startServer();
  try {
    const state = await server.request<{ sessionId: string; file: string }>("pi/newSession", { cwd: server.home, sessionDir: path.join(server.home, "sessions") });
    const first = await say(server, "written by the editor");
    await server.request("pi/appendEntry", {
      entry: { type: "message", message: { role: "assistant", content: [{ type: "text", text: "ok" }], api: "anthropic-messages", provider: "anthropic", model: "m", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() } },
    });
    const { leafId } = await server.request<{ leafId: string }>("pi/getSessionState", {});
    assert.ok(fs.existsSync(state.file));

    const external = new Promise<{ sessionId: string; leafId: string; reason: string }>((resolve) => {
      server.connection.onNotification("pi/sessionChanged", (params: { sessionId: string; leafId: string; reason: string }) => {
        if (params.reason === "external") resolve(params);
      });
    });
    const line = {
      type: "message",
      id: "c11e0001",
      parentId: leafId,
      timestamp: new Date().toISOString(),
      message: { role: "user", content: [{ type: "text", text: "written by pi's CLI" }], timestamp: Date.now() },
    };
    fs.appendFileSync(state.file, `${JSON.stringify(line)}\n`);
    const changed = await external;
    assert.equal(changed.sessionId, state.sessionId);
    assert.equal(changed.leafId, "c11e0001");

    const model = new SessionTreeModel(await server.request<FoldedTree>("pi/getTree", { fold: true }), server.request);
    assert.ok(model.isLeaf("c11e0001"));
    const [root] = model.roots();
    const rows = await model.children(root);
    const ids = rows.map((row) => (row.kind === "entry" ? row.entry.id : ""));
    assert.deepEqual(ids.slice(-3), [first, leafId, "c11e0001"]);
  } finally {
    server.close();
  }
});
