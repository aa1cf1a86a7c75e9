/**
 * The Chat view: hosts the webview and keeps it a view of server state (ChatSync), forwards what
 * the user does (prompts queued as steering or follow-up, Stop, restore queue, approvals, diffs,
 * completions, model and thinking level) and answers `pi/requestApproval` with cards in the chat.
 */
import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { askApproval } from "./approvals";
import { ApprovalAnswer, approvalCard, ApprovalRequest, PendingApprovals } from "../shared/approvalModel";
import { ChatAttention } from "./chatAttention";
import { builtinCommand } from "./builtinCommands";
import { ChatCompletions } from "./chatCompletions";
import { runCodeAction } from "./codeActions";
import { entryIdOf, promptBefore } from "../shared/chatModel";
import type { ChatNotice, HostToWebview, ModelChoice, PromptImage, WebviewToHost } from "../shared/chatProtocol";
import { ChatSync } from "./chatSync";
import { toolFile } from "./diffRestore";
import { currentText, DiffDocuments } from "./diffView";
import { HunkReviews } from "./hunkReview";
import { branchFromHere, editAndResend, forkToNewSession, MessageAction, Requester } from "../shared/messageActions";
import { flipVersion, MessageVersions } from "../shared/messageVersions";
import { Rewinder } from "./rewind";
import { pointWords, type RestoreNotice } from "../shared/rewindModel";
import { DeltaPosts } from "./deltaPosts";
import { orderModels } from "./modelOrder";
import { sessionDescription, sessionStart } from "./sessionTitle";
import { PiSession } from "./session";
import { proposedDiff, recordedDiff } from "../shared/toolCards";
import { type CompactionEnded, type CompactionStarted, Methods, type PiEvent } from "../shared/protocol";

/** The server's ModelError code; with ANTHROPIC_API_KEY in its message it means "no key". */
const MODEL_ERROR = -32004;
/**
 * How long after the window (re)loaded an approval waits for the chat view to appear before it is
 * asked in a dialog: a reloaded window is asked again at once, before VS Code has restored its chat.
 */
const VIEW_STARTUP_WAIT_MS = 15_000;
/** Pages of older entries Open in Chat may load to reach its entry. */
const REVEAL_PAGES = 50;

const pathArg = (args: Record<string, unknown>): string => (typeof args.path === "string" ? args.path : "");

