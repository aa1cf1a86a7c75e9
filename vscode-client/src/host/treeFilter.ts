/**
 * Which entries the Session Tree hides unless "Show All Entries" is on, as pi's tree hides them by
 * default: settings changes (`model_change`, `thinking_level_change`), labels (shown on the entry
 * they name instead) and checkpoint entries (the workspace states of contract v3). Pure.
 */
import { CHECKPOINT_TYPE, isCheckpointEntry } from "../shared/rewindModel";
import type { Segment, TreeEntry } from "./treeModel";

type Json = Record<string, unknown>;

const SETTINGS_TYPES = new Set(["model_change", "thinking_level_change", "label"]);

export function hiddenByDefault(entry: Json): boolean {
  return SETTINGS_TYPES.has(String(entry.type)) || isCheckpointEntry(entry);
}

/** The same for a `pi/getTree` node (a custom entry's preview is its customType). */
export function hiddenTreeEntry(entry: TreeEntry): boolean {
  return SETTINGS_TYPES.has(entry.type) || (entry.type === "custom" && entry.preview === CHECKPOINT_TYPE);
}

/**
 * What names a folded chain in the tree: its first entry, unless the filter hides that one (a run
 * that starts with a checkpoint, a session that starts with a model_change): then the session's
 * first chain is "session start" and a branch is named by its tip (its last entry) when that shows.
 */
export function segmentName(segment: Pick<Segment, "parentId" | "first" | "last">, showAll: boolean): TreeEntry | "session start" {
  if (showAll || !hiddenTreeEntry(segment.first)) return segment.first;
  if (segment.parentId === null) return "session start";
  return hiddenTreeEntry(segment.last) ? segment.first : segment.last;
}
