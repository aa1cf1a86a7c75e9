import assert from "node:assert/strict";
import { test } from "node:test";
import { FlatTreeNode, SessionTreeModel } from "../src/treeModel";

const node = (id: string, parentId: string | null, childIds: string[], extra: Partial<FlatTreeNode> = {}) => ({
  id,
  parentId,
  type: "message",
  timestamp: "2026-01-01T00:00:00Z",
  childIds,
  ...extra,
});

// a → b → (c, d → e); leaf e
const tree = {
  leafId: "e",
  rootIds: ["a"],
  nodes: [
    node("a", null, ["b"], { role: "user", preview: "hello\n  there" }),
    node("b", "a", ["c", "d"], { role: "assistant" }),
    node("c", "b", []),
    node("d", "b", ["e"]),
    node("e", "d", [], { type: "label", label: "done" }),
  ],
};

test("children come from childIds in order; roots for no parent", () => {
  const model = new SessionTreeModel(tree);
  assert.deepEqual(model.children().map((n) => n.id), ["a"]);
  assert.deepEqual(model.children("b").map((n) => n.id), ["c", "d"]);
  assert.deepEqual(model.children("missing"), []);
});

test("the leaf and its ancestors are the current branch", () => {
  const model = new SessionTreeModel(tree);
  assert.ok(model.isLeaf("e"));
  assert.deepEqual(["a", "b", "c", "d", "e"].filter((id) => model.isOnBranch(id)), ["a", "b", "d", "e"]);
});

test("a parent cycle does not hang the branch walk", () => {
  const cyclic = { leafId: "x", rootIds: ["x"], nodes: [node("x", "y", ["y"]), node("y", "x", ["x"])] };
  const model = new SessionTreeModel(cyclic);
  assert.ok(model.isOnBranch("x") && model.isOnBranch("y"));
});

test("a line shows role and the preview on one line", () => {
  assert.equal(SessionTreeModel.describe(tree.nodes[0]), "user: hello there");
  assert.equal(SessionTreeModel.describe(tree.nodes[2]), "message");
});
