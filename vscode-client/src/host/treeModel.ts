/**
 * The Session Tree as lazily loaded nodes, so a 100k-entry session costs what is on screen:
 * `pi/getTree {fold: true}` gives the branch structure (linear chains folded into segments, bytes
 * O(segments)); a segment's entries are loaded when it is expanded, a page at a time from its end
 * (`pi/getBranch` with `limit`, then `beforeId` for earlier pages). Pure: the requester is passed in.
 */
import { Methods } from "../shared/protocol";

import { connectionLost } from "./connectionLost";
import { hiddenByDefault } from "./treeFilter";

type Json = Record<string, unknown>;

export type Requester = <T>(method: string, params: object) => Promise<T>;

/** An entry as `pi/getTree` describes it (flat-form node without children). */
export interface TreeEntry {
  id: string;
  parentId: string | null;
  type: string;
  timestamp: string;
  role?: string;
  preview?: string;
  label?: string;
}

export interface Segment {
  id: string;
  parentId: string | null;
  length: number;
  first: TreeEntry;
  last: TreeEntry;
  labels: { id: string; label: string }[];
  childIds: string[];
}

export interface FoldedTree {
  leafId: string | null;
  format: "folded";
  rootIds: string[];
  leafSegmentId: string | null;
  segments: Segment[];
}

/** A row of the tree view. */
export type TreeRow =
  | { kind: "segment"; segment: Segment }
  | { kind: "entry"; entry: TreeEntry; segmentId: string; position: number }
  | { kind: "earlier"; segmentId: string; beforeId: string; remaining: number };

/** Entries per page when a segment (or its earlier part) is expanded. */
export const PAGE_SIZE = 100;

const PREVIEW_LENGTH = 120;

/** A field that should be a string; anything else counts as empty. */
function str(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => (typeof part === "object" && part !== null && (part as Json).type === "text" ? str((part as Json).text) : ""))
    .join("");
}

function toolNames(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content
    .filter((part: unknown): part is Json => typeof part === "object" && part !== null && (part as Json).type === "toolCall")
    .map((part) => str(part.name, "tool"));
}

/**
 * Whether pi's tree view leaves this entry out (as the server's `noText` says for tree nodes): an
 * assistant message without non-blank text (only tool calls or thinking) that stopped on `stop`
 * or `toolUse`. pi shows it anyway when it is the leaf.
 */
export function leftOutByPi(entry: Json): boolean {
  if (entry.type !== "message" || typeof entry.message !== "object" || entry.message === null) return false;
  const message = entry.message as Json;
  if (message.role !== "assistant") return false;
  if (message.stopReason && message.stopReason !== "stop" && message.stopReason !== "toolUse") return false;
  const content = message.content;
  if (typeof content === "string") return content.trim() === "";
  if (!Array.isArray(content)) return true;
  return !content.some(
    (part: unknown) => typeof part === "object" && part !== null && (part as Json).type === "text" && typeof (part as Json).text === "string" && ((part as Json).text as string).trim() !== "",
  );
}

/** A session entry (as `pi/getBranch` returns it) described the way `pi/getTree` describes it. */
export function treeEntryOf(entry: Json): TreeEntry {
  const node: TreeEntry = {
    id: String(entry.id),
    parentId: typeof entry.parentId === "string" ? entry.parentId : null,
    type: String(entry.type),
    timestamp: str(entry.timestamp),
  };
  let preview = "";
  if (entry.type === "message" && typeof entry.message === "object" && entry.message !== null) {
    const message = entry.message as Json;
    node.role = str(message.role);
    if (message.role === "bashExecution") preview = `$ ${str(message.command)}`;
    else preview = textOf(message.content) || toolNames(message.content).join(", ");
  } else if (typeof entry.summary === "string") {
    preview = entry.summary;
  } else if (entry.type === "session_info" && typeof entry.name === "string") {
    preview = entry.name;
  } else if (entry.type === "label") {
    preview = typeof entry.label === "string" ? entry.label : "(label cleared)";
  } else if (entry.type === "model_change") {
    preview = str(entry.modelId);
  } else if (entry.type === "thinking_level_change") {
    preview = str(entry.thinkingLevel);
  }
  if (preview !== "") node.preview = preview.slice(0, PREVIEW_LENGTH);
  return node;
}

/** One line for the tree view: role or type, then the preview. */
export function describeEntry(entry: TreeEntry): string {
  const kind = entry.role || entry.type;
  const text = (entry.preview ?? "").replace(/\s+/g, " ").trim();
  return text === "" ? kind : `${kind}: ${text}`;
}

/** The folded tree of one session and the pages of it loaded so far. */
export class SessionTreeModel {
  private readonly segments = new Map<string, Segment>();
  /** Segment by the id of its last entry (a child segment's parentId). */
  private readonly byLastId = new Map<string, Segment>();
  private readonly onLeafPath = new Set<string>();
  private readonly labels = new Map<string, string>();
  /** Position in its segment (0 = first) of every entry loaded so far. */
  private readonly positions = new Map<string, { segmentId: string; position: number }>();

