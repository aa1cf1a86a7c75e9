/**
 * The shared server's bookkeeping with real files, processes and sockets: where its files are,
 * how it is started, which state files are trusted, and what happens when the one named there is
 * gone, refuses, loses the race for the lock, or fails to start. The server here is a small Node
 * program that behaves as pi-lsp's shared mode does (sharedRun.test.ts uses the real one).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import {
  connectShared,
  logFileIn,
  parseServerState,
  readServerState,
  SharedServerError,
  sharedServerArgs,
  sharedServerFiles,
  stopShared,
} from "../src/host/sharedServer";

const posixOnly = process.platform === "win32" ? "POSIX signals and modes" : false;

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "pi-shared-"));
}

/**
 * A stand-in server: records its arguments, exits with 3 when the lock file exists (another server
 * "holds" it) unless told it is the holder, with 2 and a message holding its token when asked to
 * fail, else listens on loopback (after --delay ms) and publishes the state file as pi-lsp does,
 * until SIGTERM (which removes the file).
 */
const FAKE_SERVER = String.raw`
const fs = require("node:fs");
const net = require("node:net");
const args = process.argv.slice(2);
const option = (name) => args[args.indexOf(name) + 1];
const state = option("--state-file");
if (!args.includes("--holder")) {
  fs.writeFileSync(state + ".args", JSON.stringify(args));
  if (fs.existsSync(state + ".lock")) { process.stderr.write("pi-lsp: another pi-lsp serves it\n"); process.exit(3); }
}
if (args.includes("--fail")) { process.stderr.write("pi-lsp listening token=secret-token-123\nboom: bad option\n"); process.exit(2); }
const server = net.createServer((socket) => socket.on("data", (data) => socket.write(data)));
const delay = args.includes("--delay") ? Number(option("--delay")) : 0;
setTimeout(() => server.listen(0, "127.0.0.1", () => {
  const record = { pid: process.pid, tcp: "127.0.0.1:" + server.address().port, token: "t-" + process.pid, version: "9.9" };
  fs.writeFileSync(state + ".tmp", JSON.stringify(record), { mode: 0o600 });
  fs.renameSync(state + ".tmp", state);
}), delay);
process.on("SIGTERM", () => { try { fs.unlinkSync(state); } catch {} process.exit(0); });
setTimeout(() => process.exit(0), 30000).unref();
`;

function fakeServer(dir: string, ...extra: string[]): { command: string; args: string[] } {
  const script = path.join(dir, "fake-server.js");
  fs.writeFileSync(script, FAKE_SERVER);
  return { command: process.execPath, args: [script, ...extra] };
}

/** A scratch folder holding the fake server (`extra`: its options) and its state files' folder. */
function sharedFixture(...extra: string[]): { dir: string; server: { command: string; args: string[] }; files: ReturnType<typeof sharedServerFiles> } {
  const dir = scratch();
  const server = fakeServer(dir, ...extra);
  const files = sharedServerFiles(dir, server);
  fs.mkdirSync(path.dirname(files.state), { recursive: true });
  return { dir, server, files };
}

