/**
 * Shows a proposed or recorded edit in VS Code's diff editor (read-only virtual documents, focus
 * kept on the chat). Each side's address names where its text came from, so a tab VS Code
 * restores after a window reload is drawn again from the server (diffRestore.ts), or says in
 * words why it cannot be, never an empty editor.
 */
import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { diffQuery, parseDiffQuery, rederiveDiff, unavailableReason, unavailableText, type DiffOrigin, type DiffSide } from "./diffRestore";
import type { Requester } from "../shared/messageActions";
import { RESTORE_WAIT_MS } from "./session";
import type { DiffSides } from "../shared/toolCards";

export const DIFF_SCHEME = "pi-diff";

/** What a restored tab needs: the server once started and the session reopened, and the session open. */
export interface DiffServer {
  /** True once no start or reopen is under way, false after `timeoutMs`. */
  ready(timeoutMs: number): Promise<boolean>;
  sessionId(): string | undefined;
  request: Requester;
}

export class DiffDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  /** Keys differ between windows, so a restored tab never picks up a new diff's text. */
  private readonly window = crypto.randomBytes(6).toString("hex");
  private next = 0;
  private readonly restoring = new Map<string, Promise<DiffSides | string>>();

  constructor(private readonly server: DiffServer) {}

  register(): vscode.Disposable {
    return vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string | Promise<string> {
    const { key, side, origin } = parseDiffQuery(uri.query);
    return this.texts.get(key) ?? this.restore(key, side, origin);
  }

  /** A side of a tab from another window: derived again (both sides once), kept for the next read. */
  private async restore(key: string, side: DiffSide, origin: DiffOrigin | undefined): Promise<string> {
    const originKey = origin ? `${origin.kind}:${origin.sessionId}:${origin.toolCallId}` : `none:${key}`;
    let derived = this.restoring.get(originKey);
    if (!derived) {
      derived = this.derive(origin);
      this.restoring.set(originKey, derived);
    }
    const sides = await derived;
    const text = typeof sides === "string" ? sides : sides[side];
    this.remember(key, text);
    return text;
  }

  /** The sides from the server, or the words saying why there are none. */
  private async derive(origin: DiffOrigin | undefined): Promise<DiffSides | string> {
    try {
      if (!(await this.server.ready(RESTORE_WAIT_MS))) return unavailableText(origin, "pi-lsp did not start in time.");
      const open = this.server.sessionId();
      if (origin && open === origin.sessionId) {
        const sides = await rederiveDiff(this.server.request, origin, currentText);
        if (sides) return sides;
      }
      return unavailableText(origin, unavailableReason(origin, open));
    } catch (error) {
      return unavailableText(origin, `pi-lsp could not be asked (${error instanceof Error ? error.message : String(error)}).`);
    }
  }

  private remember(key: string, text: string): void {
    this.texts.set(key, text);
    // Keep the last few diffs only: each open holds two texts.
    if (this.texts.size > 40) this.texts.delete(this.texts.keys().next().value as string);
  }

  private document(name: string, side: DiffSide, text: string, origin: DiffOrigin | undefined): vscode.Uri {
    const key = `${this.window}-${(this.next += 1)}`;
    this.remember(key, text);
    return vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${name}`, query: diffQuery(key, side, origin) });
  }

  /** Open the two sides in the diff editor (see {@link diffColumn}), without taking focus from the chat. */
  async open(sides: DiffSides, path: string, origin?: DiffOrigin): Promise<void> {
    const name = path.split(/[\\/]/).pop() || "file";
    const before = this.document(name, "before", sides.before, origin);
    const after = this.document(name, "after", sides.after, origin);
    await vscode.commands.executeCommand("vscode.diff", before, after, sides.title, {
      preserveFocus: true,
      preview: true,
      viewColumn: diffColumn(),
      ...(sides.line === undefined ? {} : { selection: new vscode.Range(sides.line, 0, sides.line, 0) }),
    });
  }
}

/**
 * Where a diff opens: beside the editor the user is in, or in the active group when it holds no
 * editor (opening beside an empty group would leave that group standing empty next to the diff).
 */
export function diffColumn(): vscode.ViewColumn {
  return vscode.window.tabGroups.activeTabGroup.tabs.length === 0 ? vscode.ViewColumn.Active : vscode.ViewColumn.Beside;
}

/** The file's text as it is now (open editors' unsaved text included); undefined when it does not exist. */
export async function currentText(path: string): Promise<string | undefined> {
  try {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
    return document.getText();
  } catch {
    return undefined;
  }
}
