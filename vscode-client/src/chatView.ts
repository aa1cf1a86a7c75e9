/** The Chat view: hosts the webview, forwards prompts and Stop, redraws from server state. */
import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { ChatTranscript } from "./chatModel";
import { branchFromHere, editAndResend, forkToNewSession, MessageAction } from "./messageActions";
import { PiSession } from "./session";

interface WebviewMessage {
  type: string;
  text?: string;
  action?: MessageAction;
  entryId?: string;
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private transcript = new ChatTranscript();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: () => LanguageClient,
    private readonly session: PiSession,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, "out")] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage((message: WebviewMessage) => void this.onMessage(message));
  }

  /** Redraw everything from the server (the webview is a view of server state). */
  async redraw(): Promise<void> {
    if (!this.session.current) {
      this.transcript = new ChatTranscript();
    } else {
      const { entries } = await this.client().sendRequest<{ entries: Record<string, unknown>[] }>("pi/getBranch", {});
      this.transcript = ChatTranscript.fromBranch(entries);
    }
    this.post();
  }

  /** A pi/event of the open session. */
  onEvent(event: Record<string, unknown>): void {
    if (this.transcript.apply(event)) this.post();
    if (event.type === "agent_start") this.status("pi is working… (Stop to abort)");
    if (event.type === "agent_end") this.status("");
  }

  /** Bring a message of the drawn branch into view (Session Tree: Open in Chat). */
  reveal(entryId: string): void {
    void this.view?.webview.postMessage({ type: "reveal", entryId });
  }

  private post(): void {
    void this.view?.webview.postMessage({ type: "render", messages: this.transcript.messages });
  }

  private status(text: string): void {
    void this.view?.webview.postMessage({ type: "status", status: text });
  }

  private async onMessage(message: WebviewMessage): Promise<void> {
    try {
      if (message.type === "action" && message.action && message.entryId) await this.act(message.action, message.entryId, message.text ?? "");
      if (message.type === "ready") await this.redraw();
      if (message.type === "stop") await this.client().sendRequest("pi/abort", {});
      if (message.type === "send" && message.text) {
        if (!this.session.current) await this.session.continueRecent();
        const state = await this.client().sendRequest<{ running: boolean }>("pi/getRunState", {});
        await this.client().sendRequest(
          "pi/prompt",
          state.running ? { text: message.text, streamingBehavior: "steer" } : { text: message.text },
        );
      }
    } catch (error) {
      this.status(`Error: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** A message's Edit and resend / Branch from here / Fork to new session button. */
  private async act(action: MessageAction, entryId: string, text: string): Promise<void> {
    const request = <T>(method: string, params: object): Promise<T> => this.client().sendRequest<T>(method, params);
    if (action === "editAndResend") {
      const edited = await vscode.window.showInputBox({ prompt: "Edit the message and send it again", value: text });
      if (edited === undefined || edited.trim() === "") return;
      await editAndResend(request, entryId, edited);
    } else if (action === "branchFromHere") {
      const editorText = await branchFromHere(request, entryId);
      if (editorText !== undefined) void this.view?.webview.postMessage({ type: "draft", text: editorText });
      await this.redraw();
    } else {
      await forkToNewSession((method, params) => this.session.adoptFrom(method, params), entryId);
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = crypto.randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "out", "webview.js"));
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<style nonce="${nonce}">
body { display: flex; flex-direction: column; height: 100vh; margin: 0; padding: 0 8px; box-sizing: border-box; }
#log { flex: 1; overflow-y: auto; }
.message { white-space: pre-wrap; margin: 6px 0; padding: 4px 6px; border-radius: 4px; }
.user { background: var(--vscode-input-background); }
.tool { font-family: var(--vscode-editor-font-family); opacity: 0.85; }
.error { color: var(--vscode-errorForeground); }
.markdown { white-space: normal; }
.hljs-keyword, .hljs-built_in, .hljs-type, .hljs-selector-tag { color: var(--vscode-debugTokenExpression-name, #569cd6); }
.hljs-string, .hljs-attr, .hljs-regexp, .hljs-addition { color: var(--vscode-debugTokenExpression-string, #ce9178); }
.hljs-number, .hljs-literal, .hljs-deletion { color: var(--vscode-debugTokenExpression-number, #b5cea8); }
.hljs-comment, .hljs-meta { color: var(--vscode-descriptionForeground, #6a9955); font-style: italic; }
.hljs-title, .hljs-function, .hljs-section { color: var(--vscode-symbolIcon-functionForeground, #dcdcaa); }
.thinking { opacity: 0.8; white-space: pre-wrap; }
.actions { white-space: normal; margin-top: 4px; display: flex; gap: 4px; flex-wrap: wrap; }
.markdown pre { overflow-x: auto; padding: 4px; background: var(--vscode-textCodeBlock-background); }
.markdown code { font-family: var(--vscode-editor-font-family); }
textarea { width: 100%; box-sizing: border-box; resize: vertical; }
</style></head>
<body>
<main id="log" aria-live="polite"></main>
<div id="status" role="status"></div>
<label for="prompt">Message pi</label>
<textarea id="prompt" rows="3" aria-label="Message pi"></textarea>
<div><button id="send">Send</button> <button id="stop">Stop</button></div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body></html>`;
  }
}
