import assert from "node:assert/strict";
import { test } from "node:test";
import { CheckpointMarks, describePreview, OVERWRITE_CHOICE, pointWords, RESTORE_CHOICE, restoredSummary } from "../src/shared/rewindModel";

const message = (id: string) => ({ id, type: "message", message: { role: "user", content: "x" } });
const checkpoint = (id: string) => ({ id, type: "custom", customType: "pi-lsp/checkpoint", data: { snapshot: "s", files: [] } });

test("messages after a checkpoint entry have a workspace state; older pages and live events extend it", () => {
  const marks = CheckpointMarks.fromBranch([message("a"), checkpoint("c1"), message("b"), { id: "l", type: "label" }, message("d")]);
  assert.deepEqual(marks.ids(), ["b", "l", "d"]);
  assert.equal(marks.has("a"), false);
  marks.prepend([checkpoint("c0")]);
  assert.ok(marks.has("a"));
  const fresh = CheckpointMarks.fromBranch([message("a")]);
  assert.equal(fresh.onEvent({ type: "message_end", message: { role: "user" }, entryId: "u0" }), false);
  assert.equal(fresh.onEvent({ type: "checkpoint", entryId: "c", files: [] }), false);
  assert.equal(fresh.onEvent({ type: "message_end", message: { role: "user" }, entryId: "u1" }), true);
  assert.deepEqual(fresh.ids(), ["u1"]);
});

test("a restore preview names what happens to each file, and a conflict offers Overwrite anyway apart", () => {
  const plain = describePreview([
    { path: "a.txt", change: "create", conflict: false },
    { path: "b.txt", change: "modify", conflict: false },
    { path: "c.txt", change: "delete", conflict: false },
    { path: "d.txt", change: "delete", conflict: false },
  ]);
  assert.equal(plain.message, "Rewind code to here: create 1 file, change 1 file, delete 2 files?");
  assert.equal(plain.detail, "create: a.txt\nchange: b.txt\ndelete: c.txt\ndelete: d.txt");
  assert.deepEqual(plain.choices, [RESTORE_CHOICE]);
  const conflicted = describePreview([{ path: "b.txt", change: "modify", conflict: true }]);
  assert.deepEqual(conflicted.choices, [RESTORE_CHOICE, OVERWRITE_CHOICE]);
  assert.match(conflicted.detail, /change: b\.txt \(changed since pi saw it\)/);
  assert.match(conflicted.detail, /Restore files leaves it alone; Overwrite anyway replaces it too/);
  assert.deepEqual(describePreview([]).choices, []);
  // The point it goes back to, named first (a menu opened on a row that moved says which row it was).
  const named = describePreview([{ path: "a.txt", change: "create", conflict: false }], pointWords("assistant", "alpha.txt\n  is written."));
  assert.equal(named.detail, "To: assistant: alpha.txt is written.\n\ncreate: a.txt");
  assert.equal(describePreview([], "user: Write beta.txt").detail, "To: user: Write beta.txt\n\nNothing would be written.");
  assert.equal(pointWords("user", "x".repeat(200)).length, "user: ".length + 80);
  assert.equal(pointWords("assistant", "  "), "assistant");
});

test("what the chat says after a restore and its undo", () => {
  assert.equal(
    restoredSummary({ restored: [{ path: "a.txt", change: "create" }, { path: "b.txt", change: "delete" }], conflicts: ["c.txt"], undoId: "u" }),
    "Rewound the code: restored 2 files: a.txt (created), b.txt (deleted). Left alone (changed since pi saw them): c.txt.",
  );
  assert.equal(restoredSummary({ restored: [{ path: "a.txt", change: "delete" }], conflicts: [] }, true), "Undo restore: put back 1 file: a.txt (deleted).");
});