/** A pid that surely is not running any more (a process that has exited and been reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

function stateText(pid: number, port: number, token = "tok"): string {
  return JSON.stringify({ pid, tcp: `127.0.0.1:${port}`, token, version: "1.0" });
}

async function echoes(socket: net.Socket, text: string): Promise<boolean> {
  const answer = new Promise<string>((resolve) => socket.once("data", (data) => resolve(data.toString())));
  socket.write(text);
  return (await answer) === text;
}

test("one set of files per resolved command, in the storage's servers folder", () => {
  const a = sharedServerFiles("/store", { command: "/usr/bin/pi-lsp", args: [] });
  assert.match(a.state, /^\/store\/servers\/pi-lsp-[0-9a-f]{16}\.json$/);
  assert.equal(a.log, a.state.replace(/\.json$/, ".log"));
  assert.equal(a.errors, a.state.replace(/\.json$/, ".stderr"));
  assert.deepEqual(sharedServerFiles("/store", { command: "/usr/bin/pi-lsp", args: [] }), a);
  assert.notEqual(sharedServerFiles("/store", { command: "/other/pi-lsp", args: [] }).state, a.state);
  assert.notEqual(sharedServerFiles("/store", { command: "/usr/bin/pi-lsp", args: ["--log-level", "debug"] }).state, a.state);
  // Arguments are hashed as a list: ["a b"] and ["a", "b"] are different commands.
  assert.notEqual(
    sharedServerFiles("/store", { command: "p", args: ["a b"] }).state,
    sharedServerFiles("/store", { command: "p", args: ["a", "b"] }).state,
  );
});

test("the server is started on loopback TCP with the shared-server options; a --log-file of the command is kept", () => {
  const files = sharedServerFiles("/store", { command: "/bin/pi-lsp", args: ["--log-level", "debug"] });
  assert.deepEqual(sharedServerArgs({ command: "/bin/pi-lsp", args: ["--log-level", "debug"] }, files), [
    "--log-level", "debug",
    "--tcp", "127.0.0.1:0",
    "--state-file", files.state,
    "--idle-exit", "600",
    "--reattach-grace", "120",
    "--log-file", files.log,
  ]);
  const own = { command: "/bin/pi-lsp", args: ["--log-file", "/var/log/pi.log"] };
  const ownFiles = sharedServerFiles("/store", own);
  assert.equal(ownFiles.log, "/var/log/pi.log");
  assert.deepEqual(sharedServerArgs(own, ownFiles).slice(-2), ["--reattach-grace", "120"]);
  assert.equal(logFileIn(["--log-file=rel/pi.log"], "/home/u"), "/home/u/rel/pi.log");
  assert.equal(logFileIn(["--log-file"]), undefined);
});

test("state files: only well-formed ones naming a loopback address are trusted", () => {
  assert.deepEqual(parseServerState(stateText(42, 5000)), { pid: 42, host: "127.0.0.1", port: 5000, token: "tok", version: "1.0" });
  assert.deepEqual(parseServerState(JSON.stringify({ pid: 7, tcp: "[::1]:80", token: "x" }))?.host, "::1");
  for (const bad of [
    "",
    "{\"pid\": 42, \"tcp\": \"127.0.0.1:5000\"", // torn
    "[]",
    JSON.stringify({ pid: "42", tcp: "127.0.0.1:5000", token: "t" }),
    JSON.stringify({ pid: 42, tcp: "127.0.0.1:5000", token: "" }),
    JSON.stringify({ pid: 42, tcp: "10.1.2.3:5000", token: "t" }), // never send the token off this machine
    JSON.stringify({ pid: 42, tcp: "127.0.0.1.evil.example:5000", token: "t" }),
    JSON.stringify({ pid: 42, tcp: "127.0.0.1:70000", token: "t" }),
    JSON.stringify({ pid: 0, tcp: "127.0.0.1:5000", token: "t" }),
  ]) {
    assert.equal(parseServerState(bad), undefined, bad);
  }
});

test("a state file left by a server that is gone is not trusted", { skip: posixOnly }, () => {
  const dir = scratch();
  try {
    const file = path.join(dir, "state.json");
    assert.equal(readServerState(file), undefined);
    fs.writeFileSync(file, stateText(deadPid(), 5000));
    assert.equal(readServerState(file), undefined);
    fs.writeFileSync(file, stateText(process.pid, 5000));
    assert.equal(readServerState(file)?.pid, process.pid);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("no server yet: one is started detached, publishes its state, and is connected to; the next call reuses it", { skip: posixOnly }, async () => {
  const dir = scratch();
  const server = fakeServer(dir);
  const files = sharedServerFiles(dir, server); // its folder is left to connectShared, which makes it 0700
  try {
    const first = await connectShared(server, files);
    assert.equal(first.started, true);
    assert.ok(await echoes(first.socket, "ping"));
    assert.deepEqual(JSON.parse(fs.readFileSync(`${files.state}.args`, "utf8")), sharedServerArgs(server, files).slice(1));
    assert.equal(fs.statSync(files.state).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(files.state)).mode & 0o777, 0o700);
    assert.equal(fs.statSync(files.log).mode & 0o777, 0o600);
    first.socket.destroy();

    const second = await connectShared(server, files);
    assert.equal(second.started, false);
    assert.equal(second.state.pid, first.state.pid);
    second.socket.destroy();

    assert.equal(await stopShared(files), true);
    assert.equal(fs.existsSync(files.state), false);
    assert.equal(await stopShared(files), false);
  } finally {
    await stopShared(files);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a stale state file (server killed) or one whose port refuses: a new server is started", { skip: posixOnly }, async () => {
  const { dir, server, files } = sharedFixture();
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const refusedPort = (closed.address() as net.AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  try {
    fs.writeFileSync(files.state, stateText(deadPid(), refusedPort));
    const afterKill = await connectShared(server, files);
    assert.equal(afterKill.started, true);
    assert.ok(await echoes(afterKill.socket, "a"));
    afterKill.socket.destroy();
    await stopShared(files);

    // A live pid (this test's own) with nothing listening on the port.
    const lines: string[] = [];
    fs.writeFileSync(files.state, stateText(process.pid, refusedPort));
    const afterRefusal = await connectShared(server, files, { log: (line) => lines.push(line) });
    assert.equal(afterRefusal.started, true);
    assert.notEqual(afterRefusal.state.pid, process.pid);
    assert.match(lines.join("\n"), /does not answer/);
    afterRefusal.socket.destroy();
  } finally {
    await stopShared(files);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a server that loses the race for the lock (exit 3): the winner is connected to once it publishes", { skip: posixOnly }, async () => {
  const { dir, server, files } = sharedFixture();
  fs.writeFileSync(`${files.state}.lock`, "");
  // The winner: started by "another window", publishing well after the loser exited with 3.
  const winner = spawn(process.execPath, [server.args[0], "--state-file", files.state, "--holder", "--delay", "800"], { stdio: "ignore" });
  try {
    const connected = await connectShared(server, files);
    assert.equal(connected.state.pid, winner.pid);
    assert.equal(connected.started, false, "another window's server, not ours");
    assert.ok(fs.existsSync(`${files.state}.args`), "the loser was started and exited");
    assert.ok(await echoes(connected.socket, "b"));
    connected.socket.destroy();
  } finally {
    winner.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a server that fails to start: the error says its status and stderr, without the token", { skip: posixOnly }, async () => {
  const { dir, server, files } = sharedFixture("--fail");
  try {
    await assert.rejects(connectShared(server, files), (error: Error) => {
      assert.ok(error instanceof SharedServerError);
      assert.match(error.message, /exited with status 2 before listening/);
      assert.match(error.message, /boom: bad option/);
      assert.doesNotMatch(error.message, /secret-token-123/);
      return true;
    });
    await assert.rejects(connectShared({ command: path.join(dir, "missing"), args: [] }, files), /could not start .*ENOENT/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
