/** The session this window has open, and the requests that open, list and compact sessions. */
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import * as crypto from "node:crypto";
import { WorkDoneProgress } from "vscode-languageclient";
import { CompactionPlan, describePlan, progressMessage } from "./compactionPlan";
import { ContextUsage } from "./gaugeModel";
import { chooseFolder } from "./sessionFolder";
import { pickItem, SessionSearch } from "./sessionSearch";
import { FoldedTree, TreeEntry, treeEntryOf } from "./treeModel";
import { Methods } from "../shared/protocol";

export interface SessionState {
  sessionId: string;
  file: string | null;
  cwd: string;
  name: string | null;
  leafId: string | null;
}

/** workspaceState key: the session file this window had open, reopened after a window reload. */
const OPEN_SESSION_KEY = "pi.openSessionFile";
/** How long a tab VS Code restores with the window (a diff, the System Prompt) waits in ready() for the server and the session. */
export const RESTORE_WAIT_MS = 60_000;

export class PiSession {
  private state: SessionState | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when another session was opened or the open one changed. */
  readonly onDidChange = this.changed.event;

  /** Pending while the session is being reopened on a (re)started server; see ready(). */
  private settling: Promise<void> = Promise.resolve();
  private settle: (() => void) | undefined;

  /** Created pending: the server is still to start and the window's last session to be reopened (restore()). */
  constructor(
    private readonly client: () => LanguageClient,
    private readonly memory?: vscode.Memento,
  ) {
    this.expectReopen();
  }

  get current(): SessionState | undefined {
    return this.state;
  }

  /** The folder Open Session… lists: the open session's, else the first workspace folder. */
  private cwd(): string | undefined {
    return this.state?.cwd ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  }

