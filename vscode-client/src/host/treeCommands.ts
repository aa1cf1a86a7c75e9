/**
 * Commands on a Session Tree entry: navigate (with summary), label, branch to a new session and
 * open in chat. The entry comes from the clicked row (a one-entry segment is its entry).
 */
import * as vscode from "vscode";
import { PiSession } from "./session";
import { SessionTreeProvider } from "./sessionTree";
import { Requester, TreeEntry, TreeRow } from "./treeModel";
import { Methods } from "../shared/protocol";

export interface TreeCommandDeps {
  request: Requester;
  session: PiSession;
  tree: SessionTreeProvider;
  /** Show the chat and bring the entry's message into view. */
  revealInChat: (entryId: string) => Promise<void>;
  report: (error: unknown) => void;
}

export function registerTreeCommands(deps: TreeCommandDeps): vscode.Disposable[] {
  const { request, session, tree } = deps;
  const on = (command: string, work: (entry: TreeEntry) => Promise<void>) =>
    vscode.commands.registerCommand(command, async (row?: TreeRow) => {
      const entry = row === undefined ? undefined : tree.current?.entryOf(row);
      if (!entry) return;
      try {
        await work(entry);
      } catch (error) {
        deps.report(error);
      }
    });
  return [
    on("pi.tree.navigate", async (entry) => {
      await request(Methods.navigate, { targetId: entry.id });
    }),
    on("pi.tree.navigateWithSummary", async (entry) => {
      const instructions = await vscode.window.showInputBox({
        title: "Navigate with summary",
        prompt: "Optional instructions for the summary of the branch you leave (Enter to go on, Escape to cancel)",
      });
      if (instructions === undefined) return;
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "pi: summarising the branch you leave…" },
        () => request(Methods.navigate, { targetId: entry.id, summarize: true, customInstructions: instructions || undefined }),
      );
    }),
    on("pi.tree.label", async (entry) => {
      const label = await vscode.window.showInputBox({
        prompt: "Label for this entry (empty clears it)",
        value: tree.current?.labelOf(entry.id) ?? "",
      });
      if (label === undefined) return;
      await request(Methods.setLabel, { targetId: entry.id, label: label === "" ? null : label });
    }),
    on("pi.tree.branchToNewSession", async (entry) => {
      await session.adoptFrom(Methods.branchToNewSession, { entryId: entry.id });
    }),
    on("pi.tree.openInChat", async (entry) => {
      const onBranch = tree.current?.isOnBranch(entry.id) ?? false;
      if (!onBranch) {
        // The chat shows the current branch: another branch's entry needs the leaf moved first.
        const go = await vscode.window.showInformationMessage(
          "This entry is on another branch. Move the session there (the chat then shows that branch)?",
          "Open That Branch",
        );
        if (go === undefined) return;
        await request(Methods.setLeaf, { id: entry.id });
      }
      await deps.revealInChat(entry.id);
    }),
  ];
}
