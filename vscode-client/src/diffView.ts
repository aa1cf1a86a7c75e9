/** Shows a proposed or recorded edit in VS Code's diff editor (read-only virtual documents, focus kept on the chat). */
import * as vscode from "vscode";
import type { DiffSides } from "./toolCards";

const SCHEME = "pi-diff";

export class DiffDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private next = 0;

  register(): vscode.Disposable {
    return vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? "";
  }

  private document(name: string, text: string): vscode.Uri {
    const key = String((this.next += 1));
    this.texts.set(key, text);
    // Keep the last few diffs only: each open holds two texts.
    if (this.texts.size > 40) this.texts.delete(this.texts.keys().next().value as string);
    return vscode.Uri.from({ scheme: SCHEME, path: `/${name}`, query: key });
  }

  /** Open the two sides in the diff editor beside the chat, without taking focus from it. */
  async open(sides: DiffSides, path: string): Promise<void> {
    const name = path.split(/[\\/]/).pop() || "file";
    const before = this.document(name, sides.before);
    const after = this.document(name, sides.after);
    await vscode.commands.executeCommand("vscode.diff", before, after, sides.title, {
      preserveFocus: true,
      preview: true,
      viewColumn: vscode.ViewColumn.Beside,
    });
  }
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
