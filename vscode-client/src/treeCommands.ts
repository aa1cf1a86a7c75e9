/** Commands on a Session Tree entry: navigate (with summary), label, branch to a new session. */
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { PiSession } from "./session";
import { FlatTreeNode } from "./treeModel";

export function registerTreeCommands(client: () => LanguageClient, session: PiSession): vscode.Disposable[] {
  const request = <T>(method: string, params: object): Promise<T> => client().sendRequest<T>(method, params);
  const report = (error: unknown) =>
    void vscode.window.showErrorMessage(`pi: ${error instanceof Error ? error.message : String(error)}`);
  const on = (command: string, work: (node: FlatTreeNode) => Promise<void>) =>
    vscode.commands.registerCommand(command, async (node?: FlatTreeNode) => {
      if (!node) return;
      try {
        await work(node);
      } catch (error) {
        report(error);
      }
    });
  return [
    on("pi.tree.navigate", async (node) => {
      await request("pi/navigate", { targetId: node.id });
    }),
    on("pi.tree.navigateWithSummary", async (node) => {
      const instructions = await vscode.window.showInputBox({
        prompt: "Optional instructions for the summary of the branch you leave",
      });
      if (instructions === undefined) return;
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "pi: summarising the branch…" },
        () => request("pi/navigate", { targetId: node.id, summarize: true, customInstructions: instructions || undefined }),
      );
    }),
    on("pi.tree.label", async (node) => {
      const label = await vscode.window.showInputBox({
        prompt: "Label for this entry (empty clears it)",
        value: node.label ?? "",
      });
      if (label === undefined) return;
      await request("pi/setLabel", { targetId: node.id, label: label === "" ? null : label });
    }),
    on("pi.tree.branchToNewSession", async (node) => {
      await session.adoptFrom("pi/branchToNewSession", { entryId: node.id });
    }),
  ];
}
