/**
 * Starts pi-lsp with vscode-languageclient: command resolution, settings, log channel, restarts;
 * the server is the user's shared one (loopback TCP, sharedServer.ts) or, with
 * `pi.server.shared` off, one for this window over stdio.
 */
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StreamInfo,
} from "vscode-languageclient/node";
import { LogTail } from "./serverLog";
import { checkProgram, chooseServer, findOnPathWith, resolveSettled, ServerCommand, serverSettingsKey } from "./serverCommand";
import { ensurePrivateEnvironment, findPython, hasPiLsp, readyEnvironment, shippedWheel } from "./serverEnvironment";
import { effectiveValue, piSettings } from "./settings";
import { connectShared, SharedServerFiles, sharedServerFiles, stopShared } from "./sharedServer";

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The `pi.*` settings as the server's settings object. */
export function currentPiSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("pi");
  return piSettings((key) => effectiveValue(key, config.inspect(key)));
}

function onPath(program: string): string | undefined {
  const extensions = process.platform === "win32" ? [".exe", ".cmd", ""] : [""];
  return findOnPathWith(process.env.PATH, isExecutable, program, extensions);
}

/**
 * The command that starts pi-lsp: `pi.server.command`, else `pi.server.python` (`-m pi_lsp` when
 * pi-lsp is installed there, else the private environment made with it), else pi-lsp on PATH,
 * else the private environment made with the first Python 3.11+ on PATH from the shipped wheel.
 */
export async function resolveServer(
  context: vscode.ExtensionContext,
  output: vscode.OutputChannel,
): Promise<ServerCommand> {
  const config = vscode.workspace.getConfiguration("pi");
  // A repository's .vscode/settings.json must not choose the program this runs.
  const choice = chooseServer(
    effectiveValue("server.command", config.inspect("server.command")),
    effectiveValue("server.python", config.inspect("server.python")),
    onPath,
  );
  if (choice.kind === "command") {
    checkProgram(choice.command, isExecutable, onPath);
    return choice;
  }
  const candidates = choice.kind === "python" ? [choice.python] : ["python3", "python"].filter((p) => onPath(p));
  const python = await findPython(candidates);
  if (choice.kind === "python" && (await hasPiLsp(python.executable))) {
    return { command: python.executable, args: ["-m", "pi_lsp"] };
  }
  const wheel = shippedWheel(vscode.Uri.joinPath(context.extensionUri, "server").fsPath);
  const ready = readyEnvironment(context.globalStorageUri.fsPath, wheel, python);
  if (ready) return ready;
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "pi: setting up its server" },
    (progress) =>
      ensurePrivateEnvironment({
        storageDir: context.globalStorageUri.fsPath,
        wheel,
        python,
        report: (step) => {
          output.appendLine(step);
          progress.report({ message: step });
        },
        log: (line) => output.appendLine(line),
      }),
  );
}

/**
 * Whether windows share one server (`pi.server.shared`, user settings only; default on). Not on
 * Windows, where the server has no state-file lock.
 */
export function sharesServer(): boolean {
  const config = vscode.workspace.getConfiguration("pi");
  return effectiveValue("server.shared", config.inspect("server.shared")) !== false && process.platform !== "win32";
}

/** A server of this window's own, over stdio (`pi.server.shared` off, or no shared one to be had). */
function spawnOwn(server: ServerCommand): ChildProcess {
  return spawn(server.command, [...server.args, "--stdio"], { stdio: "pipe", windowsHide: true });
}

/**
 * This window's way to the user's shared server: connects (starting the server when none answers),
 * keeps the token for `initialize`, and copies the server's log into the output channel. When no
 * shared server can be had, the window gets its own over stdio, and says why.
 */
export class SharedServerLink implements vscode.Disposable {
  /** The token of the server connected to last (undefined: this window's own stdio server). */
  token: string | undefined;
  readonly files: SharedServerFiles;
  private readonly tail: LogTail;
  private tailing = false;

  constructor(
    private readonly server: ServerCommand,
    storageDir: string,
    private readonly output: vscode.OutputChannel,
  ) {
    this.files = sharedServerFiles(storageDir, server);
    this.tail = new LogTail(this.files.log, (text) => output.append(text));
  }

  /** Run at every start and restart of the client (`ServerRoute.start`). */
  async connect(): Promise<StreamInfo | ChildProcess> {
    if (!this.tailing) {
      this.tail.start(); // before a server is started, so its start-up lines are shown too
      this.tailing = true;
    }
    try {
      const { socket, state, started } = await connectShared(this.server, this.files, { log: (line) => this.output.appendLine(line) });
      this.token = state.token;
      this.output.appendLine(
        `${started ? "started" : "connected to"} the shared pi-lsp ${state.version} (pid ${state.pid}, ${state.host}:${state.port}); its log: ${this.files.log}`,
      );
      return { reader: socket, writer: socket, detached: true };
    } catch (error) {
      this.token = undefined;
      const reason = error instanceof Error ? error.message : String(error);
      this.output.appendLine(`no shared pi-lsp (${reason}); starting one for this window over stdio`);
      return spawnOwn(this.server);
    }
  }

  /** Restart Server: stop the shared server (every window then reconnects to a new one). */
  stopServer(): Promise<boolean> {
    return stopShared(this.files);
  }

  dispose(): void {
    this.tail.dispose();
  }
}

/** What the window does around a move to another server (`ServerRoute.followSettings`). */
export interface SwitchHooks {
  log(line: string): void;
  /** Before the client stops: the session is to be reopened on the new server. */
  stopping(): void;
  /** The client runs on the new server: reopen the session there. */
  started(): Promise<void>;
}

