/**
 * The Changes view in the pi container: the files the last run changed and, one level up, the whole
 * session's (`pi/getChanges`). A file opens VS Code's diff editor (before/after from its diff and
 * the file on disk); its inline actions are Revert (`pi/restoreFiles` with `paths`, to the group's
 * starting point, with Undo) and Open File. Fetched again after a run, a session change or a restore,
 * while the view is visible.
 */
import * as path from "node:path";
import * as vscode from "vscode";
import { changeSides, lastRunChanges, sessionChanges, shownChanges, type ChangedFile, type ChangeSet } from "./changesModel";
import { Coalesced } from "./coalesced";
import { SameAsShown } from "./sameAsShown";
import { currentText, DiffDocuments } from "./diffView";
import type { Requester } from "../shared/messageActions";
import { restoredSummary, type RestoreResult } from "../shared/rewindModel";
import { Methods } from "../shared/protocol";

/**
 * A row names what it shows (a group, or a file in a group), not the fetched set: a refresh that
 * only moved a group's end points keeps the rows (no redraw), and a command looks the set up when
 * it runs, so it always uses the newest points.
 */
type ChangeRow = { kind: "group"; scope: ChangeSet["scope"] } | { kind: "file"; scope: ChangeSet["scope"]; path: string };

const GROUP_TITLES = { run: "Last run", session: "Whole session" } as const;
const CHANGE_LETTERS = { added: "A", modified: "M", deleted: "D" } as const;

export interface ChangesDeps {
  request: Requester;
  /** The open session's folder (changes' paths are relative to it); undefined: no session. */
  cwd: () => string | undefined;
  diffs: DiffDocuments;
  report: (error: unknown) => void;
}

export class ChangesViewProvider implements vscode.TreeDataProvider<ChangeRow>, vscode.Disposable {
  private sets: ChangeSet[] = [];
  private readonly changed = new vscode.EventEmitter<ChangeRow | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private view: vscode.TreeView<ChangeRow> | undefined;
  private stale = true;
  /** What the rows show (see shownChanges) and the folder their paths are relative to. */
  private readonly shown = new SameAsShown([null, []]);
  private readonly refetch: Coalesced;

  constructor(private readonly deps: ChangesDeps) {
    this.refetch = new Coalesced(() => this.refresh(), deps.report);
  }

  register(): vscode.Disposable {
    this.view = vscode.window.createTreeView("pi.changes", { treeDataProvider: this });
    const visibility = this.view.onDidChangeVisibility((event) => {
      if (event.visible && this.stale) this.refreshSoon();
    });
    const run = (command: string, work: (row: ChangeRow) => Promise<void>) =>
      vscode.commands.registerCommand(command, async (row?: ChangeRow) => {
        if (!row) return;
        try {
          await work(row);
        } catch (error) {
          this.deps.report(error);
        }
      });
    return vscode.Disposable.from(
      this.view,
      visibility,
      this,
      run("pi.changes.openDiff", (row) => this.openDiff(row)),
      run("pi.changes.revert", (row) => this.revert(row)),
      run("pi.changes.openFile", (row) => this.openFile(row)),
      vscode.commands.registerCommand("pi.changes.refresh", () => this.refresh().catch(this.deps.report)),
    );
  }

  /** Fetch again soon (after a run, a session change, a restore); a hidden view waits until shown. */
  refreshSoon(): void {
    if (this.view !== undefined && !this.view.visible) {
      this.stale = true;
      return;
    }
    this.refetch.ask();
  }

  async refresh(): Promise<void> {
    this.stale = false;
    const cwd = this.deps.cwd();
    const sets = cwd === undefined ? [] : await Promise.all([lastRunChanges(this.deps.request), sessionChanges(this.deps.request)]);
    this.sets = sets; // the rows look their sets up: new end points need no redraw
    if (this.shown.changes([cwd ?? null, shownChanges(sets)])) this.changed.fire(undefined);
  }

  /** The row's group and file as last fetched; undefined once a refresh dropped them. */
  private lookUp(row: ChangeRow): { set: ChangeSet; file?: ChangedFile } | undefined {
    const set = this.sets.find((candidate) => candidate.scope === row.scope);
    if (!set || row.kind === "group") return set && { set };
    const file = set.files.find((candidate) => candidate.path === row.path);
    return file && { set, file };
  }

  /** A file row's group and file, or undefined (a group row, or a row a refresh dropped). */
  private fileOf(row: ChangeRow): { set: ChangeSet; file: ChangedFile } | undefined {
    const found = this.lookUp(row);
    return found?.file ? { set: found.set, file: found.file } : undefined;
  }

