/** Answers the server's `pi/requestApproval`: shows the diff or command, asks Allow / Allow always / Deny. */
import * as vscode from "vscode";
import { APPROVAL_CHOICES, ApprovalAnswer, ApprovalRequest, approvalAnswer, approvalQuestion } from "../shared/approvalModel";
import { diffColumn } from "./diffView";

export async function askApproval(request: ApprovalRequest): Promise<ApprovalAnswer> {
  const diff = request.preview?.diff;
  if (diff) {
    const document = await vscode.workspace.openTextDocument({ language: "diff", content: diff });
    await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true, viewColumn: diffColumn() });
  }
  const { message, detail } = approvalQuestion(request);
  const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, ...APPROVAL_CHOICES);
  return approvalAnswer(choice);
}
