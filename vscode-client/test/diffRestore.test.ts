/** Diff tabs restored after a reload: their address names their origin, and the texts are derived again. */
import assert from "node:assert/strict";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { diffQuery, findToolCall, parseDiffQuery, rederiveDiff, toolFile, unavailableReason, unavailableText, type DiffOrigin } from "../src/host/diffRestore";
import { assistantEntry, needsServer, say, startServer } from "./realServer";

const proposed: DiffOrigin = { sessionId: "s1", toolCallId: "toolu_1", kind: "proposed", path: "/w/a b&c.py" };

test("a diff side's address carries its key, side and origin, and reads back", () => {
  assert.deepEqual(parseDiffQuery(diffQuery("w1-3", "before", proposed)), { key: "w1-3", side: "before", origin: proposed });
  assert.deepEqual(parseDiffQuery(diffQuery("w1-4", "after", undefined)), { key: "w1-4", side: "after" });
  // An address from before origins were written (a bare key) still parses, with no origin.
  assert.deepEqual(parseDiffQuery("7"), { key: "7", side: "after" });
});

test("a proposed edit is derived again from the approval still waiting, else from its call in the branch", async () => {
  const asked: string[] = [];
  let pending: object[] = [
    { toolCallId: "other", toolName: "write", args: { path: "/w/x", content: "no" } },
    { toolCallId: "toolu_1", toolName: "edit", args: { path: "a.py", edits: [{ oldText: "one", newText: "ONE" }] }, preview: { path: "/w/a.py" } },
  ];
  let branch: object[] = [];
  const request = <T>(method: string): Promise<T> => {
    asked.push(method);
    if (method === "pi/getBranch") return Promise.resolve({ entries: branch, hasMore: false } as T);
    return Promise.resolve({ running: true, seq: 1, tools: [], pendingApprovals: pending } as T);
  };
  const files = new Map([["/w/a.py", "one two\n"]]);
  const read = (file: string) => Promise.resolve(files.get(file));
  assert.deepEqual(await rederiveDiff(request, proposed, read), { title: "a.py (proposed edit)", before: "one two\n", after: "ONE two\n" });
  assert.deepEqual(asked, ["pi/getRunState"]);
  // Answered meanwhile: what the call replaces and with what, from the branch; gone from the branch: nothing.
  pending = [];
  assert.equal(await rederiveDiff(request, proposed, read), undefined);
  const call = { type: "toolCall", id: "toolu_1", name: "edit", arguments: { path: "a.py", edits: [{ oldText: "one", newText: "ONE" }] } };
  branch = [{ type: "message", id: "e1", message: { role: "assistant", content: [call] } }];
  assert.deepEqual(await rederiveDiff(request, proposed, read), { title: "a.py (edit, the changed parts only)", before: "one", after: "ONE" });
});

test("a tab that cannot be derived again says why, in words", () => {
  assert.match(unavailableText(proposed, unavailableReason(proposed, "s1")), /^The proposed change to \/w\/a b&c.py cannot be shown again .*no longer waiting/);
  assert.match(unavailableReason(proposed, "s2"), /another session/);
  assert.match(unavailableReason(proposed, undefined), /not open/);
  assert.match(unavailableText(undefined, unavailableReason(undefined, "s1")), /^This diff cannot be shown again/);
  assert.match(unavailableText(undefined, "x"), /Open diff/);
});

test("a recorded edit is found in the branch, pages back from the leaf", { skip: needsServer, timeout: 60_000 }, async () => {
  const server = await startServer();
  try {
    await server.request("pi/newSession", { cwd: server.home, sessionDir: path.join(server.home, "sessions") });
    await say(server, "change it");
    const call = { type: "toolCall", id: "toolu_edit", name: "edit", arguments: { path: "a.py", edits: [{ oldText: "a", newText: "b" }] } };
    await server.request("pi/appendEntry", { entry: assistantEntry([{ type: "text", text: "ok" }, call], 100, "toolUse") });
    for (let n = 0; n < 25; n += 1) await say(server, `later ${n}`);
    assert.deepEqual(await findToolCall(server.request, "toolu_edit", 10), { name: "edit", args: call.arguments });
    assert.equal(await findToolCall(server.request, "toolu_missing", 10), undefined);
    const sides = await rederiveDiff(server.request, { sessionId: "s", toolCallId: "toolu_edit", kind: "recorded", path: "a.py" }, () => Promise.resolve(undefined));
    assert.deepEqual(sides, { title: "a.py (edit, the changed parts only)", before: "a", after: "b" });
    // With the file there, a restored tab shows the whole file at the change, as the first open did.
    const whole = await rederiveDiff(server.request, { sessionId: "s", toolCallId: "toolu_edit", kind: "recorded", path: "a.py" }, (file) =>
      Promise.resolve(file === "a.py" ? "x = 1\nb\n" : undefined),
    );
    assert.deepEqual(whole, { title: "a.py (edit)", before: "x = 1\na\n", after: "x = 1\nb\n", line: 1 });
  } finally {
    server.close();
  }
});

test("a tool's path names a file as pi reads it: from the session's folder, without a leading @, ~ at home", () => {
  assert.equal(toolFile("notes.txt", "/work/project"), path.join("/work/project", "notes.txt"));
  assert.equal(toolFile("@src/a.py", "/work/project"), path.join("/work/project", "src/a.py"));
  assert.equal(toolFile("/etc/hosts", "/work/project"), "/etc/hosts");
  assert.equal(toolFile("~/x.txt", "/work/project"), path.join(os.homedir(), "x.txt"));
});
