/** The Session Tree view over `pi/getTree` (flat format), leaf marked, current branch expanded. */
import * as vscode from "vscode";
import { FlatTree, FlatTreeNode, SessionTreeModel } from "./treeModel";

export class SessionTreeProvider implements vscode.TreeDataProvider<FlatTreeNode> {
  private model: SessionTreeModel | undefined;
  private readonly changed = new vscode.EventEmitter<FlatTreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly fetchTree: () => Promise<FlatTree | undefined>) {}

  /** Fetch the tree again (after pi/sessionChanged or a session switch). */
  async refresh(): Promise<void> {
    const tree = await this.fetchTree();
    this.model = tree === undefined ? undefined : new SessionTreeModel(tree);
    this.changed.fire(undefined);
  }

  getChildren(node?: FlatTreeNode): FlatTreeNode[] {
    return this.model?.children(node?.id) ?? [];
  }

  getTreeItem(node: FlatTreeNode): vscode.TreeItem {
    const model = this.model;
    const collapsible =
      node.childIds.length === 0
        ? vscode.TreeItemCollapsibleState.None
        : model?.isOnBranch(node.id)
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(SessionTreeModel.describe(node), collapsible);
    item.id = node.id;
    const isLeaf = model?.isLeaf(node.id) ?? false;
    item.description = [node.label ? `[${node.label}]` : "", isLeaf ? "← leaf" : ""].filter(Boolean).join(" ");
    item.iconPath = new vscode.ThemeIcon(isLeaf ? "circle-filled" : "circle-outline");
    item.tooltip = `${node.type} ${node.id} ${node.timestamp}`;
    item.contextValue = "piEntry";
    return item;
  }
}
