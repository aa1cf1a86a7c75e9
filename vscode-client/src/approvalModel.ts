/** What the user is asked for a `pi/requestApproval`, and the answer each choice sends (pure). */

export interface ApprovalRequest {
  sessionId: string;
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  cwd: string;
  preview?: { path?: string; diff?: string; command?: string; outsideWorkspace?: boolean };
}

export type ApprovalChoice = "Allow" | "Allow always" | "Deny";
export const APPROVAL_CHOICES: ApprovalChoice[] = ["Allow", "Allow always", "Deny"];

export interface ApprovalAnswer {
  decision: "allow" | "allowAlways" | "deny";
  reason?: string;
}

/** Longest preview put in the question itself; a longer diff is shown in full in a document. */
export const DETAIL_LIMIT = 2000;

export function approvalQuestion(request: ApprovalRequest): { message: string; detail: string } {
  const preview = request.preview ?? {};
  const where = preview.path ? ` ${preview.path}` : "";
  const outside = preview.outsideWorkspace ? " (outside the workspace)" : "";
  const message =
    preview.command !== undefined
      ? `pi wants to run: ${preview.command}`
      : `pi wants to ${request.toolName}${where}${outside}`;
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