function isNoKeyError(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === MODEL_ERROR && typeof message === "string" && message.includes("ANTHROPIC_API_KEY");
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private readonly sync: ChatSync;
  private readonly approvals = new PendingApprovals();
  private readonly completions: ChatCompletions;
  private notice: ChatNotice | undefined;
  private agentDir: string | undefined;
  private readonly deltas = new DeltaPosts({ post: (message) => this.postNow(message), all: () => this.post() });
  private readonly createdAt = Date.now();
  private readonly resolved = new vscode.EventEmitter<void>();
  /** Rewind code to here, Undo restore, and the rewind question of Edit and resend / Branch from here. */
  readonly rewinder: Rewinder;
  /** Per-hunk review of edits waiting for approval (register() it once). */
  readonly reviews = new HunkReviews(() => this.post());
  private restoreNotice: RestoreNotice | undefined;
  /** The session the restore line is about (another session's chat does not show it). */
  private restoreSession: string | undefined;
  private readonly attention = new ChatAttention(
    () => this.view,
    () => this.approvals.cards().length,
  );
  /** The open session's edited and resent messages (‹ 1/2 ›), from its folded tree at the last redraw. */
  private versions = new MessageVersions();
  /** The open session's first message and start, read once per session for the view's description. */
  private start: { sessionId: string; firstMessage?: string; started?: Date } | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: () => LanguageClient,
    private readonly session: PiSession,
    private readonly diffs: DiffDocuments,
  ) {
    const request: Requester = (method, params) => this.client().sendRequest(method, params);
    this.sync = new ChatSync(request);
    this.completions = new ChatCompletions(request);
    this.rewinder = new Rewinder(request, (notice) => {
      this.restoreNotice = notice;
      this.restoreSession = this.session.current?.sessionId;
      this.post();
    });
  }

  private request<T>(method: string, params: object): Promise<T> {
    return this.client().sendRequest<T>(method, params);
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, "out")] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage((message: WebviewToHost) => void this.onMessage(message));
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
    view.onDidChangeVisibility(() => this.attention.update());
    void this.describeSession();
    this.resolved.fire();
  }

  /** Right after start-up, wait (a while) for VS Code to restore the chat view; whether it is visible. */
  private async viewVisibleSoon(): Promise<boolean> {
    const left = VIEW_STARTUP_WAIT_MS - (Date.now() - this.createdAt);
    if (this.view === undefined && left > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        const listening = this.resolved.event(done);
        function done(): void {
          clearTimeout(timer);
          listening.dispose();
          resolve();
        }
      });
    }
    return this.view?.visible === true;
  }

  /** Redraw everything from the server (the webview is a view of server state). */
  async redraw(): Promise<void> {
    if (this.restoreSession !== this.session.current?.sessionId) this.restoreNotice = undefined;
    if (!this.session.current) this.sync.clear();
    else await this.sync.load();
    this.completions.reset();
    this.post();
    await Promise.all([this.sendModels(), this.describeSession(), this.findVersions()]);
  }

  /** The versions of the drawn user messages, from the folded tree (O(segments)); posted when found. */
  private async findVersions(): Promise<void> {
    this.versions = await MessageVersions.load((method, params) => this.request(method, params), await this.session.tree());
    this.post();
  }

  /**
   * ‹ / › on a resent message: the leaf moves to the newest entry under that version; when that
   * version's code differs from the leaf's, "Rewind the code too?" first (as Edit and resend asks).
   */
  private async flipVersion(entryId: string, step: -1 | 1): Promise<void> {
    const request: Requester = (method, params) => this.request(method, params);
    const action = step < 0 ? "Previous version" : "Next version";
    const flipped = await flipVersion(request, this.versions, entryId, step, (files) => this.rewinder.askRewindToo(files, action));
    if ("gone" in flipped) return this.status("That version is gone; the chat is drawn again.");
    if ("cancelled" in flipped) return;
    this.rewinder.restored(flipped.restored);
    await this.redraw();
  }

  /** The view's title bar says which session is open: its name, else its first message, and its time. */
  private async describeSession(): Promise<void> {
    const current = this.session.current;
    if (current === undefined) {
      if (this.view) this.view.description = undefined;
      return;
    }
    if (this.start?.sessionId !== current.sessionId || this.start.firstMessage === undefined) {
      this.start = { sessionId: current.sessionId, ...(await sessionStart((method, params) => this.request(method, params))) };
    }
    if (this.view) this.view.description = sessionDescription(current.name, this.start.firstMessage, this.start.started);
  }

  /** pi: Focus Chat Prompt: show the chat and put the cursor in its prompt box. */
  async focusPrompt(): Promise<void> {
    await vscode.commands.executeCommand("pi.chat.focus");
    this.postToView({ type: "focusPrompt" });
  }

  /** A pi/event of the open session. */
  onEvent(seq: number, event: PiEvent): void {
    if (event.type === "approval_result") {
      this.approvals.settled(event.toolCallId);
      void this.reviews.finish(event.toolCallId);
      this.attention.update();
    }
    if (event.type === "agent_end") this.attention.runFinished();
    const changed = this.sync.onEvent(seq, event);
    if (!changed && event.type !== "approval_result") return;
    // Deltas (and a tool's partial output) come faster than frames: at most one post per frame,
    // carrying only the message they changed when that is all; anything else posts the whole
    // state at once (which also replaces what was gathered, so the webview sees changes in order).
    const only = this.sync.touchedOnly;
    if (changed && only) this.deltas.gather(only);
    else this.post();
  }

  /** `pi/compactionStarted` / `pi/compactionEnded` of the open session: the status row (and card). */
  onCompactionNotice(started: boolean, params: CompactionStarted | CompactionEnded): void {
    if (this.sync.onCompactionNotice(started, params)) this.post();
  }

  /**
   * `pi/requestApproval`: a card in the chat while the chat view exists (hidden, it badges the pi
   * container, and an unfocused window gets a notification); otherwise (the view closed) VS Code's
   * modal question, so a run never waits on something nobody can see. A window that has just
   * (re)loaded first gives its chat a moment to be restored.
   */
  async approve(request: ApprovalRequest): Promise<ApprovalAnswer> {
    await this.viewVisibleSoon();
    if (this.view === undefined) return askApproval(request);
    if (request.preview?.hunks?.length) this.reviews.start(request, (await currentText(request.preview.path ?? pathArg(request.args))) ?? "");
    const answer = this.approvals.ask(request);
    this.post();
    this.attention.approvalWaiting(approvalCard(request).title);
    void answer.then(() => this.attention.update());
    return answer;
  }

  /**
   * Bring a message of the branch into view (Session Tree: Open in Chat), loading older pages
   * until it is drawn (at most REVEAL_PAGES of them).
   */
  async reveal(entryId: string): Promise<void> {
    for (let page = 0; page < REVEAL_PAGES && !this.sync.transcript.messages.some((m) => m.key === entryId); page += 1) {
      if (!(await this.sync.loadOlder())) break;
    }
    this.post();
    this.postToView({ type: "reveal", entryId });
  }

  private post(): void {
    this.deltas.drop();
    this.postNow({
      type: "state",
      state: {
        messages: this.sync.transcript.messages,
        queue: this.sync.queue,
        running: this.sync.running,
        hasMore: this.sync.hasMore,
        approvals: this.approvals.cards().map((card) => this.reviews.decorate(card)),
        ...(this.notice ? { notice: this.notice } : {}),
        ...(this.agentDir ? { agentDir: this.agentDir } : {}),
        ...(this.sync.compaction ? { compaction: this.sync.compaction } : {}),
        ...(this.sync.retry ? { retry: this.sync.retry } : {}),
        rewindable: this.sync.checkpoints.ids(),
        versions: this.versions.places(this.sync.transcript.messages.flatMap((m) => (m.kind === "user" ? (entryIdOf(m) ?? []) : []))),
        ...(this.restoreNotice ? { restore: this.restoreNotice } : {}),
      },
    });
  }

  private postToView(message: HostToWebview): void {
    this.deltas.flush();
    this.postNow(message);
  }

  private postNow(message: HostToWebview): void {
    void this.view?.webview.postMessage(message);
  }

  private status(text: string): void {
    this.postToView({ type: "status", status: text });
  }

  private async sendModels(): Promise<void> {
    const listed = await this.request<{
      models: ModelChoice[];
      current: { modelId: string; thinkingLevel: string };
      hasApiKey?: boolean;
      agentDir?: string;
    }>(Methods.listModels, {});
    const notice = listed.hasApiKey === false ? "noApiKey" : undefined;
    if (notice !== this.notice || listed.agentDir !== this.agentDir) {
      this.notice = notice;
      this.agentDir = listed.agentDir;
      this.post();
    }
    this.postToView({
      type: "models",
      models: orderModels(
        listed.models.map(({ id, name, reasoning }) => ({ id, name, reasoning })),
        listed.current.modelId,
      ),
      modelId: listed.current.modelId,
      thinkingLevel: listed.current.thinkingLevel,
    });
  }

  private async onMessage(message: WebviewToHost): Promise<void> {
    try {
      switch (message.type) {
        case "ready":
          return await this.redraw();
        case "send":
          return await this.send(message.text, message.mode, message.images ?? []);
        case "stop":
          await this.request(Methods.abort, {});
          return;
        case "retry": {
          // The server has no "continue": Retry sends the failed reply's user text again as a new prompt.
          const text = promptBefore(this.sync.transcript.messages, message.key);
          if (text === undefined) return this.status("The message this reply answers is not loaded; scroll up or send it again.");
          return await this.send(text, "steer", []);
        }
        case "restoreQueue": {
          const { steering, followUp } = await this.request<{ steering: string[]; followUp: string[] }>(Methods.clearQueue, {});
          const texts = [...steering, ...followUp];
          if (texts.length > 0) this.postToView({ type: "draft", text: texts.join("\n\n") });
          return;
        }
        case "loadOlder":
          await this.sync.loadOlder();
          return this.post();
        case "approval":
          this.approvals.answer(
            message.toolCallId,
            this.reviews.answer(message.toolCallId, { decision: message.decision, ...(message.reason ? { reason: message.reason } : {}) }),
          );
          await this.reviews.finish(message.toolCallId);
          return this.post();
        case "hunk":
          return await this.reviews.toggle(message.toolCallId, message.index, message.accepted);
        case "undoRestore":
          return await this.rewinder.undo(message.undoId);
        case "openDiff":
          return await this.openDiff(message.toolCallId);
        case "complete": {
          const items = await this.completions.complete(message.kind, message.query);
          this.postToView({ type: "completions", kind: message.kind, query: message.query, items });
          return;
        }
        case "setModel":
          await this.request(Methods.setModel, {
            ...(message.modelId ? { modelId: message.modelId } : {}),
            ...(message.thinkingLevel ? { thinkingLevel: message.thinkingLevel } : {}),
          });
          return await this.sendModels();
        case "action":
          return await this.act(message.action, message.entryId, message.text);
        case "version":
          return await this.flipVersion(message.entryId, message.step);
        case "codeAction":
          return await runCodeAction(message.action, message.code, message.language);
      }
    } catch (error) {
      this.status(`Error: ${error instanceof Error ? error.message : String(error)}`);
      if (message.type === "setModel") await this.sendModels().catch(() => undefined);
    }
  }

  /** Enter steers and Alt+Enter follows up while a run is active; with no run either starts one. */
  private async send(text: string, mode: "steer" | "followUp", images: PromptImage[]): Promise<void> {
    const builtin = images.length === 0 ? builtinCommand(text) : undefined;
    if (builtin) return this.runBuiltin(builtin.name, builtin.rest);
    try {
      await this.session.ready(); // a session being reopened (window reload, server restart) is the one meant
      if (!this.session.current) await this.session.continueRecent();
      this.status("");
      await this.request(Methods.prompt, { text, streamingBehavior: mode, ...(images.length > 0 ? { images } : {}) });
    } catch (error) {
      this.postToView({ type: "draft", text, images }); // nothing typed or attached is lost
      if (isNoKeyError(error)) {
        this.notice = "noApiKey";
        this.post();
      }
      throw error;
    }
  }

  /** The chat's own `/compact [instructions]`, `/new` and `/model`. */
  private async runBuiltin(name: "compact" | "new" | "model", rest: string): Promise<void> {
    if (name === "new") return this.session.newSession();
    if (name === "compact") return this.session.compact(rest === "" ? undefined : rest);
    const { models, current } = await this.request<{ models: ModelChoice[]; current: { modelId: string } }>(Methods.listModels, {});
    const picked = await vscode.window.showQuickPick(
      orderModels(models, current.modelId).map((model) => ({ label: model.name, description: model.id === current.modelId ? `${model.id} (current)` : model.id, id: model.id })),
      { title: "pi: choose the model" },
    );
    if (picked === undefined) return;
    await this.request(Methods.setModel, { modelId: picked.id });
    await this.sendModels();
  }

  /** "Open diff" on an approval card (the file now vs. after the change) or on a finished edit/write card. */
  private async openDiff(toolCallId: string): Promise<void> {
    const sessionId = this.session.current?.sessionId ?? "";
    const pending = this.approvals.request(toolCallId);
    if (pending && (await this.reviews.open(toolCallId))) return;
    if (pending) {
      const path = pending.preview?.path ?? pathArg(pending.args);
      const sides = proposedDiff(pending.toolName, pending.args, await currentText(path));
      if (sides) await this.diffs.open(sides, path, { sessionId: pending.sessionId || sessionId, toolCallId, kind: "proposed", path });
      return;
    }
    const card = this.sync.transcript.toolCard(toolCallId);
    const path = card ? toolFile(pathArg(card.args), this.session.current?.cwd) : "";
    const sides = card && recordedDiff(card.name, card.args, card.name === "edit" ? await currentText(path) : undefined);
    if (card && sides) await this.diffs.open(sides, path, { sessionId, toolCallId, kind: "recorded", path });
  }

  /** A message's Edit and resend / Branch from here / Fork to new session button. */
  private async act(action: MessageAction, entryId: string, text: string): Promise<void> {
    const request: Requester = (method, params) => this.request(method, params);
    const restored = (result: Parameters<Rewinder["restored"]>[0]): void => this.rewinder.restored(result);
    if (action === "rewindCode") {
      const message = this.sync.transcript.messages.find((candidate) => entryIdOf(candidate) === entryId);
      await this.rewinder.rewind(entryId, message && pointWords(message.kind, message.text));
    } else if (action === "editAndResend") {
      // The text was edited in place in the chat.
      const edited = text.trim();
      if (edited === "") return;
      const code = await this.rewinder.rewindToo(entryId, "Edit and resend");
      if (code === undefined) return;
      await editAndResend(request, entryId, edited, code.restoreFiles ? { restoreFiles: true } : {}, restored);
    } else if (action === "branchFromHere") {
      const code = await this.rewinder.rewindToo(entryId, "Branch from here");
      if (code === undefined) return;
      const editorText = await branchFromHere(request, entryId, code.restoreFiles ? { restoreFiles: true } : {}, restored);
      if (editorText !== undefined) this.postToView({ type: "draft", text: editorText });
      await this.redraw();
    } else {
      await forkToNewSession((method, params) => this.session.adoptFrom(method, params), entryId);
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = crypto.randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "out", "webview.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "out", "webview.css"));
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; font-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<link rel="stylesheet" href="${style.toString()}">
</head>
<body>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body></html>`;
  }
}
