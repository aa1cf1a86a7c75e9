/**
 * Rewinding the workspace with the tree (contract v3 checkpoints), pure: which chat messages have
 * a workspace state, what a restore preview says, the choices it offers, and what the chat says
 * afterwards. The modal questions and the restore itself are in src/host/rewind.ts.
 */

import type { Requester } from "./messageActions";
import { Methods, type PiEvent } from "./protocol";

type Json = Record<string, unknown>;

export const CHECKPOINT_TYPE = "pi-lsp/checkpoint";

export type PlannedChange = "create" | "modify" | "delete";

/** One file of `pi/previewRestore`. */
export interface PlannedFile {
  path: string;
  change: PlannedChange;
  conflict: boolean;
  diff?: string;
}

/** `pi/restoreFiles` (and the `restored` of a navigate with `restoreFiles`); `pi/undoRestore` has no undoId. */
export interface RestoreResult {
  restored: { path: string; change: string }[];
  conflicts: string[];
  undoId?: string;
}

/** What the chat shows after a restore: what was restored, and Undo restore while it can be undone. */
export interface RestoreNotice {
  text: string;
  undoId?: string;
}

/** `pi/previewRestore`: what restoring the workspace to `targetId`'s state would change (empty: nothing differs). */
export async function previewRestore(request: Requester, targetId: string): Promise<PlannedFile[]> {
  const { files } = await request<{ files: PlannedFile[] }>(Methods.previewRestore, { targetId });
  return files;
}

export const isCheckpointEntry = (entry: Json): boolean => entry.type === "custom" && entry.customType === CHECKPOINT_TYPE;

/**
 * The chat messages that have a workspace state: those after a checkpoint entry on the branch (the
 * state of an entry is the nearest checkpoint above it). Drawn from `pi/getBranch` pages, then
 * advanced by `checkpoint` events and `message_end`'s `entryId`.
 */
export class CheckpointMarks {
  private entries: { id: string; checkpoint: boolean }[] = [];
  private readonly marked = new Set<string>();
  /** A checkpoint is on the branch above the newest entry. */
  private stateAbove = false;

  static fromBranch(entries: readonly Json[]): CheckpointMarks {
    const marks = new CheckpointMarks();
    marks.entries = entries.map(summarise);
    marks.recount();
    return marks;
  }

  /** An older page of the branch, put before what is loaded. */
  prepend(entries: readonly Json[]): void {
    this.entries = [...entries.map(summarise), ...this.entries];
    this.recount();
  }

  private recount(): void {
    this.marked.clear();
    this.stateAbove = false;
    for (const entry of this.entries) {
      if (entry.checkpoint) this.stateAbove = true;
      else if (this.stateAbove) this.marked.add(entry.id);
    }
  }

  /** A `pi/event`; returns whether the marks changed. */
  onEvent(event: PiEvent): boolean {
    if (event.type === "checkpoint") {
      this.entries.push({ id: event.entryId, checkpoint: true });
      this.stateAbove = true;
      return false;
    }
    if (event.type === "message_end" && typeof event.entryId === "string") {
      this.entries.push({ id: event.entryId, checkpoint: false });
      if (!this.stateAbove) return false;
      this.marked.add(event.entryId);
      return true;
    }
    return false;
  }

  has(entryId: string): boolean {
    return this.marked.has(entryId);
  }

  ids(): string[] {
    return [...this.marked];
  }
}

function summarise(entry: Json): { id: string; checkpoint: boolean } {
  return { id: String(entry.id), checkpoint: isCheckpointEntry(entry) };
}

const VERBS: Record<PlannedChange, string> = { create: "create", modify: "change", delete: "delete" };

function counted(count: number, what: string): string {
  return `${count} ${what}${count === 1 ? "" : "s"}`;
}

export const RESTORE_CHOICE = "Restore files";
export const OVERWRITE_CHOICE = "Overwrite anyway";

/** How long a rewind point's words may be in the question (a message's first line, shortened). */
const POINT_LENGTH = 80;