/** What the window does when the server goes away and comes back. */
export interface RestartHooks {
  /** The server stopped or the connection was lost; the client starts again. */
  lost(): void;
  /** The server answers again: the session can be reopened there. */
  restarted(): void;
}

/** The user's `pi.server` settings as one comparable value (`serverSettingsKey`). */
export function currentServerSettingsKey(): string {
  const config = vscode.workspace.getConfiguration("pi");
  return serverSettingsKey((key) => effectiveValue(key, config.inspect(key)));
}

/** A resolved server, how the window reaches it, and the settings it came from. */
export interface ResolvedRoute {
  server: ServerCommand;
  shared: SharedServerLink | undefined;
  settingsKey: string;
}

/** Resolve the server from the settings (again if they moved meanwhile) and the link to it. */
export async function resolveRoute(context: vscode.ExtensionContext, output: vscode.OutputChannel): Promise<ResolvedRoute> {
  const { resolved: server, key } = await resolveSettled(currentServerSettingsKey, () => resolveServer(context, output));
  const shared = sharesServer() ? new SharedServerLink(server, context.globalStorageUri.fsPath, output) : undefined;
  if (shared) {
    output.appendLine(`server: ${[server.command, ...server.args].join(" ")}, shared by this user's windows (state file ${shared.files.state})`);
  } else {
    output.appendLine(`starting ${[server.command, ...server.args].join(" ")} --stdio`);
  }
  return { server, shared, settingsKey: key };
}

/**
 * The server the client starts, which may change between starts: the `pi.server` settings changed
 * (the user edited them, or VS Code dropped machine settings it found in a remote window's user
 * settings once it knew the window was remote), and the window moves to the server they name.
 * Either the user's shared server through `shared`, or a server of the window's own.
 */
export class ServerRoute {
  server: ServerCommand;
  shared: SharedServerLink | undefined;
  /** The settings the server was resolved from (`serverSettingsKey`). */
  settingsKey: string;
  private switching: Promise<void> = Promise.resolve();

  constructor(resolved: ResolvedRoute) {
    this.server = resolved.server;
    this.shared = resolved.shared;
    this.settingsKey = resolved.settingsKey;
  }

  /** ServerOptions' function: run by vscode-languageclient at every start and restart. */
  start(): Promise<StreamInfo | ChildProcess> {
    if (this.shared) return this.shared.connect();
    return Promise.resolve(spawnOwn(this.server));
  }

  /** Move to another server (the client is stopped meanwhile); the old link stops tailing its log. */
  use(resolved: ResolvedRoute): void {
    this.shared?.dispose();
    this.server = resolved.server;
    this.shared = resolved.shared;
    this.settingsKey = resolved.settingsKey;
  }

  /**
   * When the `pi.server` settings no longer are those the server came from, stop the client, move
   * to the server they name and start again (a running shared server is left to its other windows).
   * Checks run one after another; a client not running yet is left to the start in progress.
   */
  followSettings(client: LanguageClient, resolve: () => Promise<ResolvedRoute>, hooks: SwitchHooks): Promise<void> {
    this.switching = this.switching.catch(() => undefined).then(async () => {
      const settings = currentServerSettingsKey();
      if (settings === this.settingsKey || !client.isRunning()) return;
      hooks.log(`the pi.server settings changed (${this.settingsKey} → ${settings}): starting again on the server they name`);
      hooks.stopping();
      await client.stop();
      this.use(await resolve());
      await client.start();
      await hooks.started();
    });
    return this.switching;
  }

  dispose(): void {
    this.shared?.dispose();
  }
}

/**
 * Build (not start) the client for the server of `route`: the shared one through its link, else a
 * server of its own over stdio. After a crash (or a lost connection to the shared server) it starts
 * again, telling `hooks`.
 */
export function createClient(route: ServerRoute, output: vscode.OutputChannel, hooks: RestartHooks): LanguageClient {
  const serverOptions: ServerOptions = () => route.start();
  let crashes = 0;
  let restarting = false;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [],
    outputChannel: output,
    // Evaluated once connected: the token is that of the server just connected to.
    initializationOptions: () => {
      const token = route.shared?.token;
      return { pi: token ? { ...currentPiSettings(), token } : currentPiSettings() };
    },
    errorHandler: {
      // Said in the pi output, not as a notification: the close that follows restarts or reconnects.
      error: (error) => {
        output.appendLine(`the connection to pi-lsp failed: ${error.message}`);
        return { action: ErrorAction.Continue, handled: true };
      },
      closed: () => {
        crashes += 1;
        if (crashes > 5) {
          void vscode.window.showErrorMessage("pi-lsp stopped 5 times; not restarting. See the pi output.");
          return { action: CloseAction.DoNotRestart };
        }
        restarting = true;
        hooks.lost();
        output.appendLine(
          route.shared
            ? `lost the connection to pi-lsp; reconnecting, starting it again if it stopped (${crashes} of 5).`
            : `pi-lsp stopped unexpectedly; restarting it (${crashes} of 5).`,
        );
        return { action: CloseAction.Restart, message: "pi-lsp stopped; restarting it." };
      },
    },
  };
  const client = new LanguageClient("pi", "pi", serverOptions, clientOptions);
  // Reopen the session once the restarted server is up (not before: requests would fail).
  client.onDidChangeState((change) => {
    if (restarting && change.newState === State.Running) {
      restarting = false;
      hooks.restarted();
    }
  });
  // Declares that this editor answers pi/requestApproval.
  client.registerFeature({
    fillClientCapabilities(capabilities) {
      const experimental = (capabilities.experimental ??= {}) as Record<string, unknown>;
      experimental.pi = { approvals: true };
    },
    initialize() {},
    getState: () => ({ kind: "static" }),
    clear() {},
  });
  return client;
}
