/**
 * One pi-lsp per user and server command, shared by every VS Code window: a detached server on
 * loopback TCP that a reloaded window (or a second one) connects to again, so a run in progress
 * outlives the window that started it. The server writes a state file (`{pid, tcp, token,
 * version}`, mode 0600) once listening and holds a lock beside it, so only one runs per file; a
 * second one started at the same moment exits with ALREADY_RUNNING (pi_lsp/server/daemon.py).
 * Node only (no vscode import), so it is tested with real files, processes and sockets.
 */
import { spawn } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { ServerCommand } from "./serverCommand";

/** Exit status of a server that found another live one holding the state file's lock. */
export const ALREADY_RUNNING = 3;
/** The shared server exits after this long with no window connected and no run in progress. */
export const IDLE_EXIT_SECONDS = 600;
/** A run whose window went away goes on this long for a window to open its session again. */
export const REATTACH_GRACE_SECONDS = 120;
/** A log bigger than this is moved aside (to `.1`) before a new server starts writing it. */
const LOG_ROTATE_BYTES = 10 * 1024 * 1024;
const POLL_MS = 50;

/** Where one shared server is found and where it writes. */
export interface SharedServerFiles {
  /** The state file the server publishes (and its lock, `state + ".lock"`). */
  state: string;
  /** The server's log (`--log-file`; the one in the command when it names one). */
  log: string;
  /** The server's stderr (start-up errors), read when it fails to start. */
  errors: string;
}

/** What a live shared server published: where it listens and the token it admits. */
export interface ServerState {
  pid: number;
  host: string;
  port: number;
  token: string;
  version: string;
}

/** The shared server could not be started or reached; the message says why (never the token). */
export class SharedServerError extends Error {}

/** The `--log-file` a server command already names (relative paths as the server, started in HOME, sees them). */
export function logFileIn(args: readonly string[], home = os.homedir()): string | undefined {
  let found: string | undefined;
  args.forEach((arg, index) => {
    if (arg === "--log-file" && index + 1 < args.length) found = args[index + 1];
    else if (arg.startsWith("--log-file=")) found = arg.slice("--log-file=".length);
  });
  return found === undefined || found === "" ? undefined : path.resolve(home, found);
}

/**
 * The files of the shared server for `server`, under `storageDir/servers/`: one server per
 * resolved command (a different command or Python gets its own server), named by a hash of it.
 */
export function sharedServerFiles(storageDir: string, server: ServerCommand): SharedServerFiles {
  const key = crypto.createHash("sha256").update(JSON.stringify([server.command, ...server.args])).digest("hex").slice(0, 16);
  const base = path.join(storageDir, "servers", `pi-lsp-${key}`);
  return { state: `${base}.json`, log: logFileIn(server.args) ?? `${base}.log`, errors: `${base}.stderr` };
}

/** The command line of a shared server: the user's command plus loopback TCP and the shared-server options. */
export function sharedServerArgs(server: ServerCommand, files: SharedServerFiles): string[] {
  const args = [
    ...server.args,
    "--tcp", "127.0.0.1:0",
    "--state-file", files.state,
    "--idle-exit", String(IDLE_EXIT_SECONDS),
    "--reattach-grace", String(REATTACH_GRACE_SECONDS),
  ];
  if (logFileIn(server.args) === undefined) args.push("--log-file", files.log);
  return args;
}

const LOOPBACK = /^(127\.0\.0\.1|localhost|\[::1\]):(\d{1,5})$/;

/**
 * A state file's text as a ServerState, or undefined when it is not one (torn, hand-edited, an
 * older format). Only loopback addresses are accepted: the token is never sent anywhere else.
 */
export function parseServerState(text: string): ServerState | undefined {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof record !== "object" || record === null) return undefined;
  const { pid, tcp, token, version } = record as Record<string, unknown>;
  if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0) return undefined;
  if (typeof token !== "string" || token === "" || typeof tcp !== "string") return undefined;
  const match = LOOPBACK.exec(tcp);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535) return undefined;
  return { pid, host: match[1] === "[::1]" ? "::1" : match[1], port, token, version: typeof version === "string" ? version : "" };
}

/** Whether `pid` is a live process of this user (`kill(pid, 0)`: another user's answers EPERM). */
export function isOurLiveProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The state of a live shared server, or undefined when the file is missing, unreadable, not ours,
 * not a state file, or left behind by a server that is gone (killed before it could remove it).
 */
