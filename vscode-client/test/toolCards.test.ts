import assert from "node:assert/strict";
import { test } from "node:test";
import { editReplacements, isCollapsedTool, proposedDiff, recordedDiff, toolSummary } from "../src/shared/toolCards";

test("tool summaries say what the call does in one line", () => {
  assert.equal(toolSummary("bash", { command: "npm test" }), "$ npm test");
  assert.equal(toolSummary("read", { path: "src/a.ts", offset: 3 }), "read src/a.ts");
  assert.equal(toolSummary("grep", { pattern: "TODO", path: "src" }), 'grep "TODO" in src');
  assert.equal(toolSummary("find", { pattern: "*.py" }), 'find "*.py"');
  assert.equal(toolSummary("mystery", { a: 1 }), 'mystery {"a":1}');
  assert.deepEqual(["read", "grep", "find", "ls", "bash", "edit"].map(isCollapsedTool), [true, true, true, true, false, false]);
});

test("a proposed edit applies each replacement to the file as it is now; a write replaces it", () => {
  const args = { path: "a.txt", edits: [{ oldText: "one", newText: "1" }, { oldText: "three", newText: "3" }] };
  assert.deepEqual(proposedDiff("edit", args, "one two three"), { title: "a.txt (proposed edit)", before: "one two three", after: "1 two 3" });
  assert.deepEqual(proposedDiff("write", { path: "n.txt", content: "new" }, undefined), {
    title: "n.txt (proposed write)",
    before: "",
    after: "new",
  });
  assert.equal(proposedDiff("bash", { command: "x" }, ""), undefined);
  // pi's legacy top-level oldText/newText still counts.
  assert.deepEqual(editReplacements({ oldText: "a", newText: "b" }), [{ oldText: "a", newText: "b" }]);
});

test("a finished edit's diff is the whole file at its first change", () => {
  const now = "one\ntwo, edited\nthree\nfour\nFIVE\nsix\n";
  const edits = [
    { oldText: "five", newText: "FIVE" },
    { oldText: "two", newText: "two, edited" },
  ];
  assert.deepEqual(recordedDiff("edit", { path: "a.txt", edits }, now), {
    title: "a.txt (edit)",
    before: "one\ntwo\nthree\nfour\nfive\nsix\n",
    after: now,
    line: 1, // the first change in the file, whichever edit came first in the call
  });
});

test("a finished edit the file no longer shows (or a deletion, or no file) is the texts it replaced", () => {
  const edits = [
    { oldText: "x", newText: "y" },
    { oldText: "p", newText: "q" },
  ];
  const parts = { title: "a (edit, the changed parts only)", before: "x\n…\np", after: "y\n…\nq" };
  assert.deepEqual(recordedDiff("edit", { path: "a", edits }), parts);
  assert.deepEqual(recordedDiff("edit", { path: "a", edits }, "y only\n"), parts); // q was changed since
  assert.deepEqual(recordedDiff("edit", { path: "a", edits: [{ oldText: "gone\n", newText: "" }] }, "rest\n"), {
    title: "a (edit, the changed parts only)",
    before: "gone\n",
    after: "",
  });
});
