/**
 * Where each guarding setting lives (package.json scopes): the ones that guard the agent are
 * `application` (read from User settings in local and remote windows alike: a `machine` setting in
 * a remote window is read from that machine's Remote settings only, so pi.approval set in User
 * settings had no effect there); the ones naming programs and paths of the machine the server runs
 * on stay `machine`. None of them can come from a workspace.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { USER_ONLY_SETTINGS } from "../src/host/settings";

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as {
  extensionKind?: string[];
  contributes: { configuration: { properties: Record<string, { scope?: string; description: string }> } };
};
const properties = manifest.contributes.configuration.properties;

test("the settings that guard the agent work from User settings in local and remote windows", () => {
  for (const key of ["approval", "tools", "retry.maxRetries", "retry.provider.maxRetries"]) {
    assert.equal(properties[`pi.${key}`].scope, "application", `pi.${key}`);
    assert.match(properties[`pi.${key}`].description, /User settings only \(applies in local and remote windows alike/);
  }
  for (const key of ["server.command", "server.python", "server.shared", "sessionDir", "shellPath", "shellCommandPrefix"]) {
    assert.equal(properties[`pi.${key}`].scope, "machine", `pi.${key}`);
    assert.match(properties[`pi.${key}`].description, /in a remote window .* the Remote settings of that machine/);
  }
  // Every user-only setting has a scope a workspace cannot set.
  for (const key of USER_ONLY_SETTINGS) assert.ok(["application", "machine"].includes(properties[`pi.${key}`].scope ?? ""), `pi.${key}`);
});

test("the extension runs where the files are (the workspace side of a remote window)", () => {
  assert.deepEqual(manifest.extensionKind, ["workspace"]);
});