  /** A new session's folder: the active editor's workspace folder, else the only one, else asked. */
  private async sessionFolder(): Promise<string | undefined> {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
    const active = vscode.window.activeTextEditor?.document.uri;
    const chosen = chooseFolder(folders, active === undefined ? undefined : vscode.workspace.getWorkspaceFolder(active)?.uri.fsPath);
    if (!chosen.ask) return chosen.folder;
    const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder: "The folder pi works in for this session" });
    if (picked === undefined) throw new Error("no folder chosen for the session");
    return picked.uri.fsPath;
  }

  /** Make the session a request answers with (a SessionState) the open one. */
  async adoptFrom(method: string, params: object): Promise<void> {
    return this.adopt(method, params);
  }

  private async adopt(method: string, params: object): Promise<void> {
    this.state = await this.client().sendRequest<SessionState>(method, params);
    void this.memory?.update(OPEN_SESSION_KEY, this.state.file ?? undefined);
    this.changed.fire();
  }

  /**
   * The server is starting, or gone and coming back: until restore() or reopen() has run, ready()
   * waits, so a prompt sent meanwhile goes to the session once it is open there (not to no session,
   * or to another one).
   */
  expectReopen(): void {
    if (this.settle) return;
    this.settling = new Promise((resolve) => (this.settle = resolve));
  }

  /** No session is coming back (no server could be started): whoever waits in ready() goes on. */
  reopened(): void {
    this.settle?.();
    this.settle = undefined;
  }

  /**
   * Resolves when no restore or reopen is under way: true, or false after `timeoutMs` whatever
   * happened. The chat's prompts and the tabs VS Code restores with a window (diffs, System
   * Prompt) wait here.
   */
  async ready(timeoutMs = 30_000): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
      return await Promise.race([this.settling.then(() => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** At start-up (a reloaded window): open the session file this window had open, if it still opens. */
  async restore(): Promise<void> {
    try {
      const file = this.memory?.get<string>(OPEN_SESSION_KEY);
      if (!file || this.state) return;
      try {
        await this.open(file);
      } catch (error) {
        await this.memory?.update(OPEN_SESSION_KEY, undefined);
        throw error;
      }
    } finally {
      this.reopened();
    }
  }

  /** In a multi-root workspace: the active editor's folder, else asked (sessionFolder.ts). */
  async newSession(): Promise<void> {
    return this.adopt(Methods.newSession, { cwd: await this.sessionFolder() });
  }

  async continueRecent(): Promise<void> {
    return this.adopt(Methods.continueRecent, { cwd: await this.sessionFolder() });
  }

  open(path: string): Promise<void> {
    return this.adopt(Methods.openSession, { path });
  }

  /** After a server restart: open the same file again (in-memory sessions are gone). */
  async reopen(): Promise<void> {
    try {
      const file = this.state?.file;
      if (file) await this.open(file);
      else this.state = undefined;
      this.changed.fire();
    } finally {
      this.reopened();
    }
  }

  /**
   * Open Session…: a quick pick over pi/listSessions, searched on the server as you type (words,
   * "phrases" or re:REGEX over names and message text); the button searches every project.
   */
  async pickAndOpen(): Promise<void> {
    const search = new SessionSearch((method, params) => this.client().sendRequest(method, params), this.cwd());
    const pick = vscode.window.createQuickPick<vscode.QuickPickItem & { path?: string }>();
    const allButton = { iconPath: new vscode.ThemeIcon("globe"), tooltip: "Search every project's sessions" };
    let all = false;
    let timer: NodeJS.Timeout | undefined;
    pick.title = "Open a pi session";
    pick.placeholder = "Search sessions: words, \"a phrase\" or re:pattern";
    pick.matchOnDescription = true;
    pick.buttons = [allButton];
    const load = async (): Promise<void> => {
      pick.busy = true;
      try {
        const sessions = await search.search(pick.value, all);
        if (sessions === undefined) return; // a newer search is on its way
        // The server already matched message text: keep every answer visible whatever VS Code's own filter says.
        pick.items = sessions.map((info) => ({ ...pickItem(info, all, sessions), alwaysShow: true }));
        if (sessions.length === 0) pick.items = [{ label: pick.value ? "No session matches" : "No sessions for this folder yet", alwaysShow: true }];
      } catch (error) {
        pick.items = [{ label: `$(error) ${error instanceof Error ? error.message : String(error)}`, alwaysShow: true }];
      } finally {
        pick.busy = false;
      }
    };
    const chosen = new Promise<string | undefined>((resolve) => {
      pick.onDidChangeValue(() => {
        if (timer !== undefined) clearTimeout(timer);
        timer = setTimeout(() => void load(), 200);
      });
      pick.onDidTriggerButton(() => {
        all = !all;
        pick.title = all ? "Open a pi session (every project)" : "Open a pi session";
        void load();
      });
      pick.onDidAccept(() => resolve(pick.selectedItems[0]?.path));
      pick.onDidHide(() => resolve(undefined));
    });
    pick.show();
    void load();
    const path = await chosen;
    if (timer !== undefined) clearTimeout(timer);
    pick.dispose();
    if (path) await this.open(path);
  }

  async rename(): Promise<void> {
    if (!this.state) return;
    const name = await vscode.window.showInputBox({ prompt: "Session name", value: this.state.name ?? "" });
    if (name === undefined) return;
    await this.client().sendRequest(Methods.setSessionName, { name });
    this.state = { ...this.state, name: name.trim() || null };
  }

  /** Called on pi/sessionChanged for this session. */
  noteChanged(leafId: string | null): void {
    if (this.state) this.state = { ...this.state, leafId };
    this.changed.fire();
  }

  async usage(): Promise<ContextUsage | undefined> {
    if (!this.state) return undefined;
    const stats = await this.client().sendRequest<{ contextUsage: ContextUsage }>(Methods.getSessionStats, {});
    return stats.contextUsage;
  }

  /** The tree with linear chains folded (what the Session Tree needs; O(segments) bytes). */
  async tree(): Promise<FoldedTree | undefined> {
    if (!this.state) return undefined;
    return this.client().sendRequest<FoldedTree>(Methods.getTree, { fold: true });
  }

  /**
   * Compact…: show what pi/prepareCompaction would do (what is summarised, what is kept, tokens
   * now), ask for optional instructions, then compact with progress from the server's
   * `$/progress`; Cancel cancels the request, and then nothing is written.
   */
  async compact(givenInstructions?: string): Promise<void> {
    if (!this.state) {
      void vscode.window.showInformationMessage("Open a pi session first.");
      return;
    }
    const client = this.client();
    const plan = await client.sendRequest<CompactionPlan>(Methods.prepareCompaction, {});
    let firstKept: TreeEntry | undefined;
    try {
      const { entry } = await client.sendRequest<{ entry: Record<string, unknown> }>(Methods.getEntry, { id: plan.firstKeptEntryId });
      firstKept = treeEntryOf(entry);
    } catch {
      firstKept = undefined; // the description falls back to the id
    }
    const { message, detail } = describePlan(plan, firstKept);
    const answer = await vscode.window.showInformationMessage(message, { modal: true, detail }, "Compact", "Compact with Instructions…");
    if (answer === undefined) return;
    let instructions = givenInstructions ?? "";
    if (answer !== "Compact" && givenInstructions === undefined) {
      const typed = await vscode.window.showInputBox({
        title: "Compact: instructions for the summary",
        prompt: "What the summary should focus on (Enter to compact, Escape to cancel)",
      });
      if (typed === undefined) return;
      instructions = typed.trim();
    }
    const token = `pi-compact-${crypto.randomUUID()}`;
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "pi: compacting", cancellable: true },
      async (progress, cancel) => {
        const listening = client.onProgress(WorkDoneProgress.type, token, (value) => {
          const line = progressMessage(value);
          if (line) progress.report({ message: line });
        });
        try {
          const params: Record<string, unknown> = { workDoneToken: token };
          if (instructions) params.customInstructions = instructions;
          await client.sendRequest(Methods.compact, params, cancel);
        } catch (error) {
          if (!cancel.isCancellationRequested) throw error;
          void vscode.window.showInformationMessage("pi: compaction cancelled; nothing was written.");
        } finally {
          listening.dispose();
        }
      },
    );
  }
}
