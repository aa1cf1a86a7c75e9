/** Show System Prompt (a read-only virtual document with its sources and token counts), Open Session File and Run Shell Command. */
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { PiSession, RESTORE_WAIT_MS } from "./session";
import { ShellResult, shellSummary } from "./shellResult";
import { SystemPromptResult, systemPromptDocument } from "./systemPromptView";
import { Methods } from "../shared/protocol";

const SCHEME = "pi-system-prompt";

/**
 * A System Prompt tab restored with the window waits in `session.ready()` (the server started, the
 * window's last session open again or not) instead of asking no server.
 */
export function registerSessionDocuments(client: () => LanguageClient, session: PiSession): vscode.Disposable[] {
  const changed = new vscode.EventEmitter<vscode.Uri>();
  const promptUri = vscode.Uri.from({ scheme: SCHEME, path: "/System Prompt.md" });
  const provider: vscode.TextDocumentContentProvider = {
    onDidChange: changed.event,
    async provideTextDocumentContent(): Promise<string> {
      await session.ready(RESTORE_WAIT_MS);
      const cwd = session.current?.cwd ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
      const params = session.current ? {} : { cwd };
      try {
        const prompt = await client().sendRequest<SystemPromptResult>(Methods.getSystemPrompt, params);
        return systemPromptDocument(prompt, cwd);
      } catch (error) {
        // A tab never stays empty: it says why (no server, a server error) and pi: Show System Prompt retries.
        const message = error instanceof Error ? error.message : String(error);
        return `pi could not get the system prompt: ${message}\n\nRun "pi: Show System Prompt" again once the server runs.`;
      }
    },
  };
  return [
    changed,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, provider),
    // The document follows the server's pi/systemPromptChanged (wired in extension.ts).
    vscode.commands.registerCommand("pi.internal.systemPromptChanged", () => changed.fire(promptUri)),
    vscode.commands.registerCommand("pi.showSystemPrompt", async () => {
      const document = await vscode.workspace.openTextDocument(promptUri);
      await vscode.window.showTextDocument(document, { preview: true });
    }),
    vscode.commands.registerCommand("pi.openSessionFile", async () => {
      const file = session.current?.file;
      if (!file) {
        void vscode.window.showInformationMessage("The open pi session has no file (or none is open).");
        return;
      }
      await vscode.window.showTextDocument(vscode.Uri.file(file));
    }),
    vscode.commands.registerCommand("pi.runShellCommand", async () => {
      if (!session.current) {
        void vscode.window.showInformationMessage("Open a pi session first.");
        return;
      }
      const command = await vscode.window.showInputBox({
        prompt: "Shell command (its output is added to the session; start with ! to keep it out of the context)",
      });
      if (!command) return;
      const exclude = command.startsWith("!");
      const shown = exclude ? command.slice(1) : command;
      // Cancel kills the command (the server stores what it printed, marked cancelled).
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `pi: $ ${shown}`, cancellable: true },
        (_progress, cancel) =>
          client().sendRequest<ShellResult>(Methods.bash, { command: shown, excludeFromContext: exclude }, cancel).catch((error: unknown) => {
            if (cancel.isCancellationRequested) return undefined;
            throw error;
          }),
      );
      if (result === undefined) {
        void vscode.window.showInformationMessage(`pi: $ ${shown} was stopped.`);
        return;
      }
      const summary = shellSummary(shown, result);
      const show = summary.failed
        ? vscode.window.showWarningMessage(summary.message, "Show Output")
        : vscode.window.showInformationMessage(summary.message, "Show Output");
      if ((await show) === "Show Output") {
        const document = await vscode.workspace.openTextDocument({ content: `$ ${shown}\n${result.output}`, language: "log" });
        await vscode.window.showTextDocument(document, { preview: true });
      }
    }),
  ];
}
