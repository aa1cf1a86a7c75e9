/** The session this window has open, and the requests that open, list and compact sessions. */
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { ContextUsage } from "./gaugeModel";
import { FlatTree } from "./treeModel";

export interface SessionState {
  sessionId: string;
  file: string | null;
  cwd: string;
  name: string | null;
  leafId: string | null;
}

interface SessionInfo {
  path: string;
  id: string;
  name?: string;
  modified: string;
  messageCount: number;
  firstMessage: string;
}

export class PiSession {
  private state: SessionState | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when another session was opened or the open one changed. */
  readonly onDidChange = this.changed.event;

  constructor(private readonly client: () => LanguageClient) {}

  get current(): SessionState | undefined {
    return this.state;
  }

  private cwd(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  }

  /** Make the session a request answers with (a SessionState) the open one. */
  async adoptFrom(method: string, params: object): Promise<void> {
    return this.adopt(method, params);
  }

  private async adopt(method: string, params: object): Promise<void> {
    this.state = await this.client().sendRequest<SessionState>(method, params);
    this.changed.fire();
  }

  newSession(): Promise<void> {
    return this.adopt("pi/newSession", { cwd: this.cwd() });
  }

  continueRecent(): Promise<void> {
    return this.adopt("pi/continueRecent", { cwd: this.cwd() });
  }

  open(path: string): Promise<void> {
    return this.adopt("pi/openSession", { path });
  }

  /** After a server restart: open the same file again (in-memory sessions are gone). */
  async reopen(): Promise<void> {
    const file = this.state?.file;
    if (file) await this.open(file);
    else this.state = undefined;
    this.changed.fire();
  }

  /** Quick pick over pi/listSessions, newest first; opens the one chosen. */
  async pickAndOpen(): Promise<void> {
    const { sessions } = await this.client().sendRequest<{ sessions: SessionInfo[] }>("pi/listSessions", {
      cwd: this.cwd(),
    });
    const picked = await vscode.window.showQuickPick(
      sessions.map((info) => ({
        label: info.name ?? (info.firstMessage || info.id),
        description: `${info.messageCount} messages`,
        detail: `${info.modified} ${info.path}`,
        path: info.path,
      })),
      { placeHolder: sessions.length === 0 ? "No sessions for this folder yet" : "Open a pi session" },
    );
    if (picked) await this.open(picked.path);
  }

  async rename(): Promise<void> {
    if (!this.state) return;
    const name = await vscode.window.showInputBox({ prompt: "Session name", value: this.state.name ?? "" });
    if (name === undefined) return;
    await this.client().sendRequest("pi/setSessionName", { name });
    this.state = { ...this.state, name: name.trim() || null };
  }

  /** Called on pi/sessionChanged for this session. */
  noteChanged(leafId: string | null): void {
    if (this.state) this.state = { ...this.state, leafId };
    this.changed.fire();
  }

  async usage(): Promise<ContextUsage | undefined> {
    if (!this.state) return undefined;
    const stats = await this.client().sendRequest<{ contextUsage: ContextUsage }>("pi/getSessionStats", {});
    return stats.contextUsage;
  }

  async tree(): Promise<FlatTree | undefined> {
    if (!this.state) return undefined;
    return this.client().sendRequest<FlatTree>("pi/getTree", { format: "flat" });
  }

  /** Compact…: show what pi/prepareCompaction would do, ask for optional instructions, compact. */
  async compact(): Promise<void> {
    if (!this.state) {
      void vscode.window.showInformationMessage("Open a pi session first.");
      return;
    }
    const plan = await this.client().sendRequest<{ tokensBefore: number; summarizeCount: number }>(
      "pi/prepareCompaction",
      {},
    );
    const instructions = await vscode.window.showInputBox({
      title: `Compact: summarise ${plan.summarizeCount} entries (${plan.tokensBefore} tokens now)`,
      prompt: "Optional instructions for the summary (Enter to compact, Escape to cancel)",
    });
    if (instructions === undefined) return;
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "pi: compacting…" },
      () =>
        this.client().sendRequest("pi/compact", instructions ? { customInstructions: instructions } : {}),
    );
  }
}
