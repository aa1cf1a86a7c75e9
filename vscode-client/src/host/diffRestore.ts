/**
 * A diff tab drawn again after a window reload. VS Code restores the tab, but the texts the diff
 * was opened with lived in the old window; the tab's address names where they came from (the
 * session, the tool call, proposed or recorded, which side), so they are derived again from the
 * server: a proposed edit from the approval still waiting (`pi/getRunState` `pendingApprovals`),
 * else (answered meanwhile, or a recorded edit) from the tool call's arguments in the branch. When neither can be found the tab
 * says so in words instead of showing an empty editor. Pure: the requester is passed in.
 */
import * as os from "node:os";
import * as nodePath from "node:path";
import type { Requester } from "../shared/messageActions";
import { proposedDiff, recordedDiff, type DiffSides } from "../shared/toolCards";
import { Methods } from "../shared/protocol";

type Json = Record<string, unknown>;

/** Where a diff's texts came from. */
export interface DiffOrigin {
  sessionId: string;
  toolCallId: string;
  /** `proposed`: an approval's edit not made yet (the file now against after); `recorded`: a finished call's own texts. */
  kind: "proposed" | "recorded";
  path: string;
}

export type DiffSide = "before" | "after";

/** Branch entries fetched per step when looking for a recorded call, and how many steps at most. */
const SEARCH_PAGE = 1000;
const SEARCH_PAGES = 20;

/** A diff side's address query: the key of its text in this window, and its origin. */
export function diffQuery(key: string, side: DiffSide, origin: DiffOrigin | undefined): string {
  const query = new URLSearchParams({ key, side });
  if (origin) {
    query.set("session", origin.sessionId);
    query.set("call", origin.toolCallId);
    query.set("kind", origin.kind);
    query.set("path", origin.path);
  }
  return query.toString();
}

/** The key, side and origin a diff side's query names (an origin only when complete). */
export function parseDiffQuery(text: string): { key: string; side: DiffSide; origin?: DiffOrigin } {
  const query = new URLSearchParams(text);
  const side = query.get("side") === "before" ? "before" : "after";
  const [sessionId, toolCallId, kind, path] = ["session", "call", "kind", "path"].map((name) => query.get(name));
  const key = query.get("key") ?? text;
  if (!sessionId || !toolCallId || (kind !== "proposed" && kind !== "recorded") || path === null) return { key, side };
  return { key, side, origin: { sessionId, toolCallId, kind, path } };
}

interface PendingApproval {
  toolCallId?: unknown;
  toolName?: unknown;
  args?: unknown;
  preview?: { path?: unknown };
}

const asJson = (value: unknown): Json => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {});

/** The tool call `toolCallId` in the current branch, looked for from the leaf back (at most SEARCH_PAGES pages). */
export async function findToolCall(
  request: Requester,
  toolCallId: string,
  pageSize = SEARCH_PAGE,
): Promise<{ name: string; args: Json } | undefined> {
  let params: Json = { limit: pageSize };
  for (let page = 0; page < SEARCH_PAGES; page += 1) {
    const { entries, hasMore } = await request<{ entries: Json[]; hasMore?: boolean }>(Methods.getBranch, params);
    for (const entry of entries) {
      const content = asJson(entry.message).content;
      if (entry.type !== "message" || !Array.isArray(content)) continue;
      for (const part of content.map(asJson)) {
        if (part.type === "toolCall" && part.id === toolCallId) return { name: String(part.name), args: asJson(part.arguments) };
      }
    }
    if (hasMore !== true || entries.length === 0) return undefined;
    params = { beforeId: entries[0].id, limit: pageSize };
  }
  return undefined;
}

/**
 * The two sides again, from the server (the session must be the one open now): a proposed edit
 * while its approval still waits (the file now against after), else what the call replaced and
 * with what while the call is in the branch.
 */
export async function rederiveDiff(
  request: Requester,
  origin: DiffOrigin,
  currentText: (path: string) => Promise<string | undefined>,
): Promise<DiffSides | undefined> {
  if (origin.kind === "proposed") {
    const state = await request<{ pendingApprovals?: PendingApproval[] }>(Methods.getRunState, {});
    const pending = (state.pendingApprovals ?? []).find((approval) => approval.toolCallId === origin.toolCallId);
    if (pending) {
      const path = typeof pending.preview?.path === "string" ? pending.preview.path : origin.path;
      return proposedDiff(String(pending.toolName), asJson(pending.args), await currentText(path));
    }
  }
  const call = await findToolCall(request, origin.toolCallId);
  return call && recordedDiff(call.name, call.args, await currentText(origin.path));
}

/** What a restored tab says when its texts cannot be derived again. */
export function unavailableText(origin: DiffOrigin | undefined, why: string): string {
  const what = origin?.kind === "proposed" ? `The proposed change to ${origin.path}` : origin ? `The change to ${origin.path}` : "This diff";
  return [
    `${what} cannot be shown again after the window was reloaded: ${why}`,
    "",
    "Close this tab; “Open diff” on the card in the pi chat opens the diff again.",
  ].join("\n");
}

/** Why a restored tab could not be derived again, in words, given what is known. */
export function unavailableReason(origin: DiffOrigin | undefined, openSessionId: string | undefined): string {
  if (!origin) return "it was opened by an older version of the extension.";
  if (openSessionId === undefined) return "its session is not open.";
  if (openSessionId !== origin.sessionId) return "it belongs to another session than the one open now.";
  return origin.kind === "proposed"
    ? "the approval is no longer waiting and its tool call is not on the session's current branch."
    : "its tool call is no longer on the session's current branch.";
}

/** A tool's `path` argument as the file it names: pi drops a leading `@`, expands `~` and reads relative paths from the session's folder. */
export function toolFile(path: string, cwd: string | undefined): string {
  const bare = path.startsWith("@") ? path.slice(1) : path;
  const home = bare === "~" || bare.startsWith("~/") ? os.homedir() + bare.slice(1) : bare;
  return nodePath.isAbsolute(home) || cwd === undefined ? home : nodePath.join(cwd, home);
}
