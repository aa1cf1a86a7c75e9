import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { chooseServer, findOnPathWith, resolveSettled, serverSettingsKey, ServerNotFoundError } from "../src/host/serverCommand";

test("the configured command wins over everything, split into program and arguments", () => {
  const found = chooseServer(["/venv/bin/python", "-m", "pi_lsp"], "/usr/bin/python3", () => "/usr/bin/pi-lsp");
  assert.deepEqual(found, { kind: "command", command: "/venv/bin/python", args: ["-m", "pi_lsp"] });
});

test("pi.server.python comes next, before PATH", () => {
  assert.deepEqual(chooseServer([], " /opt/py/bin/python3 ", () => "/usr/bin/pi-lsp"), {
    kind: "python",
    python: "/opt/py/bin/python3",
  });
});

test("with no settings, pi-lsp on PATH", () => {
  assert.deepEqual(chooseServer([], "", (p) => `/opt/bin/${p}`), { kind: "command", command: "/opt/bin/pi-lsp", args: [] });
});

test("with nothing installed, the private environment", () => {
  assert.deepEqual(chooseServer(undefined, undefined, () => undefined), { kind: "private" });
});

test("a malformed command setting is refused, not run", () => {
  assert.throws(() => chooseServer(["pi-lsp", 3], undefined, () => undefined), ServerNotFoundError);
  assert.throws(() => chooseServer([""], undefined, () => undefined), ServerNotFoundError);
});

test("PATH lookup takes the first executable directory in order", () => {
  const executable = new Set([path.join("/b", "pi-lsp"), path.join("/c", "pi-lsp")]);
  const envPath = ["/a", "", "/b", "/c"].join(path.delimiter);
  assert.equal(findOnPathWith(envPath, (f) => executable.has(f), "pi-lsp"), path.join("/b", "pi-lsp"));
  assert.equal(findOnPathWith(undefined, () => true, "pi-lsp"), undefined);
});

test("the settings key changes exactly when a server setting does", () => {
  const settings: Record<string, unknown> = { "server.command": undefined, "server.python": "", "server.shared": true };
  const key = () => serverSettingsKey((name) => settings[name]);
  const before = key();
  assert.equal(key(), before);
  settings["server.command"] = ["/venv/bin/pi-lsp"];
  const withCommand = key();
  assert.notEqual(withCommand, before);
  settings["server.shared"] = false;
  assert.notEqual(key(), withCommand);
  assert.equal(serverSettingsKey(() => undefined), serverSettingsKey(() => null));
});

test("a server resolved while its settings arrived is resolved again from them", async () => {
  // The user's settings reach the extension host while the first resolution (from the defaults) runs.
  let command: string | undefined;
  const chosen: string[] = [];
  const result = await resolveSettled(
    () => serverSettingsKey((name) => (name === "server.command" ? command : undefined)),
    () => {
      const choice = command ?? "private environment";
      chosen.push(choice);
      command = "/venv/bin/pi-lsp";
      return Promise.resolve(choice);
    },
  );
  assert.deepEqual(chosen, ["private environment", "/venv/bin/pi-lsp"]);
  assert.equal(result.resolved, "/venv/bin/pi-lsp");
  assert.equal(result.key, serverSettingsKey((name) => (name === "server.command" ? "/venv/bin/pi-lsp" : undefined)));
});

test("settings that keep moving end the resolving after a few tries", async () => {
  let version = 0;
  let calls = 0;
  const result = await resolveSettled(
    () => String(version),
    () => {
      calls += 1;
      version += 1;
      return Promise.resolve(calls);
    },
    3,
  );
  assert.equal(calls, 3);
  assert.equal(result.resolved, 3);
});