  getChildren(row?: ChangeRow): ChangeRow[] {
    if (!row) return this.sets.map((set) => ({ kind: "group", scope: set.scope }));
    if (row.kind !== "group") return [];
    return (this.lookUp(row)?.set.files ?? []).map((file) => ({ kind: "file", scope: row.scope, path: file.path }));
  }

  getTreeItem(row: ChangeRow): vscode.TreeItem {
    if (row.kind === "group") {
      const count = this.lookUp(row)?.set.files.length ?? 0;
      const item = new vscode.TreeItem(
        GROUP_TITLES[row.scope],
        row.scope === "run" ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
      );
      item.id = `group:${row.scope}`;
      item.description = count === 0 ? "no changes" : `${count} file${count === 1 ? "" : "s"}`;
      item.contextValue = "piChangeGroup";
      return item;
    }
    const found = this.fileOf(row);
    if (!found) return new vscode.TreeItem(path.basename(row.path)); // dropped by a refresh drawing now
    const { file, set } = found;
    const item = new vscode.TreeItem(path.basename(file.path), vscode.TreeItemCollapsibleState.None);
    item.id = `${set.scope}:${file.path}`;
    const folder = path.dirname(file.path);
    item.description = `${folder === "." ? "" : `${folder} · `}${CHANGE_LETTERS[file.change]}`;
    item.tooltip = `${file.path}: ${file.change} (${GROUP_TITLES[set.scope].toLowerCase()})`;
    const cwd = this.deps.cwd();
    if (cwd) item.resourceUri = vscode.Uri.file(path.join(cwd, file.path));
    item.contextValue = file.change === "deleted" ? "piChangedFileDeleted" : "piChangedFile";
    item.command = { command: "pi.changes.openDiff", title: "Open Changes", arguments: [row] };
    item.accessibilityInformation = { label: `${file.path}, ${file.change}` };
    return item;
  }

  private async openDiff(row: ChangeRow): Promise<void> {
    const cwd = this.deps.cwd();
    const found = this.fileOf(row);
    if (!found || !cwd) return;
    const { set, file } = found;
    const { files } = await this.deps.request<{ files: (ChangedFile & { diff?: string })[] }>(Methods.getChanges, {
      ...(set.fromId ? { fromId: set.fromId } : {}),
      ...(set.toId ? { toId: set.toId } : {}),
      paths: [file.path],
      diff: true,
    });
    const diff = files[0]?.diff ?? "";
    const absolute = path.join(cwd, file.path);
    const sides = changeSides(diff, file.change === "deleted" ? undefined : await currentText(absolute));
    const title = `${file.path} (${GROUP_TITLES[set.scope].toLowerCase()})`;
    if (typeof sides === "string") {
      const document = await vscode.workspace.openTextDocument({ language: "diff", content: sides });
      await vscode.window.showTextDocument(document, { preview: true });
      return;
    }
    await this.deps.diffs.open({ title, ...sides }, file.path);
  }

  /** Put one file back as it was at the group's start; the result says what happened, with Undo. */
  private async revert(row: ChangeRow): Promise<void> {
    const found = this.fileOf(row);
    if (!found?.set.fromId) return;
    const { set, file } = found;
    const result = await this.deps.request<RestoreResult>(Methods.restoreFiles, { targetId: set.fromId, paths: [file.path] });
    this.refreshSoon();
    const undo = result.undoId && result.restored.length > 0 ? ["Undo restore"] : [];
    const text = result.restored.length === 0 && result.conflicts.length === 0 ? `${file.path} is already as it was.` : restoredSummary(result).replace("Rewound the code: restored", "Reverted");
    const choice = await vscode.window.showInformationMessage(`pi: ${text}`, ...undo);
    if (choice && result.undoId) {
      await this.deps.request(Methods.undoRestore, { undoId: result.undoId });
      this.refreshSoon();
    }
  }

  private async openFile(row: ChangeRow): Promise<void> {
    const cwd = this.deps.cwd();
    const file = this.fileOf(row)?.file;
    if (!file || !cwd) return;
    if (file.change === "deleted") {
      void vscode.window.showInformationMessage(`pi: ${file.path} was deleted; Open Changes shows what it held.`);
      return;
    }
    await vscode.window.showTextDocument(vscode.Uri.file(path.join(cwd, file.path)), { preview: true });
  }

  dispose(): void {
    this.changed.dispose();
  }
}
