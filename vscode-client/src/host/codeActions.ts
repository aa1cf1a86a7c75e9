/** A chat code block's actions in the editor: Copy, Insert at cursor, Save as new file. */
import * as vscode from "vscode";

/** File name extensions for the fence languages replies use most (Save as new file's suggestion). */
const EXTENSIONS: Record<string, string> = {
  python: "py", py: "py", typescript: "ts", ts: "ts", javascript: "js", js: "js", json: "json", bash: "sh", sh: "sh",
  shell: "sh", rust: "rs", go: "go", java: "java", c: "c", cpp: "cpp", css: "css", html: "html", xml: "xml",
  yaml: "yaml", yml: "yaml", markdown: "md", md: "md", sql: "sql", lua: "lua", diff: "diff", toml: "toml",
};

export async function runCodeAction(action: "copy" | "insert" | "newFile", code: string, language: string): Promise<void> {
  if (action === "copy") {
    await vscode.env.clipboard.writeText(code);
    return;
  }
  if (action === "insert") {
    const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
    if (editor === undefined) {
      void vscode.window.showInformationMessage("pi: open a file to insert the code into.");
      return;
    }
    await editor.edit((edit) => {
      for (const selection of editor.selections) edit.replace(selection, code);
    });
    return;
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const name = `untitled.${EXTENSIONS[language.toLowerCase()] ?? "txt"}`;
  const target = await vscode.window.showSaveDialog({ title: "Save the code as a new file", ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, name) } : {}) });
  if (target === undefined) return;
  // A new file only: an existing one is never overwritten from here.
  const exists = await vscode.workspace.fs.stat(target).then(
    () => true,
    () => false,
  );
  if (exists) {
    void vscode.window.showWarningMessage(`pi: ${vscode.workspace.asRelativePath(target)} already exists; choose a new name.`);
    return;
  }
  await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(code));
  await vscode.window.showTextDocument(target);
}
