import assert from "node:assert/strict";
import { test } from "node:test";
import { DETAIL_LIMIT, approvalAnswer, approvalQuestion } from "../src/shared/approvalModel";

const base = { sessionId: "s", toolCallId: "t", cwd: "/w" };

test("a bash request shows the command", () => {
  const q = approvalQuestion({ ...base, toolName: "bash", args: { command: "ls" }, preview: { command: "ls" } });
  assert.equal(q.message, "pi wants to run: ls");
  assert.equal(q.detail, "ls");
});

test("an edit shows its path, whether it is outside the workspace, and the diff (cut when long)", () => {
  const diff = "+x\n".repeat(DETAIL_LIMIT);
  const q = approvalQuestion({
    ...base,
    toolName: "edit",
    args: {},
    preview: { path: "/etc/hosts", diff, outsideWorkspace: true },
  });
  assert.equal(q.message, "pi wants to edit /etc/hosts (outside the workspace)");
  assert.ok(q.detail.startsWith("+x\n+x"));
  assert.ok(q.detail.length < DETAIL_LIMIT + 100);
});

test("a session whose folder is outside the workspace says so, for commands and edits", () => {
  const outside = { ...base, cwd: "/" };
  const run = approvalQuestion({
    ...outside,
    toolName: "bash",
    args: {},
    preview: { command: "ls", cwdOutsideWorkspace: true },
  });
  assert.equal(run.message, "pi wants to run: ls — the session's folder / is outside the workspace");
  const write = approvalQuestion({
    ...outside,
    toolName: "write",
    args: {},
    preview: { path: "/w/a.txt", diff: "+a", outsideWorkspace: false, cwdOutsideWorkspace: true },
  });
  assert.equal(write.message, "pi wants to write /w/a.txt — the session's folder / is outside the workspace");
});

test("each choice maps to the protocol's decision; dismissing denies with a reason", () => {
  assert.deepEqual(approvalAnswer("Allow"), { decision: "allow" });
  assert.deepEqual(approvalAnswer("Allow always"), { decision: "allowAlways" });
  assert.deepEqual(approvalAnswer("Deny"), { decision: "deny" });
  const dismissed = approvalAnswer(undefined);
  assert.equal(dismissed.decision, "deny");
  assert.ok(dismissed.reason);
});
