/**
 * The world one end-to-end run happens in: the scripted loopback model, a real VS Code
 * (code-server, started with throwaway user data, extensions and HOME) with the packaged .vsix
 * installed and the real pi-lsp from the repository's .venv, and headless Chromium showing it.
 */
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import * as readline from "node:readline";
import { Browser, chromium, Page } from "playwright-core";
import { readServerState, ServerState } from "../src/host/sharedServer";

const CLIENT_DIR = path.resolve(__dirname, "..", "..");
export const REPO_DIR = path.resolve(CLIENT_DIR, "..");
const E2E_DIR = path.join(CLIENT_DIR, "e2e");
export const SCREENSHOTS_DIR = path.join(E2E_DIR, "screenshots");
const TOOLS_DIR = process.env.PI_E2E_TOOLS ?? path.join(E2E_DIR, ".tools");
const CODE_SERVER = path.join(TOOLS_DIR, "code-server", "node_modules", ".bin", "code-server");
const CHROMIUM = process.env.PI_E2E_CHROMIUM ?? "/usr/bin/chromium";
/** A fake key: the loopback model accepts anything, and a key must exist for runs to start. */
const API_KEY = "sk-ant-e2e-loopback-not-a-real-key";
export const MODEL = "claude-sonnet-4-5";

/** The files under `dir` (at any depth) whose path `accept`s. */
function filesUnder(dir: string, accept: (file: string) => boolean): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(full, accept));
    else if (accept(full)) found.push(full);
  }
  return found;
}

/** The files and folders of one run, kept after a failure for reading. */
export class RunDir {
  readonly root: string;
  readonly workspace: string;
  readonly agentDir: string;
  readonly userData: string;
  readonly extensions: string;
  readonly home: string;
  readonly serverLog: string;
  readonly codeServerLog: string;
  readonly modelRequests: string;

  constructor(root: string) {
    fs.rmSync(root, { recursive: true, force: true });
    this.root = root;
    this.workspace = path.join(root, "workspace");
    this.agentDir = path.join(root, "agent");
    this.userData = path.join(root, "user-data");
    this.extensions = path.join(root, "extensions");
    this.home = path.join(root, "home");
    this.serverLog = path.join(root, "pi-lsp.log");
    this.codeServerLog = path.join(root, "code-server.log");
    this.modelRequests = path.join(root, "model-requests.jsonl");
    for (const dir of [this.workspace, this.agentDir, path.join(this.userData, "User"), this.extensions, this.home]) {
      fs.mkdirSync(dir, { recursive: true });
    }
  }

  /** The session files pi-lsp wrote (under the agent dir, as pi keeps them). */
  sessionFiles(): string[] {
    return filesUnder(path.join(this.agentDir, "sessions"), (file) => file.endsWith(".jsonl"));
  }

  /** The entries of the one session file of this run. */
  sessionEntries(): Record<string, unknown>[] {
    const files = this.sessionFiles();
    if (files.length !== 1) throw new Error(`expected one session file, found ${files.length}: ${files.join(", ")}`);
    return fs
      .readFileSync(files[0], "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** The state files of the shared pi-lsp servers the extension started (in its global storage). */
  sharedServerStateFiles(): string[] {
    return filesUnder(this.userData, (file) => /\/servers\/pi-lsp-[0-9a-f]+\.json$/.test(file));
  }

  /** The live shared servers (their state files name them). */
  sharedServers(): ServerState[] {
    return this.sharedServerStateFiles()
      .map((file) => readServerState(file))
      .filter((state): state is ServerState => state !== undefined);
  }

  /**
   * End the shared servers: they are detached from code-server (they outlive a window by design)
   * and would otherwise idle on for minutes after the test.
   */
  stopSharedServers(): void {
    for (const { pid } of this.sharedServers()) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
  }

  /** Where to look when something failed. */
  describe(): string {
    return [
      `run folder: ${this.root}`,
      `pi-lsp log: ${this.serverLog}`,
      `code-server log: ${this.codeServerLog}`,
      `extension host logs: ${path.join(this.userData, "logs")}`,
      `model requests: ${this.modelRequests}`,
      `screenshots: ${SCREENSHOTS_DIR}`,
    ].join("\n");
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo;
      server.close(() => resolve(address.port));
    });
  });
}

