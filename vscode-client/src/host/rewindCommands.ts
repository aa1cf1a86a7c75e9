/** Session Tree commands of contract v3's checkpoints: Rewind Code to Here, and the entry filter toggle. */
import * as vscode from "vscode";
import type { Rewinder } from "./rewind";
import type { SessionTreeProvider } from "./sessionTree";
import { describeEntry, type TreeRow } from "./treeModel";

export function registerRewindCommands(tree: SessionTreeProvider, rewinder: Rewinder, report: (error: unknown) => void): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand("pi.tree.rewindCode", async (row?: TreeRow) => {
      const entry = row === undefined ? undefined : tree.current?.entryOf(row);
      if (!entry) return;
      try {
        // Any entry of any branch: the workspace is put in that entry's state, the leaf stays. The
        // question names the row in its own words.
        await rewinder.rewind(entry.id, describeEntry(entry));
      } catch (error) {
        report(error);
      }
    }),
    vscode.commands.registerCommand("pi.tree.showAll", () => tree.setShowAll(true).catch(report)),
    vscode.commands.registerCommand("pi.tree.showDefault", () => tree.setShowAll(false).catch(report)),
  ];
}
