/**
 * The versions of a user message: an edited and resent message is a sibling user message under the
 * same parent in the session tree, so a message with siblings offers ‹ 1/2 › to flip between them.
 * Worked out from the folded tree (pi/getTree with `fold`, O(segments)): a user message with
 * siblings always starts a segment, because its parent has more than one child. Pure.
 */
import type { FoldedTree, TreeSegment } from "./protocol";

/** Where a message stands among its versions (1-based), as the chat draws it. */
export interface VersionPlace {
  index: number;
  count: number;
}

const isUserMessage = (segment: TreeSegment | undefined): boolean =>
  segment !== undefined && segment.first.type === "message" && segment.first.role === "user";

export class MessageVersions {
  private readonly byId = new Map<string, TreeSegment>();
  /** Each user message with siblings → the ids of all its versions, in pi's order of children. */
  private readonly siblings = new Map<string, string[]>();

  constructor(tree?: FoldedTree) {
    if (tree === undefined) return;
    for (const segment of tree.segments) if (segment.id !== null) this.byId.set(segment.id, segment);
    const groups: (string | null)[][] = [tree.rootIds, ...tree.segments.map((segment) => segment.childIds)];
    for (const group of groups) {
      const users = group.filter((id): id is string => id !== null && isUserMessage(this.byId.get(id)));
      if (users.length < 2) continue;
      for (const id of users) this.siblings.set(id, users);
    }
  }

  /** The entries (of those given) that have other versions, and where each stands among them. */
  places(entryIds: Iterable<string>): Record<string, VersionPlace> {
    const places: Record<string, VersionPlace> = {};
    for (const id of entryIds) {
      const versions = this.siblings.get(id);
      if (versions) places[id] = { index: versions.indexOf(id) + 1, count: versions.length };
    }
    return places;
  }

  /**
   * Where the leaf goes to show the version `step` away from `entryId` (-1: the previous one, 1:
   * the next): the newest leaf under that version, so its latest conversation is shown. Undefined
   * when there is no such version.
   */
  target(entryId: string, step: number): string | undefined {
    const versions = this.siblings.get(entryId);
    const other = versions?.[versions.indexOf(entryId) + step];
    return other === undefined ? undefined : this.newestLeafUnder(other);
  }

  /** The newest (by timestamp; the later in pi's order on a tie) last entry of a segment with no children under `segmentId`. */
  private newestLeafUnder(segmentId: string): string | undefined {
    let newest: TreeSegment | undefined;
    const stack = [segmentId];
    while (stack.length > 0) {
      const segment = this.byId.get(stack.pop() ?? "");
      if (segment === undefined) continue;
      const children = segment.childIds.filter((id): id is string => id !== null);
      if (children.length === 0 && (newest === undefined || time(segment) >= time(newest))) newest = segment;
      stack.push(...children.reverse());
    }
    return newest?.last.id ?? undefined;
  }
}

function time(segment: TreeSegment): number {
  const stamp = segment.last.timestamp;
  const parsed = typeof stamp === "number" ? stamp : typeof stamp === "string" ? Date.parse(stamp) : NaN;
  return Number.isNaN(parsed) ? 0 : parsed;
}
