/** The chat's per-message actions as request sequences (pure: the requester is passed in). */
import type { ChatKind } from "./chatModel";
import { Methods } from "./protocol";

export type Requester = <T>(method: string, params: object) => Promise<T>;

export type MessageAction = "editAndResend" | "branchFromHere" | "forkToNewSession" | "rewindCode";

/** What each kind of message offers: a user message can be edited; a reply can be branched from or forked. */
export function actionsFor(kind: ChatKind): MessageAction[] {
  if (kind === "user") return ["editAndResend", "branchFromHere", "forkToNewSession"];
  if (kind === "assistant") return ["branchFromHere", "forkToNewSession"];
  return [];
}

export const ACTION_LABELS: Record<MessageAction, string> = {
  editAndResend: "Edit and resend",
  branchFromHere: "Branch from here",
  forkToNewSession: "Fork to new session",
  rewindCode: "Rewind code to here",
};

/** `pi/navigate`'s `restored` when it was asked to restore the files too (contract v3). */
export interface NavigateRestored {
  restored?: { restored: { path: string; change: string }[]; conflicts: string[]; undoId?: string };
}

/**
 * Edit and resend: the leaf moves above the user message (pi/navigate, with `navigate`'s extra
 * params such as `restoreFiles`), then the new text is sent there.
 */
export async function editAndResend(
  request: Requester,
  entryId: string,
  text: string,
  navigate: object = {},
  onRestored?: (restored: NavigateRestored["restored"]) => void,
): Promise<void> {
  const moved = await request<NavigateRestored | undefined>(Methods.navigate, { targetId: entryId, ...navigate });
  onRestored?.(moved?.restored);
  await request(Methods.prompt, { text });
}

/** Branch from here: the leaf moves to the entry; for a user message pi gives its text back to edit. */
export async function branchFromHere(
  request: Requester,
  entryId: string,
  navigate: object = {},
  onRestored?: (restored: NavigateRestored["restored"]) => void,
): Promise<string | undefined> {
  const result = await request<{ leafId: string | null; editorText?: string } & NavigateRestored>(Methods.navigate, { targetId: entryId, ...navigate });
  onRestored?.(result.restored);
  return result.editorText;
}

/** Fork to new session: a new session file holding the path root → entry (the source stays unchanged). */
export async function forkToNewSession(adopt: (method: string, params: object) => Promise<void>, entryId: string): Promise<void> {
  await adopt(Methods.branchToNewSession, { entryId });
}
