/** What the user is asked for a `pi/requestApproval`, and the answer each choice sends (pure). */

export interface ApprovalRequest {
  sessionId: string;
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  cwd: string;
  preview?: {
    path?: string;
    /** The path as the model wrote it, when the real file (`path`, symlinks followed) differs. */
    requestedPath?: string;
    diff?: string;
    command?: string;
    outsideWorkspace?: boolean;
    /** The session's folder (`cwd`) lies outside every workspace folder: every change asks. */
    cwdOutsideWorkspace?: boolean;
    /** edit/write (contract v3): the unified diff split into hunks, and the whole proposed file. */
    hunks?: { index: number; header: string; diff: string }[];
    newContent?: string;
  };
}

export type ApprovalChoice = "Allow" | "Allow always" | "Deny";
export const APPROVAL_CHOICES: ApprovalChoice[] = ["Allow", "Allow always", "Deny"];

export interface ApprovalAnswer {
  decision: "allow" | "allowAlways" | "deny";
  reason?: string;
  /** Only these hunks are written (by index), or (`content`) the text the user edited is. */
  hunks?: number[];
  content?: string;
}

/** Longest preview put in the question itself; a longer diff is shown in full in a document. */
export const DETAIL_LIMIT = 2000;

export function approvalQuestion(request: ApprovalRequest): { message: string; detail: string } {
  const preview = request.preview ?? {};
  const where = preview.path ? ` ${preview.path}` : "";
  const outside = preview.outsideWorkspace ? " (outside the workspace)" : "";
  const cwd = preview.cwdOutsideWorkspace ? ` — the session's folder ${request.cwd} is outside the workspace` : "";
  const message =
    preview.command !== undefined
      ? `pi wants to run: ${preview.command}${cwd}`
      : `pi wants to ${request.toolName}${where}${outside}${cwd}`;
  let detail = preview.diff ?? preview.command ?? JSON.stringify(request.args, null, 2);
  if (detail.length > DETAIL_LIMIT) detail = `${detail.slice(0, DETAIL_LIMIT)}\n… (the whole diff is open in an editor)`;
  return { message, detail };
}

/** The answer for a choice; dismissing the question (undefined) denies. */
export function approvalAnswer(choice: ApprovalChoice | undefined): ApprovalAnswer {
  if (choice === "Allow") return { decision: "allow" };
  if (choice === "Allow always") return { decision: "allowAlways" };
  if (choice === "Deny") return { decision: "deny" };
  return { decision: "deny", reason: "The user dismissed the approval question." };
}

/** What an approval card in the chat shows. */
export interface ApprovalCard {
  toolCallId: string;
  title: string;
  /** The command, or the diff the edit would make (in full; the card scrolls). */
  detail: string;
  /** An edit/write: its diff can be opened in the diff editor. */
  diffable: boolean;
  /** Per-hunk review of an edit/write (src/host/hunkReviewModel.ts): each hunk's header and whether it is accepted. */
  review?: { hunks: { index: number; header: string; accepted: boolean }[]; summary: string; edited: boolean };
}

/** `path` relative to the session's folder when it lies inside it (cards are read in that folder). */
export function relativePath(path: string, cwd: string): string {
  const root = cwd.replace(/[\\/]+$/, "");
  if (root === "" || !path.startsWith(root)) return path;
  const rest = path.slice(root.length);
  return /^[\\/]/.test(rest) && rest.length > 1 ? rest.slice(1) : path;
}

/**
 * The card in the chat: a command is shown once (in the detail, not the title too); a diff's
 * header lines and the title name the file relative to the session's folder.
 */
export function approvalCard(request: ApprovalRequest): ApprovalCard {
  const preview = request.preview ?? {};
  const cwd = preview.cwdOutsideWorkspace ? ` — the session's folder ${request.cwd} is outside the workspace` : "";
  const title =
    preview.command !== undefined
      ? `pi wants to run a command${cwd}`
      : approvalQuestion({ ...request, preview: { ...preview, ...(preview.path ? { path: relativePath(preview.path, request.cwd) } : {}) } }).message;
  const diff = preview.diff?.replace(/^(---|\+\+\+) (\S.*)$/gm, (_, mark: string, file: string) => `${mark} ${relativePath(file, request.cwd)}`);
  return {
    toolCallId: request.toolCallId,
    title,
    detail: diff ?? preview.command ?? JSON.stringify(request.args, null, 2),
    diffable: request.toolName === "edit" || request.toolName === "write",
  };
}

/**
 * The approvals waiting for the user, answered from the chat's cards. Each `pi/requestApproval`
 * waits here until a card's button answers it, or the run stops waiting (its `approval_result`).
 */
export class PendingApprovals {
  private readonly pending = new Map<string, { request: ApprovalRequest; resolve: (answer: ApprovalAnswer) => void }>();

  ask(request: ApprovalRequest): Promise<ApprovalAnswer> {
    return new Promise((resolve) => this.pending.set(request.toolCallId, { request, resolve }));
  }

  /** A card's answer; false when that approval is no longer waiting. */
  answer(toolCallId: string, answer: ApprovalAnswer): boolean {
    const waiting = this.pending.get(toolCallId);
    if (!waiting) return false;
    this.pending.delete(toolCallId);
    waiting.resolve(answer);
    return true;
  }

  /** The run stopped waiting (answered elsewhere, or aborted): drop the card. */
  settled(toolCallId: string): boolean {
    return this.answer(toolCallId, { decision: "deny", reason: "The run no longer waits for this approval." });
  }

  request(toolCallId: string): ApprovalRequest | undefined {
    return this.pending.get(toolCallId)?.request;
  }

  cards(): ApprovalCard[] {
    return [...this.pending.values()].map(({ request }) => approvalCard(request));
  }
}
