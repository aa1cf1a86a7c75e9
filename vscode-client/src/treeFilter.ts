/**
 * Which entries the Session Tree hides unless "Show All Entries" is on, as pi's tree hides them by
 * default: settings changes (`model_change`, `thinking_level_change`), labels (shown on the entry
 * they name instead) and checkpoint entries (the workspace states of contract v3). Pure.
 */
import { isCheckpointEntry } from "./rewindModel";

type Json = Record<string, unknown>;

const SETTINGS_TYPES = new Set(["model_change", "thinking_level_change", "label"]);

export function hiddenByDefault(entry: Json): boolean {
  return SETTINGS_TYPES.has(String(entry.type)) || isCheckpointEntry(entry);
}

/** The same for a `pi/getTree` node, which does not say a custom entry's type: every custom entry counts. */
export function hiddenTreeEntry(entry: { type: string }): boolean {
  return SETTINGS_TYPES.has(entry.type) || entry.type === "custom";
}
