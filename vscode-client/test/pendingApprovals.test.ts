import assert from "node:assert/strict";
import { test } from "node:test";
import { approvalCard, PendingApprovals, type ApprovalRequest } from "../src/shared/approvalModel";

const edit: ApprovalRequest = {
  sessionId: "s",
  toolCallId: "t1",
  toolName: "edit",
  args: { path: "a.py", edits: [] },
  cwd: "/w",
  preview: { path: "/w/a.py", diff: "-a\n+b", outsideWorkspace: false },
};

test("an approval card shows the diff or command and says whether a diff can be opened", () => {
  assert.deepEqual(approvalCard(edit), { toolCallId: "t1", title: "pi wants to edit a.py", detail: "-a\n+b", diffable: true });
  const bash = approvalCard({ ...edit, toolCallId: "t2", toolName: "bash", args: { command: "rm x" }, preview: { command: "rm x" } });
  assert.deepEqual([bash.title, bash.detail, bash.diffable], ["pi wants to run a command", "rm x", false], "the command once, in the detail");
});

test("a waiting approval is answered once by its card; a settled one is dropped", async () => {
  const pending = new PendingApprovals();
  const first = pending.ask(edit);
  const second = pending.ask({ ...edit, toolCallId: "t2" });
  assert.deepEqual(pending.cards().map((card) => card.toolCallId), ["t1", "t2"]);
  assert.equal(pending.answer("t1", { decision: "deny", reason: "not that file" }), true);
  assert.equal(pending.answer("t1", { decision: "allow" }), false);
  assert.deepEqual(await first, { decision: "deny", reason: "not that file" });
  assert.equal(pending.settled("t2"), true);
  assert.equal((await second).decision, "deny");
  assert.deepEqual(pending.cards(), []);
  assert.equal(pending.request("t2"), undefined);
});
