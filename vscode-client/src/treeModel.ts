/** The session tree from `pi/getTree` (flat format) as nodes a TreeDataProvider can walk lazily. */

export interface FlatTreeNode {
  id: string;
  parentId: string | null;
  type: string;
  timestamp: string;
  role?: string;
  preview?: string;
  label?: string;
  childIds: string[];
}

export interface FlatTree {
  leafId: string | null;
  rootIds: string[];
  nodes: FlatTreeNode[];
}

/** Index over one flat tree: children by id, and which nodes lie on the path to the leaf. */
export class SessionTreeModel {
  private readonly byId = new Map<string, FlatTreeNode>();
  private readonly onLeafPath = new Set<string>();

  constructor(private readonly tree: FlatTree) {
    for (const node of tree.nodes) this.byId.set(node.id, node);
    let cursor = tree.leafId;
    const seen = new Set<string>();
    while (cursor !== null && !seen.has(cursor)) {
      seen.add(cursor);
      this.onLeafPath.add(cursor);
      cursor = this.byId.get(cursor)?.parentId ?? null;
    }
  }

  get leafId(): string | null {
    return this.tree.leafId;
  }

  /** The children of `id`, or the roots for `undefined`; unknown ids have none. */
  children(id?: string): FlatTreeNode[] {
    const ids = id === undefined ? this.tree.rootIds : (this.byId.get(id)?.childIds ?? []);
    return ids.map((childId) => this.byId.get(childId)).filter((n): n is FlatTreeNode => n !== undefined);
  }

  isLeaf(id: string): boolean {
    return id === this.tree.leafId;
  }

  /** True for the leaf and its ancestors (the current branch), which start expanded. */
  isOnBranch(id: string): boolean {
    return this.onLeafPath.has(id);
  }

  /** One line for the tree view: role or type, then the preview or label. */
  static describe(node: FlatTreeNode): string {
    const kind = node.role ?? node.type;
    const text = (node.preview ?? "").replace(/\s+/g, " ").trim();
    return text === "" ? kind : `${kind}: ${text}`;
  }
}