export function readServerState(file: string): ServerState | undefined {
  let text: string;
  try {
    const stat = fs.statSync(file);
    if (process.getuid !== undefined && stat.uid !== process.getuid()) return undefined;
    text = fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const state = parseServerState(text);
  return state !== undefined && isOurLiveProcess(state.pid) ? state : undefined;
}

/** A TCP connection to the server (rejects on refusal, or after `timeoutMs` without an answer). */
export function connectTo(state: ServerState, timeoutMs = 5_000): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: state.host, port: state.port });
    const timer = setTimeout(() => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** The end of a failed server's stderr, with the token it may have printed left out. */
export function startupErrors(text: string): string {
  return text.replace(/token=\S+/g, "token=(hidden)").trim().slice(-2000);
}

export interface Connected {
  socket: net.Socket;
  state: ServerState;
  /** Whether this call started the server (else it was running, or another window's start won). */
  started: boolean;
}

export interface ConnectOptions {
  /** Lines for the user (what is being done and why). */
  log?: (line: string) => void;
  /** How long a new server may take to publish its state file. */
  startTimeoutMs?: number;
}

/**
 * Connect to the shared server for `server`, starting it (detached) when none answers. A server
 * started meanwhile by another window wins the lock; then this one connects to that.
 */
export async function connectShared(server: ServerCommand, files: SharedServerFiles, options: ConnectOptions = {}): Promise<Connected> {
  const log = options.log ?? (() => undefined);
  const existing = readServerState(files.state);
  if (existing !== undefined) {
    try {
      return { socket: await connectTo(existing), state: existing, started: false };
    } catch (error) {
      log(`the shared pi-lsp (pid ${existing.pid}) does not answer (${error instanceof Error ? error.message : String(error)}); starting another`);
    }
  }
  const { state, started } = await startShared(server, files, existing, options.startTimeoutMs ?? 60_000);
  return { socket: await connectTo(state), state, started };
}

function sameServer(a: ServerState | undefined, b: ServerState | undefined): boolean {
  return a !== undefined && b !== undefined && a.pid === b.pid && a.token === b.token && a.port === b.port;
}

function prepareFiles(files: SharedServerFiles): number {
  fs.mkdirSync(path.dirname(files.state), { recursive: true, mode: 0o700 });
  fs.mkdirSync(path.dirname(files.log), { recursive: true, mode: 0o700 });
  try {
    if (fs.statSync(files.log).size > LOG_ROTATE_BYTES) fs.renameSync(files.log, `${files.log}.1`);
  } catch {
    // no log yet
  }
  fs.closeSync(fs.openSync(files.log, "a", 0o600)); // the server appends to it, keeping the mode
  return fs.openSync(files.errors, "w", 0o600);
}

/**
 * Start a shared server detached (it outlives this window) and wait for a live server other than
 * `stale` to publish its state file: ours (`started`: its pid is our child's), or the one that
 * beat ours to the lock.
 */
async function startShared(
  server: ServerCommand,
  files: SharedServerFiles,
  stale: ServerState | undefined,
  timeoutMs: number,
): Promise<{ state: ServerState; started: boolean }> {
  const errors = prepareFiles(files);
  let exit: { code: number | null; error?: Error } | undefined;
  let pid: number | undefined;
  try {
    const child = spawn(server.command, sharedServerArgs(server, files), {
      detached: true,
      stdio: ["ignore", "ignore", errors],
      cwd: os.homedir(),
      windowsHide: true,
    });
    child.once("error", (error) => (exit = { code: null, error }));
    child.once("exit", (code) => (exit ??= { code }));
    child.unref();
    pid = child.pid;
  } finally {
    fs.closeSync(errors);
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = readServerState(files.state);
    if (state !== undefined && !sameServer(state, stale)) return { state, started: state.pid === pid };
    const ended: { code: number | null; error?: Error } | undefined = exit;
    if (ended !== undefined && ended.code !== ALREADY_RUNNING) {
      if (ended.error) throw new SharedServerError(`could not start ${server.command}: ${ended.error.message}`);
      const said = startupErrors(readOr(files.errors));
      throw new SharedServerError(`pi-lsp exited with status ${ended.code} before listening${said ? `: ${said}` : ""}`);
    }
    if (Date.now() > deadline) {
      throw new SharedServerError(`the shared pi-lsp did not publish ${files.state} within ${Math.round(timeoutMs / 1000)} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/**
 * Stop the shared server (Restart Server): SIGTERM, which it answers by saving runs and removing
 * its state file; waits up to `timeoutMs` for it to be gone. Returns whether one was running.
 */
export async function stopShared(files: SharedServerFiles, timeoutMs = 5_000): Promise<boolean> {
  const state = readServerState(files.state);
  if (state === undefined) return false;
  try {
    process.kill(state.pid, "SIGTERM");
  } catch {
    return false;
  }
  const deadline = Date.now() + timeoutMs;
  while (isOurLiveProcess(state.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  return true;
}
