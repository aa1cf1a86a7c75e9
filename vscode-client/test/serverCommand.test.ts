import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { chooseServer, findOnPathWith, ServerNotFoundError } from "../src/host/serverCommand";

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