/** A rewind point in words: its kind and the start of its text, on one line. */
export function pointWords(kind: string, text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const shown = flat.length > POINT_LENGTH ? `${flat.slice(0, POINT_LENGTH - 1)}…` : flat;
  return shown === "" ? kind : `${kind}: ${shown}`;
}

/**
 * The modal question for a restore preview: its title, the point it goes back to (`point`, in
 * words: so a menu opened on a row that moved shows which point it is about), the files by what
 * happens to them, and the choices.
 */
export function describePreview(files: readonly PlannedFile[], point?: string): { message: string; detail: string; choices: string[] } {
  const to = point === undefined ? [] : [`To: ${point}`, ""];
  if (files.length === 0) {
    return { message: "Rewind code to here: the files already match this point.", detail: [...to, "Nothing would be written."].join("\n"), choices: [] };
  }
  const parts = (["create", "modify", "delete"] as const)
    .map((change) => [change, files.filter((file) => file.change === change).length] as const)
    .filter(([, count]) => count > 0)
    .map(([change, count]) => `${VERBS[change]} ${counted(count, "file")}`);
  const conflicts = files.filter((file) => file.conflict);
  const lines = files.map((file) => `${VERBS[file.change]}: ${file.path}${file.conflict ? " (changed since pi saw it)" : ""}`);
  if (conflicts.length > 0) {
    lines.push(
      "",
      `${counted(conflicts.length, "file")} changed by hand or another program since pi last saw ${conflicts.length === 1 ? "it" : "them"}: ` +
        `${RESTORE_CHOICE} leaves ${conflicts.length === 1 ? "it" : "them"} alone; ${OVERWRITE_CHOICE} replaces ${conflicts.length === 1 ? "it" : "them"} too ` +
        "(what is there now is kept for Undo restore).",
    );
  }
  return {
    message: `Rewind code to here: ${parts.join(", ")}?`,
    detail: [...to, ...lines].join("\n"),
    choices: conflicts.length > 0 ? [RESTORE_CHOICE, OVERWRITE_CHOICE] : [RESTORE_CHOICE],
  };
}

const PAST: Record<string, string> = { create: "created", modify: "changed", delete: "deleted" };

/** What the chat says after a restore (or its undo). */
export function restoredSummary(result: RestoreResult, undone = false): string {
  const done = result.restored.map((file) => `${file.path} (${PAST[file.change] ?? file.change})`);
  const head = undone
    ? done.length === 0
      ? "Undo restore: nothing to put back."
      : `Undo restore: put back ${counted(done.length, "file")}: ${done.join(", ")}.`
    : done.length === 0
      ? "Rewound the code: no file needed restoring."
      : `Rewound the code: restored ${counted(done.length, "file")}: ${done.join(", ")}.`;
  return result.conflicts.length === 0 ? head : `${head} Left alone (changed since pi saw them): ${result.conflicts.join(", ")}.`;
}

export const REWIND_TOO_CHOICE = "Rewind code too";
export const KEEP_CODE_CHOICE = "Keep the code";

/**
 * Before the leaf moves to `targetId` (Edit and resend, Branch from here, ‹ / › versions): whether to
 * take the code along. `ask` is shown the preview only when that point's workspace state differs from
 * the leaf's; undefined: the user cancelled the move.
 */
export async function rewindTooChoice(
  request: Requester,
  targetId: string,
  ask: (files: PlannedFile[]) => Promise<boolean | undefined>,
): Promise<{ restoreFiles: boolean } | undefined> {
  const files = await previewRestore(request, targetId);
  if (files.length === 0) return { restoreFiles: false };
  const rewind = await ask(files);
  return rewind === undefined ? undefined : { restoreFiles: rewind };
}

/** The question asked before a leaf move when the target's workspace state differs. */
export function rewindTooQuestion(files: readonly PlannedFile[], action: string): { message: string; detail: string } {
  const { detail } = describePreview(files);
  return {
    message: `${action}: the code was different at that point (${counted(files.length, "file")}). Rewind the code too?`,
    detail,
  };
}
