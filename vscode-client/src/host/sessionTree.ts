/**
 * The Session Tree view: rows of SessionTreeModel (folded segments, entries loaded a page at a
 * time), the current branch expanded and the leaf marked. The tree is fetched again only while
 * the view is visible (a hidden view refreshes when shown). A change is fetched at once, so a new
 * entry shows in the tree as it shows in the chat; changes arriving during a fetch become one more.
 */
import * as vscode from "vscode";
import { Coalesced } from "./coalesced";
import { SameAsShown } from "./sameAsShown";
import { segmentName } from "./treeFilter";
import { describeEntry, FoldedTree, Requester, SessionTreeModel, TreeRow } from "./treeModel";

export class SessionTreeProvider implements vscode.TreeDataProvider<TreeRow>, vscode.Disposable {
  private model: SessionTreeModel | undefined;
  private readonly changed = new vscode.EventEmitter<TreeRow | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private view: vscode.TreeView<TreeRow> | undefined;
  private stale = false;
  /** Show the entries pi's tree hides by default (the view's filter toggle). */
  private showAll = false;
  /** The fetched tree and the filter shown (see refresh). */
  private readonly shown = new SameAsShown(null);
  private readonly refetch: Coalesced;

  constructor(
    private readonly fetchTree: () => Promise<FoldedTree | undefined>,
    private readonly request: Requester,
    onError: (error: unknown) => void,
  ) {
    this.refetch = new Coalesced(() => this.refresh(), onError);
  }

  /** Create the view (pi.sessionTree) this provider fills. */
  register(): vscode.Disposable {
    this.view = vscode.window.createTreeView("pi.sessionTree", { treeDataProvider: this, showCollapseAll: true });
    const visibility = this.view.onDidChangeVisibility((event) => {
      if (event.visible && this.stale) this.refreshSoon();
    });
    return vscode.Disposable.from(this.view, visibility, this);
  }

  get current(): SessionTreeModel | undefined {
    return this.model;
  }

  /**
   * Fetch the tree again (after pi/sessionChanged or a session switch): at once, one folded tree
   * (O(segments)); expanded rows then reload their page. Changes during a fetch become one more.
   */
  refreshSoon(): void {
    if (this.view !== undefined && !this.view.visible) {
      this.stale = true;
      return;
    }
    this.refetch.ask();
  }

  async refresh(): Promise<void> {
    this.stale = false;
    const tree = await this.fetchTree();
    if (!this.shown.changes([tree ?? null, this.showAll])) return; // the same tree again: no redraw
    this.model = tree === undefined ? undefined : new SessionTreeModel(tree, this.request, this.showAll);
    this.changed.fire(undefined);
  }

  /** The filter toggle: all entries, or (the default) those pi's tree shows. */
  async setShowAll(showAll: boolean): Promise<void> {
    this.showAll = showAll;
    await vscode.commands.executeCommand("setContext", "pi.tree.showAll", showAll);
    await this.refresh();
  }

  getChildren(row?: TreeRow): TreeRow[] | Promise<TreeRow[]> {
    const model = this.model;
    if (model === undefined) return [];
    return row === undefined ? model.roots() : model.children(row);
  }

  getTreeItem(row: TreeRow): vscode.TreeItem {
    const model = this.model;
    const Collapsible = vscode.TreeItemCollapsibleState;
    if (row.kind === "earlier") {
      const item = new vscode.TreeItem(`${row.remaining} earlier entries…`, Collapsible.Collapsed);
      item.id = `earlier:${row.beforeId}`;
      item.iconPath = new vscode.ThemeIcon("ellipsis");
      return item;
    }
    const entry = model?.entryOf(row);
    const segment = row.kind === "segment" ? row.segment : undefined;
    const state = model === undefined || !model.hasChildren(row)
      ? Collapsible.None
      : segment !== undefined && model.isSegmentOnBranch(segment.id)
        ? Collapsible.Expanded
        : Collapsible.Collapsed;
    if (entry === undefined && segment !== undefined) {
      // A chain of entries, shown by its first entry (treeFilter.ts: or what stands for it) and its length.
      const named = segmentName(segment, this.showAll);
      const item = new vscode.TreeItem(named === "session start" ? named : describeEntry(named), state);
      item.id = `segment:${segment.id}`;
      const marks = [`${segment.length} entries`, ...segment.labels.map((l) => `[${l.label}]`)];
      if (model?.holdsLeaf(segment.id)) marks.push("← leaf");
      item.description = marks.join(" ");
      item.iconPath = new vscode.ThemeIcon(model?.isSegmentOnBranch(segment.id) ? "git-commit" : "git-branch");
      item.tooltip = `${segment.length} entries, ${segment.first.id} → ${segment.last.id}\n${describeEntry(segment.last)}`;
      item.contextValue = "piSegment";
      return item;
    }
    const node = entry ?? { id: "?", parentId: null, type: "?", timestamp: "" };
    const item = new vscode.TreeItem(describeEntry(node), state);
    item.id = `entry:${node.id}`;
    const isLeaf = model?.isLeaf(node.id) ?? false;
    const label = model?.labelOf(node.id);
    item.description = [label ? `[${label}]` : "", isLeaf ? "← leaf" : ""].filter(Boolean).join(" ");
    item.iconPath = new vscode.ThemeIcon(isLeaf ? "circle-filled" : "circle-outline");
    item.tooltip = `${node.type} ${node.id} ${node.timestamp}${isLeaf ? "\n(the leaf: the next message continues here)" : ""}`;
    item.contextValue = "piEntry";
    // A click on a message of the current branch shows it in the chat (other branches: the menu).
    if (model?.isOnBranch(node.id) === true && node.type === "message") {
      item.command = { command: "pi.tree.openInChat", title: "Open in Chat", arguments: [row] };
    }
    item.accessibilityInformation = { label: `${describeEntry(node)}${isLeaf ? ", leaf" : ""}` };
    return item;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
