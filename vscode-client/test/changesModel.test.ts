/**
 * The Changes view's data and the rewind preview against the real pi-lsp: checkpoints made by
 * `pi/bash` in a scratch workspace, then `pi/getChanges`, the diff sides, `pi/previewRestore` as the
 * modal words it, and which messages have a workspace state.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { changeSides, lastRunChanges, sessionChanges, shownChanges, type ChangeSet } from "../src/host/changesModel";
import { CheckpointMarks, describePreview, OVERWRITE_CHOICE, type PlannedFile } from "../src/shared/rewindModel";
import { needsServer, say, startServer } from "./realServer";

test("a run's changes, their diff sides, and a rewind preview with a conflict", { skip: needsServer, timeout: 60_000 }, async () => {
  const server = await startServer();
  try {
    const workspace = path.join(server.home, "workspace");
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, "a.txt"), "one\n");
    await server.request("pi/newSession", { cwd: workspace, sessionDir: path.join(server.home, "sessions") });
    await server.request("pi/bash", { command: "true", excludeFromContext: true }); // the first snapshot: a.txt = one
    const asked = await say(server, "change a.txt and add b.txt");
    await server.request("pi/bash", { command: "printf 'two\\n' > a.txt; printf 'new\\n' > b.txt", excludeFromContext: true });

    const run = await lastRunChanges(server.request);
    assert.equal(run.fromId, asked);
    assert.deepEqual(run.files, [{ path: "a.txt", change: "modified" }, { path: "b.txt", change: "added" }]);
    const session = await sessionChanges(server.request);
    assert.deepEqual(session.files, run.files);

    const { files } = await server.request<{ files: { path: string; diff: string }[] }>("pi/getChanges", { fromId: run.fromId, paths: ["a.txt"], diff: true });
    assert.deepEqual(changeSides(files[0].diff, fs.readFileSync(path.join(workspace, "a.txt"), "utf8")), { before: "one\n", after: "two\n" });
    // Changed since: the recorded diff, in words, instead of wrong sides.
    const stale = changeSides(files[0].diff, "something else\n");
    assert.equal(typeof stale, "string");
    assert.match(stale as string, /changed on disk since/);

    const { entries } = await server.request<{ entries: Record<string, unknown>[] }>("pi/getBranch", {});
    const marks = CheckpointMarks.fromBranch(entries);
    assert.ok(marks.has(asked), "the user message after the first checkpoint has a workspace state");

    fs.writeFileSync(path.join(workspace, "b.txt"), "by hand\n");
    const preview = await server.request<{ files: PlannedFile[] }>("pi/previewRestore", { targetId: asked });
    const words = describePreview(preview.files);
    assert.equal(words.message, "Rewind code to here: change 1 file, delete 1 file?");
    assert.match(words.detail, /delete: b\.txt \(changed since pi saw it\)/);
    assert.ok(words.choices.includes(OVERWRITE_CHOICE));
  } finally {
    server.close();
  }
});

test("what the Changes view's rows show: a moved end point is the same rows, a file's change is not", () => {
  const run = (toId: string, files: ChangeSet["files"]): ChangeSet => ({ scope: "run", fromId: "u1", toId, files });
  const before = shownChanges([run("a1", [{ path: "long.txt", change: "modified" }])]);
  // The run's last entry moved (its final reply was appended): the same rows, no redraw.
  assert.deepEqual(shownChanges([run("a2", [{ path: "long.txt", change: "modified" }])]), before);
  assert.notDeepEqual(shownChanges([run("a2", [{ path: "long.txt", change: "added" }])]), before);
  assert.notDeepEqual(shownChanges([run("a2", [{ path: "long.txt", change: "modified" }, { path: "b.txt", change: "added" }])]), before);
  assert.notDeepEqual(shownChanges([{ ...run("a1", [{ path: "long.txt", change: "modified" }]), scope: "session" }]), before);
});
