/**
 * The versions of a user message: an edited and resent message is a sibling user message under the
 * same parent in the session tree, so a message with siblings offers ‹ 1/2 › to flip between them.
 * Worked out from the folded tree (pi/getTree with `fold`, O(segments)): a version starts a segment,
 * because its parent has more than one child; the segment begins with the user message, or with
 * entries written before it (a checkpoint, a model change), walked down one level at a time.
 * A flip to a version whose files differ offers to take its code along ({@link flipVersion}).
 */
import type { NavigateRestored, Requester } from "./messageActions";
import { Methods, type FoldedTree, type TreeLevel, type TreeNodeFields, type TreeSegment } from "./protocol";
import { rewindTooChoice, type PlannedFile } from "./rewindModel";

/** Where a message stands among its versions (1-based), as the chat draws it. */
export interface VersionPlace {
  index: number;
  count: number;
}

/** Entries pi writes ahead of a user message (no message themselves): looked past to find it. */
const BEFORE_MESSAGE = new Set(["custom", "model_change", "thinking_level_change", "label", "session_info"]);
/** How many such entries are looked past at most. */
const LOOK_PAST = 4;

/** The user message a segment starts with, looking past the entries written before it (undefined: none). */
async function userMessageOf(segment: TreeSegment, request: Requester): Promise<string | undefined> {
  let node: TreeNodeFields = segment.first;
  for (let step = 0; step <= LOOK_PAST && node.id !== null; step += 1) {
    if (node.type === "message") return node.role === "user" ? node.id : undefined;
    if (!BEFORE_MESSAGE.has(node.type) || step === segment.length - 1) return undefined;
    const next: TreeNodeFields | undefined = (await request<TreeLevel>(Methods.getTree, { parentId: node.id })).children[0];
    if (next === undefined) return undefined;
    node = next;
  }
  return undefined;
}

export class MessageVersions {
  private readonly byId = new Map<string, TreeSegment>();
  /** Each user message with siblings → the ids of all its versions, in pi's order of children. */
  private readonly siblings = new Map<string, string[]>();
  /** Each version's user message → the segment it is in (where its conversation hangs). */
  private readonly segmentOf = new Map<string, string>();

  /** `starts`: for segments under a branch point, the user message each starts with (see {@link MessageVersions.load}). */
  constructor(tree?: FoldedTree, starts: ReadonlyMap<string, string> = new Map()) {
    if (tree === undefined) return;
    for (const segment of tree.segments) if (segment.id !== null) this.byId.set(segment.id, segment);
    for (const group of branchPoints(tree)) {
      const users = group.flatMap((id) => {
        const user = starts.get(id);
        return user === undefined ? [] : [[user, id] as const];
      });
      if (users.length < 2) continue;
      const ids = users.map(([user]) => user);
      for (const [user, segment] of users) {
        this.siblings.set(user, ids);
        this.segmentOf.set(user, segment);
      }
    }
  }

  /** The versions in the open session's tree: one folded tree, and a level or two for a version that starts past a checkpoint. */
  static async load(request: Requester, tree: FoldedTree | undefined): Promise<MessageVersions> {
    if (tree === undefined) return new MessageVersions();
    const byId = new Map(tree.segments.map((segment) => [segment.id, segment]));
    const starts = new Map<string, string>();
    for (const id of branchPoints(tree).flat()) {
      const segment = byId.get(id);
      const user = segment && (await userMessageOf(segment, request));
      if (user !== undefined) starts.set(id, user);
    }
    return new MessageVersions(tree, starts);
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
    const segment = other === undefined ? undefined : this.segmentOf.get(other);
    return segment === undefined ? undefined : this.newestLeafUnder(segment);
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

/** How a flip ended: the leaf moved to `leafId` (the files too when `restored` says so), or it did not. */
export type FlipOutcome = { leafId: string; restored?: NavigateRestored["restored"] } | { gone: true } | { cancelled: true };

/**
 * ‹ / › on a resent message: the leaf moves to the newest entry under the version `step` away. The
 * files do not move with the leaf on their own, and a restore afterwards would compare the new leaf
 * with itself; so when that version's workspace state differs from the leaf's (a non-empty
 * `pi/previewRestore`), `ask` is shown what a rewind would do first, as Edit and resend and Branch
 * from here do: true takes the code along (`pi/setLeaf` with `restoreFiles`), false leaves the
 * files as they are, undefined cancels the flip.
 */
export async function flipVersion(
  request: Requester,
  versions: MessageVersions,
  entryId: string,
  step: -1 | 1,
  ask: (files: PlannedFile[]) => Promise<boolean | undefined>,
): Promise<FlipOutcome> {
  const target = versions.target(entryId, step);
  if (target === undefined) return { gone: true };
  const code = await rewindTooChoice(request, target, ask);
  if (code === undefined) return { cancelled: true };
  const moved = await request<NavigateRestored | undefined>(Methods.setLeaf, { id: target, ...(code.restoreFiles ? { restoreFiles: true } : {}) });
  return { leafId: target, ...(moved?.restored ? { restored: moved.restored } : {}) };
}

/** The children of each point of the tree with more than one (the roots too): where versions can be. */
function branchPoints(tree: FoldedTree): string[][] {
  const groups = [tree.rootIds, ...tree.segments.map((segment) => segment.childIds)];
  return groups.map((group) => group.filter((id): id is string => id !== null)).filter((group) => group.length > 1);
}

function time(segment: TreeSegment): number {
  const stamp = segment.last.timestamp;
  const parsed = typeof stamp === "number" ? stamp : typeof stamp === "string" ? Date.parse(stamp) : NaN;
  return Number.isNaN(parsed) ? 0 : parsed;
}
