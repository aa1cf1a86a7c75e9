/**
 * What the chat needs from a user who is not looking at it: a pending approval or a run that
 * finished while the Chat view was hidden shows a badge on the pi container (cleared when the view
 * is shown), and a notification when the window itself is not focused.
 */
import * as vscode from "vscode";

export class ChatAttention {
  private finished = false;

  constructor(
    private readonly view: () => vscode.WebviewView | undefined,
    private readonly pendingApprovals: () => number,
  ) {}

  /** A run ended: badge it while the view is hidden, and notify when the window is not focused. */
  runFinished(): void {
    if (this.view()?.visible !== true) this.finished = true;
    this.update();
    if (!vscode.window.state.focused) this.notify("pi finished its run.");
  }

  /** An approval card waits in the chat. */
  approvalWaiting(title: string): void {
    this.update();
    if (!vscode.window.state.focused) this.notify(`${title}: waiting for your approval.`);
  }

  /** The view was shown (or the approvals changed): the badge says what is still unseen. */
  update(): void {
    const view = this.view();
    if (view === undefined) return;
    if (view.visible) this.finished = false;
    const approvals = this.pendingApprovals();
    const count = approvals + (this.finished ? 1 : 0);
    const tooltip = [approvals > 0 ? `${approvals} approval${approvals === 1 ? "" : "s"} waiting` : "", this.finished ? "run finished" : ""]
      .filter((part) => part !== "")
      .join(", ");
    view.badge = count > 0 && !view.visible ? { value: count, tooltip: `pi: ${tooltip}` } : undefined;
  }

  private notify(text: string): void {
    void vscode.window.showInformationMessage(text, "Show Chat").then((choice) => {
      if (choice) void vscode.commands.executeCommand("pi.chat.focus");
    });
  }
}
