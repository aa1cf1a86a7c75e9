/** The versions of an edited and resent message (‹ 1/2 ›), worked out from the real server's folded tree. */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { flipVersion, MessageVersions } from "../src/shared/messageVersions";
import type { PlannedFile } from "../src/shared/rewindModel";
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

test("‹ to a version whose code differs asks first, and takes the code along (or not, or cancels); no question when it matches", { skip: needsServer, timeout: 60_000 }, async () => {
  const server = await startServer();
  try {
    const workspace = path.join(server.home, "workspace");
    fs.mkdirSync(workspace);
    const exists = (name: string): boolean => fs.existsSync(path.join(workspace, name));
    await server.request("pi/newSession", { cwd: workspace, sessionDir: path.join(server.home, "sessions") });
    await server.request("pi/bash", { command: "true", excludeFromContext: true }); // the first snapshot: an empty workspace
    const leaf = async (): Promise<string> => (await server.request<{ entries: { id: string }[] }>("pi/getBranch", {})).entries.at(-1)?.id ?? "";
    const before = await leaf();
    // Version 1 writes alpha.txt; version 2, resent from the same point with the code rewound, writes beta.txt.
    const alpha = await say(server, "Write alpha.txt");
    await server.request("pi/bash", { command: "echo alpha > alpha.txt", excludeFromContext: true });
    const alphaLeaf = await leaf();
    await server.request("pi/setLeaf", { id: before, restoreFiles: true });
    assert.ok(!exists("alpha.txt"));
    const beta = await say(server, "Write beta.txt");
    await server.request("pi/bash", { command: "echo beta > beta.txt", excludeFromContext: true });
    const betaLeaf = await leaf();
    const versions = async (): Promise<MessageVersions> => MessageVersions.load(server.request, await server.request<FoldedTree>("pi/getTree", { fold: true }));

    const asked: PlannedFile[][] = [];
    const answer = (reply: boolean | undefined) => (files: PlannedFile[]): Promise<boolean | undefined> => {
      asked.push(files);
      return Promise.resolve(reply);
    };
    // Cancelled: nothing moves.
    assert.deepEqual(await flipVersion(server.request, await versions(), beta, -1, answer(undefined)), { cancelled: true });
    assert.equal(await leaf(), betaLeaf);
    assert.deepEqual(
      asked[0].map((file) => [file.path, file.change]),
      [["alpha.txt", "create"], ["beta.txt", "delete"]],
      "shown what a rewind to version 1 would do",
    );
    // Rewind the code too: the leaf and the files go to version 1.
    const flipped = await flipVersion(server.request, await versions(), beta, -1, answer(true));
    assert.equal(await leaf(), alphaLeaf);
    assert.ok("leafId" in flipped && flipped.leafId === alphaLeaf);
    assert.deepEqual(flipped.restored?.restored.map((file) => file.path).sort(), ["alpha.txt", "beta.txt"]);
    assert.ok(exists("alpha.txt") && !exists("beta.txt"));
    // Keep the code: the leaf goes back to version 2, the files stay version 1's.
    const kept = await flipVersion(server.request, await versions(), alpha, 1, answer(false));
    assert.deepEqual(kept, { leafId: betaLeaf });
    assert.ok(exists("alpha.txt") && !exists("beta.txt"));
    assert.equal(asked.length, 3);
    // The files already are version 1's: back to it without a question.
    assert.deepEqual(await flipVersion(server.request, await versions(), beta, -1, answer(undefined)), { leafId: alphaLeaf });
    assert.equal(asked.length, 3, "no question when the code is the same");
    // No version there: gone, nothing asked.
    assert.deepEqual(await flipVersion(server.request, await versions(), alpha, -1, answer(true)), { gone: true });
  } finally {
    server.close();
  }
});
