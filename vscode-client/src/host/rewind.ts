/**
 * "Rewind code to here" and "Undo restore" (contract v3 checkpoints): a modal preview of what a
 * restore does (`pi/previewRestore`), `pi/restoreFiles` on the user's go-ahead (conflicting files
 * only with the separate "Overwrite anyway"), `pi/undoRestore`; and the question Edit and resend /
 * Branch from here ask when the target's workspace state differs from the leaf's.
 */
import * as vscode from "vscode";
import type { Requester } from "../shared/messageActions";
import { Methods } from "../shared/protocol";
import {
  describePreview,
  KEEP_CODE_CHOICE,
  OVERWRITE_CHOICE,
  previewRestore,
  RESTORE_CHOICE,
  restoredSummary,
  REWIND_TOO_CHOICE,
  rewindTooChoice,
  rewindTooQuestion,
  type PlannedFile,
  type RestoreNotice,
  type RestoreResult,
} from "../shared/rewindModel";

export class Rewinder {
  private readonly restoredFiles = new vscode.EventEmitter<void>();
  /** Files were restored (or a restore undone): views of the workspace's changes fetch again. */
  readonly onDidRestore = this.restoredFiles.event;

  constructor(
    private readonly request: Requester,
    /** The chat's line after a restore or undo (undefined clears it). */
    private readonly show: (notice: RestoreNotice | undefined) => void,
  ) {}

  /**
   * Rewind code to here: the preview in a modal, naming the point (`point`, in words), then the
   * restore the user chose (or nothing).
   */
  async rewind(targetId: string, point?: string): Promise<void> {
    const files = await previewRestore(this.request, targetId);
    const { message, detail, choices } = describePreview(files, point);
    if (choices.length === 0) {
      await vscode.window.showInformationMessage(message, { modal: true, detail });
      return;
    }
    const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, ...choices);
    if (choice !== RESTORE_CHOICE && choice !== OVERWRITE_CHOICE) return;
    const result = await this.request<RestoreResult>(Methods.restoreFiles, { targetId, force: choice === OVERWRITE_CHOICE });
    this.restored(result);
  }

  /** The chat's line for a restore's result (also a navigate's `restored`). */
  restored(result: RestoreResult | undefined): void {
    if (!result) return;
    this.restoredFiles.fire();
    this.show({ text: restoredSummary(result), ...(result.undoId && result.restored.length > 0 ? { undoId: result.undoId } : {}) });
  }

  async undo(undoId: string): Promise<void> {
    const result = await this.request<RestoreResult>(Methods.undoRestore, { undoId });
    this.restoredFiles.fire();
    this.show({ text: restoredSummary(result, true) });
  }

  /**
   * Before Edit and resend / Branch from here / ‹ › moves to `targetId`: whether to rewind the code
   * too, asked only when that point's workspace state differs from the leaf's. Undefined: cancelled.
   */
  rewindToo(targetId: string, action: string): Promise<{ restoreFiles: boolean } | undefined> {
    return rewindTooChoice(this.request, targetId, (files) => this.askRewindToo(files, action));
  }

  /** The modal "Rewind the code too?" over a non-empty preview: true rewinds, false keeps, undefined cancels. */
  async askRewindToo(files: PlannedFile[], action: string): Promise<boolean | undefined> {
    const { message, detail } = rewindTooQuestion(files, action);
    const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, REWIND_TOO_CHOICE, KEEP_CODE_CHOICE);
    return choice === undefined ? undefined : choice === REWIND_TOO_CHOICE;
  }
}