  /** `showAll`: also the entries pi's tree hides by default (settings changes, labels, checkpoints; treeFilter.ts). */
  constructor(
    private readonly tree: FoldedTree,
    private readonly request: Requester,
    private readonly showAll = false,
  ) {
    for (const segment of tree.segments) {
      this.segments.set(segment.id, segment);
      this.byLastId.set(segment.last.id, segment);
      for (const { id, label } of segment.labels) this.labels.set(id, label);
      this.positions.set(segment.first.id, { segmentId: segment.id, position: 0 });
      this.positions.set(segment.last.id, { segmentId: segment.id, position: segment.length - 1 });
    }
    let cursor = tree.leafSegmentId === null ? undefined : this.segments.get(tree.leafSegmentId);
    while (cursor !== undefined && !this.onLeafPath.has(cursor.id)) {
      this.onLeafPath.add(cursor.id);
      cursor = cursor.parentId === null ? undefined : this.byLastId.get(cursor.parentId);
    }
  }

  get leafId(): string | null {
    return this.tree.leafId;
  }

  /** The top rows: the root segments. */
  roots(): TreeRow[] {
    return this.segmentRows(this.tree.rootIds);
  }

  private segmentRows(ids: string[]): TreeRow[] {
    return ids
      .map((id) => this.segments.get(id))
      .filter((segment): segment is Segment => segment !== undefined)
      .map((segment) => ({ kind: "segment", segment }));
  }

  /** Whether a row can be expanded. */
  hasChildren(row: TreeRow): boolean {
    if (row.kind === "earlier") return true;
    if (row.kind === "entry") return false;
    return row.segment.length > 1 || row.segment.childIds.length > 0;
  }

  /**
   * A row's children. A segment of one entry has its branches; a longer one has its entries (the
   * last page, with an "earlier" row first when there are more) and then its branches.
   */
  async children(row: TreeRow): Promise<TreeRow[]> {
    if (row.kind === "entry") return [];
    if (row.kind === "earlier") {
      return this.page(row.segmentId, { beforeId: row.beforeId, limit: Math.min(PAGE_SIZE, row.remaining) }, row.remaining);
    }
    const segment = row.segment;
    const branches = this.segmentRows(segment.childIds);
    if (segment.length === 1) return branches;
    const entries = await this.page(segment.id, { fromId: segment.last.id, limit: Math.min(PAGE_SIZE, segment.length) }, segment.length);
    return [...entries, ...branches];
  }

  /** One page of a segment's entries ending `total` entries from its start. */
  private async page(segmentId: string, params: { fromId?: string; beforeId?: string; limit: number }, total: number): Promise<TreeRow[]> {
    let entries: Json[];
    try {
      ({ entries } = await this.request<{ entries: Json[] }>(Methods.getBranch, params));
    } catch (error) {
      if (connectionLost(error)) return []; // redrawn when the session reopens
      throw error;
    }
    const rows: TreeRow[] = [];
    const remaining = total - entries.length;
    if (remaining > 0 && entries.length > 0) {
      rows.push({ kind: "earlier", segmentId, beforeId: String(entries[0].id), remaining });
    }
    entries.forEach((raw, index) => {
      // As in pi's tree: replies with no text (tool calls only) are left out, unless one is the leaf.
      if (leftOutByPi(raw) && raw.id !== this.tree.leafId) return;
      if (!this.showAll && hiddenByDefault(raw) && raw.id !== this.tree.leafId) return;
      const entry = treeEntryOf(raw);
      const position = remaining + index;
      this.positions.set(entry.id, { segmentId, position });
      rows.push({ kind: "entry", entry, segmentId, position });
    });
    return rows;
  }

  /** The row that stands for one entry: a one-entry segment is its entry. */
  entryOf(row: TreeRow): TreeEntry | undefined {
    if (row.kind === "entry") return row.entry;
    if (row.kind === "segment" && row.segment.length === 1) return row.segment.first;
    return undefined;
  }

  labelOf(id: string): string | undefined {
    return this.labels.get(id);
  }

  isLeaf(id: string): boolean {
    return id === this.tree.leafId;
  }

  /** True for segments on the path from a root to the leaf (they start expanded). */
  isSegmentOnBranch(segmentId: string): boolean {
    return this.onLeafPath.has(segmentId);
  }

  /** Whether the segment holds the leaf. */
  holdsLeaf(segmentId: string): boolean {
    return segmentId === this.tree.leafSegmentId;
  }

  /**
   * Whether an entry loaded in the tree is on the current branch (the chat shows it): its segment
   * is on the leaf's path and, in the leaf's own segment, it is not below the leaf. `undefined`
   * for entries not loaded.
   */
  isOnBranch(id: string): boolean | undefined {
    const at = this.positions.get(id);
    if (at === undefined) return undefined;
    if (!this.onLeafPath.has(at.segmentId)) return false;
    if (at.segmentId !== this.tree.leafSegmentId || this.tree.leafId === null) return true;
    const leaf = this.positions.get(this.tree.leafId);
    // Pages load from the segment's end: a leaf not loaded yet lies above every entry loaded
    // by pages, and below only the segment's first entry.
    return leaf === undefined ? at.position === 0 : at.position <= leaf.position;
  }
}
