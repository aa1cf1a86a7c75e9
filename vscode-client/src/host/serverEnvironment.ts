/**
 * The private Python environment the extension makes when no pi-lsp is installed: a virtual
 * environment in the extension's global storage, holding the pi-lsp wheel shipped in the .vsix
 * (and its dependencies from the package index). Node only, no vscode import, so it is tested for
 * real: a real python3, a real venv, the real wheel.
 */
import { execFile, spawn } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { ServerCommand, ServerNotFoundError } from "./serverCommand";

/** The oldest Python pi-lsp runs on (pyproject's requires-python). */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

export interface PythonInfo {
  /** The interpreter's own `sys.executable`. */
  executable: string;
  version: [number, number];
}

/** No usable Python: its message says what was found and what to install or set. */
export class PythonMissingError extends ServerNotFoundError {}

const PROBE = "import sys; print(sys.executable); print('%d.%d' % sys.version_info[:2])";

function run(program: string, args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(program, args, { timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Ask a program whether it is Python and which version; `undefined` when it does not run. */
export async function probePython(program: string): Promise<PythonInfo | undefined> {
  const result = await run(program, ["-c", PROBE], 20_000);
  if (result.code !== 0) return undefined;
  const [executable, version] = result.stdout.trim().split(/\r?\n/);
  const match = /^(\d+)\.(\d+)$/.exec(version ?? "");
  if (!executable || !match) return undefined;
  return { executable, version: [Number(match[1]), Number(match[2])] };
}

function isRecentEnough(version: [number, number]): boolean {
  return version[0] > MIN_PYTHON[0] || (version[0] === MIN_PYTHON[0] && version[1] >= MIN_PYTHON[1]);
}

/**
 * The first candidate that is Python 3.11 or newer. Candidates are program names or paths (the
 * `pi.server.python` setting, else python3 and python found on PATH).
 */
export async function findPython(candidates: string[]): Promise<PythonInfo> {
  const tooOld: string[] = [];
  for (const candidate of candidates) {
    const info = await probePython(candidate);
    if (info === undefined) continue;
    if (isRecentEnough(info.version)) return info;
    tooOld.push(`${info.executable} is ${info.version.join(".")}`);
  }
  const found = tooOld.length > 0 ? ` (${tooOld.join("; ")})` : ` (tried ${candidates.join(", ") || "nothing"})`;
  throw new PythonMissingError(
    `pi needs Python ${MIN_PYTHON.join(".")} or newer to run its server, and none was found${found}. ` +
      "Install Python 3.11+, or set pi.server.python to its interpreter, or pi.server.command to a pi-lsp you installed.",
  );
}

/** True when `python -m pi_lsp` would work (the user's interpreter has pi-lsp installed). */
export async function hasPiLsp(python: string): Promise<boolean> {
  return (await run(python, ["-c", "import pi_lsp.cli"], 30_000)).code === 0;
}

/** The pi-lsp wheel shipped with the extension (the newest by name when several are there). */
export function shippedWheel(wheelDir: string): string {
  let names: string[] = [];
  try {
    names = fs.readdirSync(wheelDir).filter((name) => /^pi_lsp-.*\.whl$/.test(name));
  } catch {
    // no folder: handled below
  }
  if (names.length === 0) {
    throw new ServerNotFoundError(
      `pi-lsp is not installed and this build of the extension ships no server wheel (${wheelDir}). ` +
        "Install pi-lsp (pip install pi-lsp, Python 3.11+) or set pi.server.command.",
    );
  }
  names.sort();
  return path.join(wheelDir, names[names.length - 1]);
}

/** Paths inside a virtual environment (bin/ on POSIX, Scripts\ on Windows). */
export function environmentPaths(dir: string, platform: NodeJS.Platform = process.platform): { python: string; server: string } {
  return platform === "win32"
    ? { python: path.join(dir, "Scripts", "python.exe"), server: path.join(dir, "Scripts", "pi-lsp.exe") }
    : { python: path.join(dir, "bin", "python"), server: path.join(dir, "bin", "pi-lsp") };
}

export interface EnvironmentOptions {
  /** The extension's global storage folder; environments live under `<storageDir>/server/`. */
  storageDir: string;
  wheel: string;
  python: PythonInfo;
  /** One line of progress for the user ("Creating the virtual environment…"). */
  report: (step: string) => void;
  /** Everything the tools print, for the output channel. */
  log: (line: string) => void;
  /** How long to wait for another window that is building the same environment (default 10 min). */
  lockWaitMs?: number;
}

const READY = ".pi-lsp-ready";

/**
 * One folder per (wheel contents, Python version): a new extension version or another Python
 * gets a fresh environment, and an unchanged one is reused at once.
 */
export function environmentDir(storageDir: string, wheel: string, python: PythonInfo): string {
  const digest = crypto.createHash("sha256").update(fs.readFileSync(wheel)).digest("hex").slice(0, 16);
  return path.join(storageDir, "server", `${digest}-py${python.version.join(".")}`);
}

function runLogged(program: string, args: string[], log: (line: string) => void): Promise<{ code: number | null; tail: string[] }> {
  return new Promise((resolve) => {
    const tail: string[] = [];
    const child = spawn(program, args, { windowsHide: true, stdio: ["ignore", "pipe", "pipe"] });
    const take = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split(/\r?\n/)) {
        if (line.trim() === "") continue;
        log(line);
        tail.push(line);
        if (tail.length > 5) tail.shift();
      }
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", (error) => {
      tail.push(error.message);
      resolve({ code: null, tail });
    });
    child.on("close", (code) => resolve({ code, tail }));
  });
}

