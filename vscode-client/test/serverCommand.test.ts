import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { findOnPathWith, resolveServerCommand, ServerNotFoundError } from "../src/serverCommand";

test("the configured command wins over PATH, split into program and arguments", () => {
  const found = resolveServerCommand(["/venv/bin/python", "-m", "pi_lsp"], () => "/usr/bin/pi-lsp");
  assert.deepEqual(found, { command: "/venv/bin/python", args: ["-m", "pi_lsp"] });
});

test("an empty setting falls back to pi-lsp on PATH", () => {
  assert.deepEqual(resolveServerCommand([], (p) => `/opt/bin/${p}`), { command: "/opt/bin/pi-lsp", args: [] });
});

test("no server anywhere is a clear error naming the setting", () => {
  assert.throws(() => resolveServerCommand(undefined, () => undefined), (error: unknown) => {
    return error instanceof ServerNotFoundError && /pi\.server\.command/.test(error.message);
  });
});

test("a malformed setting is refused, not run", () => {
  assert.throws(() => resolveServerCommand(["pi-lsp", 3], () => undefined), ServerNotFoundError);
  assert.throws(() => resolveServerCommand([""], () => undefined), ServerNotFoundError);
});

test("PATH lookup takes the first executable directory in order", () => {
  const executable = new Set([path.join("/b", "pi-lsp"), path.join("/c", "pi-lsp")]);
  const envPath = ["/a", "", "/b", "/c"].join(path.delimiter);
  assert.equal(findOnPathWith(envPath, (f) => executable.has(f), "pi-lsp"), path.join("/b", "pi-lsp"));
  assert.equal(findOnPathWith(undefined, () => true, "pi-lsp"), undefined);
});
