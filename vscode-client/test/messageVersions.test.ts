/** The versions of an edited and resent message (‹ 1/2 ›), worked out from the real server's folded tree. */
import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { MessageVersions } from "../src/shared/messageVersions";
import type { FoldedTree } from "../src/shared/protocol";
import { assistantEntry, needsServer, say, startServer } from "./realServer";

test("a resent message and the one it replaced are versions 1/2 and 2/2; flipping goes to the newest leaf of the other", { skip: needsServer, timeout: 60_000 }, async () => {
  const server = await startServer();
  try {
    await server.request("pi/newSession", { cwd: server.home, sessionDir: path.join(server.home, "sessions") });
    const reply = async (text: string): Promise<string> =>
      (await server.request<{ id: string }>("pi/appendEntry", { entry: assistantEntry([{ type: "text", text }]) })).id;
    const start = await say(server, "Start");
    const started = await reply("Started.");
    const first = await say(server, "Say hello");
    await reply("Hello.");
    // The first version goes on for a while, then is left for an edited one (edit and resend).
    await say(server, "And then?");
    const firstNewest = await reply("Then nothing.");
    await server.request("pi/setLeaf", { id: started });
    // The resent message's run writes a checkpoint first: the version starts past it.
    await server.request("pi/appendEntry", { entry: { type: "custom", customType: "checkpoint", data: {} } });
    const second = await say(server, "Say hello again");
    const secondLeaf = await reply("Hello again.");

    const versions = await MessageVersions.load(server.request, await server.request<FoldedTree>("pi/getTree", { fold: true }));
    assert.deepEqual(versions.places([start, first, second]), { [first]: { index: 1, count: 2 }, [second]: { index: 2, count: 2 } });
    assert.equal(versions.target(second, -1), firstNewest);
    assert.equal(versions.target(first, 1), secondLeaf);
    assert.equal(versions.target(first, -1), undefined);
    assert.equal(versions.target(second, 1), undefined);
    assert.equal(versions.target(start, 1), undefined); // one version only

    // Flipping moves the leaf there: the branch shown is the first version's whole conversation.
    await server.request("pi/setLeaf", { id: versions.target(second, -1) });
    const { entries } = await server.request<{ entries: { id: string }[] }>("pi/getBranch", {});
    assert.ok(entries.some((entry) => entry.id === first));
    assert.equal(entries.at(-1)?.id, firstNewest);
  } finally {
    server.close();
  }
});

test("an empty session, or one with no resent message, offers no versions", () => {
  assert.deepEqual(new MessageVersions().places(["a"]), {});
  const tree: FoldedTree = { leafId: null, format: "folded", rootIds: [], leafSegmentId: null, segments: [] };
  assert.deepEqual(new MessageVersions(tree).places(["a"]), {});
  assert.deepEqual(new MessageVersions(undefined).places(["a"]), {});
});
