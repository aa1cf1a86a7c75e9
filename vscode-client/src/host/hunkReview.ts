/**
 * Per-hunk review of an edit/write waiting for approval, in VS Code's diff editor: the file now
 * (read-only) against the proposed file, an editable document of the `pi-proposed` scheme. Each
 * hunk has CodeLenses to accept or reject it (as do the card's checkboxes); the user may also edit
 * the proposed text. The answer sends what the editor shows (hunkReviewModel.ts), and the tab
 * closes once the approval is answered. Accepting or rejecting a hunk makes the proposed text
 * again from the hunks (edits by hand are then replaced).
 */
import * as vscode from "vscode";
import type { ApprovalAnswer, ApprovalCard, ApprovalRequest } from "../shared/approvalModel";
import { diffColumn } from "./diffView";
import { HunkReview } from "./hunkReviewModel";

export const PROPOSED_SCHEME = "pi-proposed";
const TOGGLE_COMMAND = "pi.review.toggleHunk";

interface Reviewed {
  review: HunkReview;
  /** The proposed file's text as last written to this scheme (by a toggle or the user's save). */
  proposed: string;
  /** When `proposed` last changed (a stat that moved on by itself would make VS Code refuse saves). */
  mtime: number;
  beforeUri: vscode.Uri;
  proposedUri: vscode.Uri;
}

const fileName = (path: string): string => path.split(/[\\/]/).pop() || "file";

/** The approvals under review, their documents (an in-memory file system) and the CodeLenses. */
export class HunkReviews implements vscode.FileSystemProvider, vscode.CodeLensProvider {
  private readonly reviews = new Map<string, Reviewed>();
  private readonly fileChanged = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.fileChanged.event;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;

  /** `changed`: a review's state changed (the card redraws). */
  constructor(private readonly changed: () => void) {}

