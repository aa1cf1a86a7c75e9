/** Starts pi-lsp with vscode-languageclient: command resolution, settings, log channel, restarts. */
import * as fs from "node:fs";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";
import { chooseServer, findOnPathWith, ServerCommand } from "./serverCommand";
import { ensurePrivateEnvironment, findPython, hasPiLsp, readyEnvironment, shippedWheel } from "./serverEnvironment";
import { effectiveValue, piSettings } from "./settings";

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
  if (choice.kind === "command") return choice;
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
 * Build (not start) the client for a resolved server. `onRestarted` runs after the server came
 * back from a crash, so the session can be reopened there.
 */
export function createClient(server: ServerCommand, output: vscode.OutputChannel, onRestarted: () => void): LanguageClient {
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    transport: TransportKind.stdio,
  };
  let crashes = 0;
  let restarting = false;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [],
    outputChannel: output,
    initializationOptions: () => ({ pi: currentPiSettings() }),
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue }),
      closed: () => {
        crashes += 1;
        if (crashes > 5) {
          void vscode.window.showErrorMessage("pi-lsp stopped 5 times; not restarting. See the pi output.");
          return { action: CloseAction.DoNotRestart };
        }
        restarting = true;
        output.appendLine(`pi-lsp stopped unexpectedly; restarting it (${crashes} of 5).`);
        return { action: CloseAction.Restart, message: "pi-lsp stopped; restarting it." };
      },
    },
  };
  const client = new LanguageClient("pi", "pi", serverOptions, clientOptions);
  // Reopen the session once the restarted server is up (not before: requests would fail).
  client.onDidChangeState((change) => {
    if (restarting && change.newState === State.Running) {
      restarting = false;
      onRestarted();
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
