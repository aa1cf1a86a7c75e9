import assert from "node:assert/strict";
import { test } from "node:test";
import { rankPaths } from "../src/host/mentions";
import { applyCompletion, completionAt, mentionText } from "../src/webview/completion";

test("an @ token at the caret is a mention; / at the start is a command", () => {
  assert.deepEqual(completionAt("look at @src/ma", 15), { kind: "mention", query: "src/ma", start: 8 });
  assert.deepEqual(completionAt('@"my fi', 7), { kind: "mention", query: "my fi", start: 0 });
  assert.deepEqual(completionAt("/skill:re", 9), { kind: "command", query: "skill:re", start: 0 });
  assert.equal(completionAt("mail me@example", 15), undefined);
  assert.equal(completionAt("a /cmd", 6), undefined);
  assert.equal(completionAt("/cmd args", 9), undefined);
});

test("a chosen file is written as pi's editor writes it, quoted when it has a space", () => {
  assert.equal(mentionText("src/a.ts"), "@src/a.ts");
  assert.equal(mentionText("docs/my notes.md"), '@"docs/my notes.md"');
  const text = "see @ma and more";
  const context = completionAt(text, 7)!;
  assert.deepEqual(applyCompletion(text, 7, context, "src/main.ts"), { text: "see @src/main.ts and more", caret: 17 });
  const command = completionAt("/rev", 4)!;
  assert.deepEqual(applyCompletion("/rev", 4, command, "review"), { text: "/review ", caret: 8 });
});

test("files are ranked: name prefix, then name, then path; shorter first", () => {
  const paths = ["src/deep/main_test.py", "main.py", "docs/domain.md", "lib/main/x.ts", "README.md"];
  assert.deepEqual(rankPaths("main", paths), ["main.py", "src/deep/main_test.py", "docs/domain.md", "lib/main/x.ts"]);
  assert.deepEqual(rankPaths("", paths, 2), ["main.py", "README.md"]);
});