async function waitForLock(lock: string, ready: string, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (fs.existsSync(ready)) return false;
    let age = 0;
    try {
      age = Date.now() - fs.statSync(lock).mtimeMs;
    } catch {
      continue; // released meanwhile: try again
    }
    if (age > waitMs || Date.now() > deadline) {
      // A window that died while building: take its lock over.
      fs.rmSync(lock, { recursive: true, force: true });
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The pi-lsp command of the private environment when it is built already (no progress to show then). */
export function readyEnvironment(storageDir: string, wheel: string, python: PythonInfo): ServerCommand | undefined {
  const dir = environmentDir(storageDir, wheel, python);
  return fs.existsSync(path.join(dir, READY)) ? { command: environmentPaths(dir).server, args: [] } : undefined;
}

/**
 * The pi-lsp command of the private environment, creating it first when needed (python -m venv,
 * then pip install of the shipped wheel). Windows that start together share one build: the second
 * waits for the first's lock. A failed build leaves nothing that looks ready.
 */
export async function ensurePrivateEnvironment(options: EnvironmentOptions): Promise<ServerCommand> {
  const dir = environmentDir(options.storageDir, options.wheel, options.python);
  const ready = path.join(dir, READY);
  const { python, server } = environmentPaths(dir);
  if (fs.existsSync(ready)) return { command: server, args: [] };
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  const mine = await waitForLock(lock, ready, options.lockWaitMs ?? 600_000);
  if (!mine) return { command: server, args: [] };
  try {
    if (fs.existsSync(ready)) return { command: server, args: [] };
    fs.rmSync(dir, { recursive: true, force: true });
    options.report(`Creating a Python ${options.python.version.join(".")} environment for pi-lsp…`);
    const venv = await runLogged(options.python.executable, ["-m", "venv", dir], options.log);
    if (venv.code !== 0) {
      throw new ServerNotFoundError(
        `pi could not create a virtual environment with ${options.python.executable} (exit ${venv.code ?? "?"}): ` +
          `${venv.tail.join(" ")}. On Debian/Ubuntu install python3-venv, or set pi.server.command.`,
      );
    }
    options.report(`Installing ${path.basename(options.wheel)} and its dependencies…`);
    const pip = await runLogged(
      python,
      ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", options.wheel],
      options.log,
    );
    if (pip.code !== 0) {
      throw new ServerNotFoundError(
        `pi could not install its server (pip exit ${pip.code ?? "?"}): ${pip.tail.join(" ")}. ` +
          "The dependencies come from the Python package index; see the pi output channel, or install pi-lsp yourself and set pi.server.command.",
      );
    }
    fs.writeFileSync(ready, `${path.basename(options.wheel)}\n`);
    return { command: server, args: [] };
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
