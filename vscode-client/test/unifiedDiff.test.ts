/**
 * Unified diffs and per-hunk review against the server's own diff code: the hunks pi-lsp puts in an
 * approval preview (`diff_hunks`), composed here, must make the file the server writes for the same
 * choice (`apply_hunks`), so what the diff editor shows is what is written.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { test } from "node:test";
import type { ApprovalRequest } from "../src/shared/approvalModel";
import { HunkReview } from "../src/host/hunkReviewModel";
import { applyDiff, composeHunks, DiffMismatch, parseHunks, unapplyDiff } from "../src/host/unifiedDiff";
import { needsServer, serverCommand } from "./realServer";

const python = serverCommand ? path.join(path.dirname(serverCommand), "python") : "";

/** The server's hunks for before → after, and what it writes for each subset of them. */
interface ServerDiff {
  hunks: { index: number; header: string; diff: string }[];
  applied: Record<string, string>;
  unified: string;
}

function serverHunks(before: string | null, after: string): ServerDiff {
  const script = `
import itertools, json, sys
from pi_lsp.agent.tools.diff import apply_hunks, diff_hunks, unified_diff
before, after = json.load(sys.stdin)
hunks = diff_hunks(before, after)
applied = {}
for size in range(len(hunks) + 1):
    for chosen in itertools.combinations(range(len(hunks)), size):
        applied[",".join(map(str, chosen))] = apply_hunks(before, after, set(chosen))
print(json.dumps({"hunks": [h.to_wire() for h in hunks], "applied": applied, "unified": unified_diff("f.txt", before, after)}))
`;
  return JSON.parse(execFileSync(python, ["-c", script], { input: JSON.stringify([before, after]) }).toString()) as ServerDiff;
}

const lines = (count: number, prefix = "line"): string => Array.from({ length: count }, (_v, i) => `${prefix} ${i + 1}\n`).join("");

const CASES: [string, string | null, string][] = [
  ["two far-apart changes", lines(20), lines(20).replace("line 2\n", "line two\n").replace("line 18\n", "line eighteen\nand more\n")],
  ["three changes, one a deletion", lines(30), lines(30).replace("line 3\n", "").replace("line 15\n", "line XV\n").replace("line 27\n", "line 27\nline 27b\n")],
  ["no final newline", "a\nb\nc", "a\nB\nc"],
  ["a new file", null, "one\ntwo\n"],
  ["an emptied file", "gone\n", ""],
];

for (const [name, before, after] of CASES) {
  test(`per-hunk compose equals the server's apply_hunks: ${name}`, { skip: needsServer }, () => {
    const server = serverHunks(before, after);
    const parsed = server.hunks.map((hunk) => parseHunks(hunk.diff)[0]);
    for (const [key, expected] of Object.entries(server.applied)) {
      const chosen = new Set(key === "" ? [] : key.split(",").map(Number));
      assert.equal(composeHunks(before ?? "", parsed, chosen).text, expected, `hunks {${key}}`);
    }
    // The whole diff forwards and backwards.
    assert.equal(applyDiff(before ?? "", server.unified), after);
    assert.equal(unapplyDiff(after, server.unified), before ?? "");
  });
}

test("a hunk review: the card's count, the answer that writes what was shown", { skip: needsServer }, () => {
  const before = lines(20);
  const after = before.replace("line 2\n", "line two\n").replace("line 10\n", "line ten\n").replace("line 18\n", "line eighteen\n");
  const server = serverHunks(before, after);
  const request: ApprovalRequest = {
    sessionId: "s",
    toolCallId: "t",
    toolName: "edit",
    args: {},
    cwd: "/w",
    preview: { path: "/w/f.txt", hunks: server.hunks, newContent: after },
  };
  assert.ok(HunkReview.applies(request));
  const review = new HunkReview(request, before);
  assert.equal(review.count, 3);
  assert.equal(review.summary(), "3 of 3 changes accepted");
  assert.deepEqual(review.answer("allow", review.text), { decision: "allow" });
  review.set(1, false);
  assert.equal(review.summary(), "2 of 3 changes accepted");
  assert.equal(review.text, server.applied["0,2"]);
  assert.deepEqual(review.answer("allow", review.text), { decision: "allow", hunks: [0, 2] });
  assert.deepEqual(review.answer("allowAlways", review.text), { decision: "allow", hunks: [0, 2] });
  // Where each hunk is drawn: the first starts 0-based at the context line above "line two".
  assert.deepEqual(review.placements.map((p) => [p.startLine, p.accepted]), [[0, true], [6, false], [14, true]]);
  // The proposed text edited by hand: that text is written.
  const edited = review.text.replace("line two", "line 2, by hand");
  assert.deepEqual(review.answer("allow", edited), { decision: "allow", content: edited });
  assert.deepEqual(review.answer("deny", edited, "no"), { decision: "deny", reason: "no" });
  review.set(1);
  assert.equal(review.text, after);
});

test("hunks that do not fit the file now are refused (the whole change is reviewed instead)", () => {
  const diff = "@@ -1,2 +1,2 @@\n a\n-b\n+B\n";
  assert.throws(() => composeHunks("x\ny\n", parseHunks(diff), new Set([0])), DiffMismatch);
  const request: ApprovalRequest = { sessionId: "s", toolCallId: "t", toolName: "edit", args: {}, cwd: "/w", preview: { hunks: [{ index: 0, header: "@@ -1,2 +1,2 @@", diff }], newContent: "a\nB\n" } };
  assert.throws(() => new HunkReview(request, "x\ny\n"), DiffMismatch);
  assert.equal(new HunkReview(request, "a\nb\n").text, "a\nB\n");
});
