/** A wrong pi.server.command is one clear error before anything starts (real files, real PATH lookup). */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { checkProgram, findOnPathWith, ServerNotFoundError } from "../src/host/serverCommand";

const executable = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
};

test("pi.server.command: a missing path or a name not on PATH says so by name; a real one passes", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-cmd-"));
  try {
    const program = path.join(dir, "pi-lsp");
    fs.writeFileSync(program, "#!/bin/sh\n", { mode: 0o755 });
    const onPath = (name: string): string | undefined => findOnPathWith(dir, executable, name);
    assert.doesNotThrow(() => checkProgram(program, executable, onPath));
    assert.doesNotThrow(() => checkProgram("pi-lsp", executable, onPath));
    const missing = path.join(dir, "nope", "pi-lsp");
    assert.throws(() => checkProgram(missing, executable, onPath), (error: Error) => error instanceof ServerNotFoundError && error.message === `pi.server.command: ${missing} not found`);
    assert.throws(() => checkProgram("pi-lsp-typo", executable, onPath), { message: "pi.server.command: pi-lsp-typo not found" });
    assert.throws(() => checkProgram(dir, executable, onPath), { message: `pi.server.command: ${dir} not found` }, "a folder is not a program");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
