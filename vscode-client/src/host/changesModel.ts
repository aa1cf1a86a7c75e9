/**
 * The Changes view's data (pure: the requester is passed in): the files the last run changed and
 * those the whole session changed (`pi/getChanges`), and the two sides of a file's diff.
 */
import type { Requester } from "../shared/messageActions";
import { CHECKPOINT_TYPE } from "../shared/rewindModel";
import { DiffMismatch, unapplyDiff } from "./unifiedDiff";
import { Methods } from "../shared/protocol";

type Json = Record<string, unknown>;

export type ChangeKind = "added" | "modified" | "deleted";

export interface ChangedFile {
  path: string;
  change: ChangeKind;
}

/** One group of the view: the last run, or the whole session; `fromId` is the point a Revert goes back to. */
export interface ChangeSet {
  scope: "run" | "session";
  fromId: string | null;
  toId: string | null;
  files: ChangedFile[];
}

/** Entries read from the start of the file to find the session's first checkpoint. */
const FIRST_ENTRIES = 1000;

/**
 * What the view's rows show of some groups: each group's files and how they changed, not the
 * points it spans (a run's end point moves with each entry while its files stay the same).
 */
export function shownChanges(sets: readonly ChangeSet[]): [ChangeSet["scope"], ChangedFile[]][] {
  return sets.map((set) => [set.scope, set.files.map(({ path, change }) => ({ path, change }))]);
}

export async function lastRunChanges(request: Requester): Promise<ChangeSet> {
  const result = await request<{ fromId: string | null; toId: string | null; files: ChangedFile[] }>(Methods.getChanges, {});
  return { scope: "run", ...result };
}

/** Everything since the session's first checkpoint (the workspace before its first run); none yet: no files. */
export async function sessionChanges(request: Requester): Promise<ChangeSet> {
  const { entries } = await request<{ entries: Json[] }>(Methods.getEntries, { offset: 0, limit: FIRST_ENTRIES });
  const first = entries.find((entry) => entry.type === "custom" && entry.customType === CHECKPOINT_TYPE);
  if (!first) return { scope: "session", fromId: null, toId: null, files: [] };
  const result = await request<{ fromId: string | null; toId: string | null; files: ChangedFile[] }>(Methods.getChanges, { fromId: String(first.id) });
  return { scope: "session", ...result };
}

export interface ChangeSides {
  before: string;
  after: string;
}

/**
 * A changed file's two sides: `after` is the file on disk (the leaf's state, unless changed since),
 * `before` is it with the change undone. A string: why they cannot be shown (binary, or the file
 * changed since), to show with the diff itself.
 */
export function changeSides(diff: string, onDisk: string | undefined): ChangeSides | string {
  if (diff.startsWith("Binary files differ")) return "A binary file: no text diff to show.";
  const after = onDisk ?? "";
  try {
    return { before: unapplyDiff(after, diff), after };
  } catch (error) {
    if (error instanceof DiffMismatch) return `The file changed on disk since this point; the recorded diff:\n\n${diff}`;
    throw error;
  }
}
