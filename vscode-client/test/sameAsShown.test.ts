/** A tree view's refresh that fetched what it already shows is not a change (no redraw). */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChangeSet } from "../src/host/changesModel";
import { SameAsShown } from "../src/host/sameAsShown";

const run: ChangeSet = { scope: "run", fromId: "c1", toId: "c2", files: [{ path: "a.txt", change: "modified" }] };
const session: ChangeSet = { scope: "session", fromId: "c0", toId: "c2", files: [{ path: "a.txt", change: "modified" }] };
const showing = (value: unknown) => new SameAsShown(value);

test("a refresh that found the same groups is not a change (the view keeps its rows and their commands)", () => {
  assert.equal(showing([run, session]).changes([structuredClone(run), structuredClone(session)]), false);
  assert.equal(showing([run, session]).changes([run, { ...session, toId: "c3" }]), true);
  assert.equal(showing([run, session]).changes([{ ...run, files: [{ path: "a.txt", change: "deleted" }] }, session]), true);
  assert.equal(showing([run, session]).changes([run, { ...session, files: [] }]), true);
  assert.equal(showing([]).changes([run, session]), true);
});

test("what changed is what is shown from then on; the folder and the filter count too", () => {
  const shown = showing(["/w", [run]]);
  assert.equal(shown.changes(["/other", [run]]), true); // the same groups in another folder
  assert.equal(shown.changes(["/other", [run]]), false);
  const tree = showing(null); // before the first fetch anything is a change
  assert.equal(tree.changes([null, false]), true);
  assert.equal(tree.changes([null, false]), false);
  assert.equal(tree.changes([null, true]), true); // the filter toggled
});
