/**
 * The private server environment for real: a real python3 makes a venv in a temporary "global
 * storage", pip installs the wheel `npm run wheel` built (server/), and the pi-lsp it gives
 * answers `initialize` over stdio. Slow (pip resolves the dependencies, from its cache when warm).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import {
  ensurePrivateEnvironment,
  findPython,
  hasPiLsp,
  PythonMissingError,
  readyEnvironment,
  shippedWheel,
} from "../src/host/serverEnvironment";
import { ServerNotFoundError } from "../src/host/serverCommand";

const clientDir = path.resolve(__dirname, "..", "..");
const wheelDir = path.join(clientDir, "server");
const haveWheel = fs.existsSync(wheelDir) && fs.readdirSync(wheelDir).some((name) => name.endsWith(".whl"));

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "pi-env-"));
}

/** A real program that claims to be an old Python (as a python3 of an old distribution would). */
function oldPython(dir: string, version: string): string {
  const file = path.join(dir, `python${version}`);
  fs.writeFileSync(file, `#!/bin/sh\necho /usr/bin/python${version}\necho ${version}\n`, { mode: 0o755 });
  return file;
}

test("findPython takes the first candidate that is 3.11 or newer", { skip: process.platform === "win32" }, async () => {
  const dir = scratch();
  try {
    const found = await findPython([path.join(dir, "missing"), oldPython(dir, "3.9"), "python3"]);
    assert.ok(found.version[0] === 3 && found.version[1] >= 11, `python3 is ${found.version.join(".")}`);
    assert.ok(path.isAbsolute(found.executable));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("no Python 3.11+ is a clear error naming what was found and what to set", { skip: process.platform === "win32" }, async () => {
  const dir = scratch();
  try {
    await assert.rejects(findPython([oldPython(dir, "3.8"), path.join(dir, "nothing-here")]), (error: unknown) => {
      assert.ok(error instanceof PythonMissingError);
      assert.match(error.message, /Python 3\.11 or newer/);
      assert.match(error.message, /python3\.8 is 3\.8/);
      assert.match(error.message, /pi\.server\.python/);
      return true;
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a build without a shipped wheel says how to install the server", () => {
  const dir = scratch();
  try {
    assert.throws(() => shippedWheel(dir), (error: unknown) => error instanceof ServerNotFoundError && /pip install pi-lsp/.test(error.message));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test(
  "the private environment is created from the shipped wheel, serves LSP, and is reused",
  { skip: haveWheel ? false : "no wheel in server/ (npm run wheel)", timeout: 600_000 },
  async () => {
    const storage = scratch();
    const steps: string[] = [];
    const logged: string[] = [];
    try {
      const python = await findPython(["python3", "python"]);
      const wheel = shippedWheel(wheelDir);
      assert.equal(readyEnvironment(storage, wheel, python), undefined);
      const options = { storageDir: storage, wheel, python, report: (s: string) => steps.push(s), log: (l: string) => logged.push(l) };
      // Two windows starting at once build it once.
      const [first, second] = await Promise.all([ensurePrivateEnvironment(options), ensurePrivateEnvironment(options)]);
      assert.deepEqual(first, second);
      assert.equal(steps.filter((s) => s.startsWith("Creating")).length, 1, steps.join(" | "));
      assert.ok(steps.some((s) => s.includes(path.basename(wheel))));
      assert.ok(first.command.startsWith(storage));
      assert.ok(await hasPiLsp(path.join(path.dirname(first.command), "python")));

      const child = spawn(first.command, [...first.args, "--stdio"], {
        env: { ...process.env, HOME: storage, PI_CODING_AGENT_DIR: path.join(storage, "agent"), ANTHROPIC_API_KEY: "" },
        stdio: ["pipe", "pipe", "inherit"],
      });
      const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
      connection.listen();
      try {
        const init = await connection.sendRequest<{ serverInfo: { name: string } }>("initialize", {
          processId: process.pid,
          rootUri: null,
          capabilities: {},
        });
        assert.equal(init.serverInfo.name, "pi-lsp");
      } finally {
        connection.dispose();
        child.kill();
      }

      // Reused at once: nothing reported, nothing run.
      assert.deepEqual(readyEnvironment(storage, wheel, python), first);
      steps.length = 0;
      const again = await ensurePrivateEnvironment(options);
      assert.deepEqual(again, first);
      assert.deepEqual(steps, []);
    } finally {
      fs.rmSync(storage, { recursive: true, force: true });
    }
  },
);

test("a wheel pip cannot install fails with pip's words and leaves nothing that looks ready", { timeout: 120_000 }, async () => {
  const storage = scratch();
  try {
    const python = await findPython(["python3", "python"]);
    const wheel = path.join(storage, "pi_lsp-0.0.0-py3-none-any.whl");
    fs.writeFileSync(wheel, "not a zip file");
    const options = { storageDir: storage, wheel, python, report: () => undefined, log: () => undefined };
    await assert.rejects(ensurePrivateEnvironment(options), (error: unknown) => {
      assert.ok(error instanceof ServerNotFoundError);
      assert.match(error.message, /could not install its server \(pip exit \d+\)/);
      return true;
    });
    assert.equal(readyEnvironment(storage, wheel, python), undefined);
    // Neither the half-made environment nor the lock is left behind.
    assert.deepEqual(fs.readdirSync(path.join(storage, "server")), []);
  } finally {
    fs.rmSync(storage, { recursive: true, force: true });
  }
});
