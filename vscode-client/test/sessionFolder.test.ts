import assert from "node:assert/strict";
import { test } from "node:test";
import { chooseFolder } from "../src/host/sessionFolder";

test("a multi-root session runs in the active editor's folder, else the only one, else the user is asked", () => {
  assert.deepEqual(chooseFolder(["/w/api", "/w/web"], "/w/web"), { ask: false, folder: "/w/web" });
  assert.deepEqual(chooseFolder(["/w/api", "/w/web"], undefined), { ask: true });
  assert.deepEqual(chooseFolder(["/w/api", "/w/web"], "/elsewhere"), { ask: true });
  assert.deepEqual(chooseFolder(["/w/api"], undefined), { ask: false, folder: "/w/api" });
  assert.deepEqual(chooseFolder([], undefined), { ask: false, folder: undefined });
});
