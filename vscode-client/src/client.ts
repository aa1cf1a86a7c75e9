/** Starts pi-lsp with vscode-languageclient: command resolution, settings, log channel, restarts. */
import * as fs from "node:fs";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import { findOnPathWith, resolveServerCommand } from "./serverCommand";
import { piSettings } from "./settings";

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
  return piSettings((key) => {
    const inspected = config.inspect(key);
    return inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
  });
}

/**
 * Build (not start) the client. `onRestarted` runs after the server came back from a crash, so
 * the session can be reopened there.
 */
export function createClient(output: vscode.OutputChannel, onRestarted: () => void): LanguageClient {
  const configured = vscode.workspace.getConfiguration("pi").get<unknown>("server.command");
  const extensions = process.platform === "win32" ? [".exe", ".cmd", ""] : [""];
  const server = resolveServerCommand(configured, (program) =>
    findOnPathWith(process.env.PATH, isExecutable, program, extensions),
  );
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    transport: TransportKind.stdio,
  };
  let crashes = 0;
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
        setTimeout(onRestarted, 500);
        return { action: CloseAction.Restart };
      },
    },
  };
  const client = new LanguageClient("pi", "pi", serverOptions, clientOptions);
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