  register(): vscode.Disposable {
    return vscode.Disposable.from(
      vscode.workspace.registerFileSystemProvider(PROPOSED_SCHEME, this, { isCaseSensitive: true }),
      vscode.languages.registerCodeLensProvider({ scheme: PROPOSED_SCHEME }, this),
      vscode.commands.registerCommand(TOGGLE_COMMAND, (toolCallId: string, index: number) => this.toggle(toolCallId, index)),
      // The diff editor shows no CodeLens unless diffEditor.codeLens is on: the same from its title bar.
      vscode.commands.registerCommand("pi.review.toggleAtCursor", () => this.fromEditor((id, review, line) => {
        const at = review.placements.find((p) => line >= p.startLine && line < p.startLine + Math.max(p.lineCount, 1)) ??
          review.placements.reduce((best, p) => (Math.abs(p.changeLine - line) < Math.abs(best.changeLine - line) ? p : best));
        return this.toggle(id, at.index);
      })),
      vscode.commands.registerCommand("pi.review.acceptAll", () => this.fromEditor((id, review) => this.setAll(id, review, true))),
      vscode.commands.registerCommand("pi.review.rejectAll", () => this.fromEditor((id, review) => this.setAll(id, review, false))),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.document.uri.scheme === PROPOSED_SCHEME) this.changed();
      }),
      this.fileChanged,
      this.lensesChanged,
    );
  }

  /** Start reviewing a request that carries hunks; `before` is the file now ("" when none). False: whole-change review only. */
  start(request: ApprovalRequest, before: string): boolean {
    if (!HunkReview.applies(request)) return false;
    let review: HunkReview;
    try {
      review = new HunkReview(request, before);
    } catch {
      return false; // the hunks do not fit the file now: the card offers the whole change
    }
    const name = fileName(request.preview?.path ?? "file");
    const base = `/${encodeURIComponent(request.toolCallId)}`;
    this.reviews.set(request.toolCallId, {
      review,
      proposed: review.text,
      mtime: Date.now(),
      beforeUri: vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `${base}/now/${name}` }),
      proposedUri: vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `${base}/proposed/${name}` }),
    });
    return true;
  }

  has(toolCallId: string): boolean {
    return this.reviews.has(toolCallId);
  }

  /** The diff editor: the file now against the proposed file (editable), beside the chat. */
  async open(toolCallId: string): Promise<boolean> {
    const reviewed = this.reviews.get(toolCallId);
    if (!reviewed) return false;
    const path = reviewed.review.request.preview?.path ?? "file";
    await vscode.commands.executeCommand("vscode.diff", reviewed.beforeUri, reviewed.proposedUri, `${fileName(path)} (proposed ${reviewed.review.request.toolName}: review)`, {
      preserveFocus: true,
      preview: false,
      viewColumn: diffColumn(),
    });
    return true;
  }

  /** Accept or reject one hunk (from a CodeLens or the card); the proposed document follows. */
  async toggle(toolCallId: string, index: number, accept?: boolean): Promise<void> {
    const reviewed = this.reviews.get(toolCallId);
    if (!reviewed) return;
    reviewed.review.set(index, accept);
    await this.showText(reviewed, reviewed.review.text);
    this.lensesChanged.fire();
    this.changed();
  }

  /** A title-bar command on the proposed file in the active editor: its review and the cursor's line. */
  private async fromEditor(work: (toolCallId: string, review: HunkReview, line: number) => Promise<void>): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const key = editor?.document.uri.toString();
    const found = [...this.reviews.entries()].find(([, r]) => r.proposedUri.toString() === key);
    if (!editor || !found) return;
    await work(found[0], found[1].review, editor.selection.active.line);
  }

  private async setAll(toolCallId: string, review: HunkReview, accept: boolean): Promise<void> {
    for (let index = 0; index < review.count; index += 1) review.set(index, accept);
    await this.toggle(toolCallId, 0, accept);
  }

  /** Put `text` in the proposed document: in the open editor (then saved, so it is not dirty) or in the file system. */
  private async showText(reviewed: Reviewed, text: string): Promise<void> {
    const open = this.openDocument(reviewed);
    if (open) {
      const edit = new vscode.WorkspaceEdit();
      edit.replace(open.uri, new vscode.Range(0, 0, open.lineCount, 0), text);
      await vscode.workspace.applyEdit(edit);
      await open.save();
    } else {
      reviewed.proposed = text;
      reviewed.mtime = Date.now();
      this.fileChanged.fire([{ type: vscode.FileChangeType.Changed, uri: reviewed.proposedUri }]);
    }
  }

  private openDocument(reviewed: Reviewed): vscode.TextDocument | undefined {
    const key = reviewed.proposedUri.toString();
    return vscode.workspace.textDocuments.find((document) => document.uri.toString() === key);
  }

  /** What the user sees as the proposed file: the open editor's text (unsaved edits too), else the last written. */
  private shown(reviewed: Reviewed): string {
    return this.openDocument(reviewed)?.getText() ?? reviewed.proposed;
  }

  /** The card's review part: the hunks with their checkboxes and "2 of 3 changes accepted". */
  decorate(card: ApprovalCard): ApprovalCard {
    const reviewed = this.reviews.get(card.toolCallId);
    if (!reviewed) return card;
    const edited = this.shown(reviewed) !== reviewed.review.text;
    return { ...card, review: { hunks: reviewed.review.hunks(), summary: reviewed.review.summary(edited), edited } };
  }

  /** The answer to send for a card's decision: what the editor shows (see HunkReview.answer). */
  answer(toolCallId: string, answer: ApprovalAnswer): ApprovalAnswer {
    const reviewed = this.reviews.get(toolCallId);
    if (!reviewed) return answer;
    return reviewed.review.answer(answer.decision, this.shown(reviewed), answer.reason);
  }

  /** The approval was answered (here or elsewhere): close its tab and forget it. */
  async finish(toolCallId: string): Promise<void> {
    const reviewed = this.reviews.get(toolCallId);
    if (!reviewed) return;
    const open = this.openDocument(reviewed);
    if (open?.isDirty) await open.save(); // closing a dirty tab would ask whether to save
    this.reviews.delete(toolCallId);
    const key = reviewed.proposedUri.toString();
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === key);
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
    this.lensesChanged.fire();
  }

  // ------------------------------------------------------------------ CodeLens

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const reviewed = [...this.reviews.entries()].find(([, r]) => r.proposedUri.toString() === document.uri.toString());
    if (!reviewed) return [];
    const [toolCallId, { review }] = reviewed;
    if (this.shown(reviewed[1]) !== review.text) return []; // edited by hand: the hunks no longer say where they are
    return review.placements.flatMap((placement) => {
      const line = Math.min(placement.changeLine, Math.max(document.lineCount - 1, 0));
      const range = new vscode.Range(line, 0, line, 0);
      const number = placement.index + 1;
      return [
        new vscode.CodeLens(range, {
          title: placement.accepted ? `$(check) Change ${number} of ${review.count} accepted` : `$(close) Change ${number} of ${review.count} rejected`,
          command: "",
        }),
        new vscode.CodeLens(range, {
          title: placement.accepted ? `Reject change ${number}` : `Accept change ${number}`,
          command: TOGGLE_COMMAND,
          arguments: [toolCallId, placement.index],
        }),
      ];
    });
  }

  // ------------------------------------------------------------------ the file system of the two sides

  private find(uri: vscode.Uri): { reviewed: Reviewed; side: "now" | "proposed" } {
    for (const reviewed of this.reviews.values()) {
      if (uri.toString() === reviewed.proposedUri.toString()) return { reviewed, side: "proposed" };
      if (uri.toString() === reviewed.beforeUri.toString()) return { reviewed, side: "now" };
    }
    throw vscode.FileSystemError.FileNotFound(uri);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const { reviewed, side } = this.find(uri);
    const text = side === "now" ? reviewed.review.before : reviewed.proposed;
    return {
      type: vscode.FileType.File,
      ctime: 0,
      mtime: reviewed.mtime,
      size: Buffer.byteLength(text),
      ...(side === "now" ? { permissions: vscode.FilePermission.Readonly } : {}),
    };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const { reviewed, side } = this.find(uri);
    return Buffer.from(side === "now" ? reviewed.review.before : reviewed.proposed, "utf8");
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const { reviewed, side } = this.find(uri);
    if (side === "now") throw vscode.FileSystemError.NoPermissions(uri);
    reviewed.proposed = Buffer.from(content).toString("utf8");
    reviewed.mtime = Math.max(Date.now(), reviewed.mtime + 1);
    this.fileChanged.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    this.changed();
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}
