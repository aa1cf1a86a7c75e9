/** Wires the pi extension: server client, session, tree view, gauge and commands. */
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { askApproval } from "./approvals";
import { ApprovalRequest } from "./approvalModel";
import { ChatViewProvider } from "./chatView";
import { createClient, currentPiSettings } from "./client";
import { ContextGauge } from "./gauge";
import { PiSession } from "./session";
import { registerSessionDocuments } from "./sessionDocuments";
import { SessionTreeProvider } from "./sessionTree";
import { ServerNotFoundError } from "./serverCommand";
import { registerTreeCommands } from "./treeCommands";

let client: LanguageClient | undefined;

function reportError(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  void vscode.window.showErrorMessage(`pi: ${message}`);
}

/** Run a command's work, turning failures into an error message rather than a silent reject. */
function guarded(work: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await work();
    } catch (error) {
      reportError(error);
    }
  };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("pi");
  const gauge = new ContextGauge();
  const running = (): LanguageClient => {
    if (!client) throw new Error("pi-lsp is not running.");
    return client;
  };
  const session = new PiSession(running);
  const tree = new SessionTreeProvider(() => session.tree());
  const chat = new ChatViewProvider(context.extensionUri, running, session);
  context.subscriptions.push(vscode.window.registerWebviewViewProvider("pi.chat", chat));
  context.subscriptions.push(output, gauge, vscode.window.registerTreeDataProvider("pi.sessionTree", tree));

  const refresh = async (): Promise<void> => {
    try {
      gauge.show(await session.usage());
      await chat.redraw();
      await tree.refresh();
    } catch (error) {
      output.appendLine(`refresh failed: ${String(error)}`);
    }
  };
  context.subscriptions.push(session.onDidChange(() => void refresh()));

  try {
    client = createClient(output, () => void session.reopen().catch(reportError));
  } catch (error) {
    if (error instanceof ServerNotFoundError) {
      reportError(error);
      return;
    }
    throw error;
  }
  context.subscriptions.push(
    client.onNotification("pi/sessionChanged", (params: { sessionId: string; leafId: string | null }) => {
      if (params.sessionId === session.current?.sessionId) session.noteChanged(params.leafId);
    }),
    client.onNotification("pi/event", (params: { sessionId: string; event: Record<string, unknown> }) => {
      if (params.sessionId !== session.current?.sessionId) return;
      chat.onEvent(params.event);
      if (params.event.type === "agent_end") void refresh();
    }),
    vscode.workspace.onDidChangeConfiguration((change) => {
      if (change.affectsConfiguration("pi") && client?.isRunning()) {
        void client.sendNotification("workspace/didChangeConfiguration", { settings: { pi: currentPiSettings() } });
      }
    }),
    vscode.commands.registerCommand("pi.newSession", guarded(() => session.newSession())),
    vscode.commands.registerCommand("pi.continueRecent", guarded(() => session.continueRecent())),
    vscode.commands.registerCommand("pi.openSession", guarded(() => session.pickAndOpen())),
    vscode.commands.registerCommand("pi.compact", guarded(() => session.compact())),
    client.onRequest("pi/requestApproval", (request: ApprovalRequest) => askApproval(request)),
    client.onNotification("pi/systemPromptChanged", () => {
      void vscode.commands.executeCommand("pi.internal.systemPromptChanged");
    }),
    ...registerTreeCommands(running, session),
    ...registerSessionDocuments(running, session),
    vscode.commands.registerCommand("pi.renameSession", guarded(() => session.rename())),
    vscode.commands.registerCommand("pi.showServerLog", () => output.show()),
    vscode.commands.registerCommand(
      "pi.restartServer",
      guarded(async () => {
        await client?.restart();
        await session.reopen();
      }),
    ),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