/** The scripted model (e2e/fake_model.py); it exits when its stdin closes. */
export class FakeModel {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(run: RunDir): Promise<FakeModel> {
    const python = path.join(REPO_DIR, ".venv", "bin", "python");
    const child = spawn(python, [path.join(E2E_DIR, "fake_model.py"), run.modelRequests], {
      cwd: REPO_DIR,
      stdio: ["pipe", "pipe", "inherit"],
    });
    const lines = readline.createInterface({ input: child.stdout });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the fake model did not start within 20 s")), 20_000);
      child.once("exit", (code) => reject(new Error(`the fake model exited (${code}) before listening`)));
      lines.on("line", (line) => {
        const match = /^listening on (http:\/\/\S+)$/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
    });
    return new FakeModel(child, url);
  }

  /** The Messages API requests it answered so far (bodies as sent). */
  static requests(run: RunDir): Record<string, unknown>[] {
    if (!fs.existsSync(run.modelRequests)) return [];
    return fs
      .readFileSync(run.modelRequests, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { body: Record<string, unknown> }).body);
  }

  stop(): void {
    this.child.stdin?.end();
  }
}

/** The remote machine's settings of a run: the server this checkout builds, logging to `log`. */
export function machineSettings(log: string): Record<string, unknown> {
  return { "pi.server.command": [path.join(REPO_DIR, ".venv", "bin", "pi-lsp"), "--log-file", log, "--log-level", "debug"] };
}

/** code-server on a free loopback port, its whole process group ended by stop(). */
export class CodeServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(run: RunDir, model: FakeModel, vsix: string, userSettings: Record<string, unknown>): Promise<CodeServer> {
    if (!fs.existsSync(CODE_SERVER)) throw new Error(`code-server is not installed at ${CODE_SERVER}: run e2e/setup.sh`);
    const settings = {
      "security.workspace.trust.enabled": false,
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      "telemetry.telemetryLevel": "off",
      "update.mode": "none",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "git.enabled": false, // the run folder sits inside this repository; no "open the parent repository?" toast
      "pi.model": MODEL,
      ...userSettings,
    };
    fs.writeFileSync(path.join(run.userData, "User", "settings.json"), JSON.stringify(settings, null, 2));
    // pi.server.* are machine settings: in code-server (a remote window: the extension host runs on
    // the server) VS Code applies them from the remote machine's settings only. Set in the user
    // settings they were seen or not depending on how soon VS Code learnt the window is remote:
    // a reloaded window now and then started the shipped server instead of this one.
    fs.mkdirSync(path.join(run.userData, "Machine"), { recursive: true });
    fs.writeFileSync(path.join(run.userData, "Machine", "settings.json"), JSON.stringify(machineSettings(run.serverLog), null, 2));
    // Only what this run means: no PI_* or ANTHROPIC_* of the machine, HOME and XDG dirs inside the run.
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (!key.startsWith("PI_") && !key.startsWith("ANTHROPIC_") && !key.startsWith("VSCODE_")) env[key] = value;
    }
    Object.assign(env, {
      HOME: run.home,
      XDG_CONFIG_HOME: path.join(run.home, ".config"),
      XDG_DATA_HOME: path.join(run.home, ".local", "share"),
      XDG_CACHE_HOME: path.join(run.home, ".cache"),
      PI_CODING_AGENT_DIR: run.agentDir,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: API_KEY,
    });
    const dirs = ["--user-data-dir", run.userData, "--extensions-dir", run.extensions];
    execFileSync(CODE_SERVER, [...dirs, "--install-extension", vsix], { env, stdio: "pipe", timeout: 60_000 });
    const port = await freePort();
    const log = fs.openSync(run.codeServerLog, "a");
    const child = spawn(
      CODE_SERVER,
      [
        ...dirs,
        "--auth", "none",
        "--bind-addr", `127.0.0.1:${port}`,
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--disable-getting-started-override",
        run.workspace,
      ],
      { env, detached: true, stdio: ["ignore", log, log] },
    );
    fs.closeSync(log);
    const server = new CodeServer(child, `http://127.0.0.1:${port}`);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      try {
        if ((await fetch(`${server.url}/healthz`)).ok) return server;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    server.stop();
    throw new Error(`code-server did not answer on ${server.url} (see ${run.codeServerLog})`);
  }

  /** End code-server, its extension hosts and the pi-lsp servers they started (one process group). */
  stop(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

export async function openBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
}

/** The folder's workbench, loaded. */
export async function openWorkbench(browser: Browser, server: CodeServer, run: RunDir): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  await page.goto(`${server.url}/?folder=${encodeURIComponent(run.workspace)}`, { waitUntil: "domcontentloaded" });
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  return page;
}
