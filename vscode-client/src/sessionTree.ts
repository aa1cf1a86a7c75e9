/**
 * The Session Tree view: rows of SessionTreeModel (folded segments, entries loaded a page at a
 * time), the current branch expanded and the leaf marked. The tree is fetched again only while
 * the view is visible (a hidden view refreshes when shown), and changes are coalesced.
 */
import * as vscode from "vscode";
import { describeEntry, FoldedTree, Requester, SessionTreeModel, TreeRow } from "./treeModel";

/** How long a burst of pi/sessionChanged is gathered before the tree is fetched again. */
const REFRESH_DELAY_MS = 250;

export class SessionTreeProvider implements vscode.TreeDataProvider<TreeRow>, vscode.Disposable {
  private model: SessionTreeModel | undefined;
  private readonly changed = new vscode.EventEmitter<TreeRow | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private view: vscode.TreeView<TreeRow> | undefined;
  private stale = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fetchTree: () => Promise<FoldedTree | undefined>,
    private readonly request: Requester,
    private readonly onError: (error: unknown) => void,
  ) {}

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

  /** Fetch the tree again soon (after pi/sessionChanged or a session switch); bursts become one fetch. */
  refreshSoon(): void {
    if (this.view !== undefined && !this.view.visible) {
      this.stale = true;
      return;
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refresh().catch(this.onError);
    }, REFRESH_DELAY_MS);
  }

  async refresh(): Promise<void> {
    this.stale = false;
    const tree = await this.fetchTree();
    this.model = tree === undefined ? undefined : new SessionTreeModel(tree, this.request);
    this.changed.fire(undefined);
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
      // A chain of entries, shown by its first entry and its length.
      const item = new vscode.TreeItem(describeEntry(segment.first), state);
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
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.changed.dispose();
  }
}
