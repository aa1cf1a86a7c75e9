/**
 * One chat message as a DOM article: a reply as sanitised markdown with its thinking, a tool call
 * as a compact card, a compaction or branch summary as a collapsed card, the rest as text.
 */
import { entryIdOf, type ChatKind, type ChatMessage, type ToolCard } from "../shared/chatModel";
import { ACTION_LABELS, actionsFor, type MessageAction } from "../shared/messageActions";
import { isCollapsedTool, isDiffTool } from "../shared/toolCards";
import { failureTitle, readableError } from "./cards";
import type { MarkdownRenderer, MarkdownStream } from "./markdown";

const LABELS: Record<ChatKind, string> = {
  user: "user message",
  assistant: "assistant message",
  tool: "tool call",
  compaction: "compaction summary",
  branchSummary: "branch summary",
};

export interface MessageViewContext {
  document: Document;
  renderMarkdown: MarkdownRenderer;
  /** A reply's text drawn into `element`, redrawn block by block as it grows. */
  streamMarkdown: (element: HTMLElement) => MarkdownStream;
  /** Thinking blocks and summary cards the reader opened, by message key, so a redraw keeps them open. */
  openThinking: Set<string>;
  onAction(action: MessageAction, entryId: string, text: string): void;
  /** Tool cards the reader opened (or closed, for bash), by call id, kept across redraws. */
  toggledTools: Set<string>;
  onOpenDiff(toolCallId: string): void;
  /** Retry on a failed reply (by message key). */
  onRetry(key: string): void;
  /** Tool calls (by id) whose approval card waits for the user: they say so, not "running". */
  awaitingApproval?: ReadonlySet<string>;
}

/** The codicon of each message action (shown on hover and keyboard focus; the label is its accessible name). */
const ACTION_ICONS: Record<MessageAction, string> = {
  editAndResend: "edit",
  branchFromHere: "git-branch",
  forkToNewSession: "repo-forked",
  rewindCode: "discard",
};

/** An icon-only button: a codicon, named for assistive technology and tooltips by `label`. */
export function iconButton(doc: Document, icon: string, label: string): HTMLButtonElement {
  const button = doc.createElement("button");
  button.type = "button";
  button.className = "icon-button";
  button.setAttribute("aria-label", label);
  button.title = label;
  const glyph = doc.createElement("span");
  glyph.className = `codicon codicon-${icon}`;
  glyph.setAttribute("aria-hidden", "true");
  button.append(glyph);
  return button;
}

/** A message action's icon button (its label the accessible name and tooltip). */
export function actionButton(doc: Document, action: MessageAction): HTMLButtonElement {
  return iconButton(doc, ACTION_ICONS[action], ACTION_LABELS[action]);
}

/** Bash output shown while it streams: the last lines only (the whole output is in the card's details). */
const LIVE_LINES = 12;

/**
 * A tool call as a compact card: its summary line as a disclosure; reading tools (read, grep, find,
 * ls) start closed, bash starts open with its output streaming, edit/write offer "Open diff".
 */
function toolCardView(context: MessageViewContext, card: ToolCard, summaryText: string): HTMLElement {
  const doc = context.document;
  const details = doc.createElement("details");
  const openByDefault = card.name === "bash" || (!isCollapsedTool(card.name) && !isDiffTool(card.name));
  details.open = context.toggledTools.has(card.callId) ? !openByDefault : openByDefault;
  details.addEventListener("toggle", () => {
    if (details.open !== openByDefault) context.toggledTools.add(card.callId);
    else context.toggledTools.delete(card.callId);
  });
  const summary = doc.createElement("summary");
  const waiting = context.awaitingApproval?.has(card.callId) === true;
  summary.textContent = waiting ? `${summaryText} (waiting for your approval)` : card.running ? `${summaryText} (running…)` : summaryText;
  const output = doc.createElement("pre");
  output.className = "tool-output";
  const lines = card.output.split("\n");
  output.textContent = card.running && lines.length > LIVE_LINES ? lines.slice(-LIVE_LINES).join("\n") : card.output;
  details.append(summary, output);
  if (!isDiffTool(card.name)) return details;
  const wrapper = doc.createElement("div");
  const button = doc.createElement("button");
  button.type = "button";
  button.className = "secondary";
  button.textContent = "Open diff";
  button.addEventListener("click", () => context.onOpenDiff(card.callId));
  wrapper.append(details, button);
  return wrapper;
}

/** A disclosure, closed until the reader opens it (and kept open across redraws once opened). */
function disclosure(context: MessageViewContext, key: string, title: string, body: Node): HTMLDetailsElement {
  const details = context.document.createElement("details");
  details.open = context.openThinking.has(key);
  const summary = context.document.createElement("summary");
  summary.textContent = title;
  details.append(summary, body);
  details.addEventListener("toggle", () => {
    if (details.open) context.openThinking.add(key);
    else context.openThinking.delete(key);
  });
  return details;
}

/** A reply's thinking as a collapsed disclosure (text only). */
function thinkingBlock(context: MessageViewContext, message: ChatMessage): HTMLDetailsElement {
  const body = context.document.createElement("div");
  body.textContent = message.thinking ?? "";
  const details = disclosure(context, message.key, "Thinking", body);
  details.className = "thinking";
  return details;
}

/** The one line of a summary card: what was summarised. */
export function summaryTitle(message: ChatMessage): string {
  if (message.kind === "branchSummary") return "Summary of the branch you left";
  return message.tokensBefore === undefined
    ? "Compacted"
    : `Compacted — ${message.tokensBefore.toLocaleString("en-US")} tokens summarised`;
}

/** A compaction or branch summary: its title line, and the summary as sanitised markdown when opened. */
function summaryBlock(context: MessageViewContext, message: ChatMessage): HTMLDetailsElement {
  const body = context.document.createElement("div");
  body.className = "summary-body markdown";
  body.append(context.renderMarkdown(message.text));
  return disclosure(context, message.key, summaryTitle(message), body);
}

const afterAttempts = (message: ChatMessage): string => (message.attempts ? ` after ${message.attempts} attempts` : "");

/**
 * How a reply ended when not normally: a failure as an alert card (what failed, the server's
 * message, Retry), a stop as "Stopped"; a reply that succeeded on a retry says after how many attempts.
 */
function endBlock(context: MessageViewContext, message: ChatMessage): HTMLElement | undefined {
  const doc = context.document;
  const block = doc.createElement("div");
  if (message.stopReason === "error") {
    block.className = "error-card";
    block.setAttribute("role", "alert");
    const title = doc.createElement("div");
    title.className = "error-title";
    title.textContent = `${failureTitle(message.errorMessage)}${afterAttempts(message)}`;
    const detail = doc.createElement("div");
    detail.className = "error-detail";
    detail.textContent = message.errorMessage === undefined ? "The model failed without a message." : readableError(message.errorMessage);
    const retry = doc.createElement("button");
    retry.type = "button";
    retry.textContent = "Retry"; // primary: what the card is for
    retry.addEventListener("click", () => context.onRetry(message.key));
    block.append(title, detail, retry);
  } else if (message.stopReason === "aborted") {
    block.className = "stopped";
    block.textContent = `Stopped${afterAttempts(message)}`;
  } else if (message.attempts) {
    block.className = "attempts-note";
    block.textContent = `Answered${afterAttempts(message)}`;
  } else return undefined;
  return block;
}

/** The reply text of each drawn assistant article, so a streamed delta redraws only its last block. */
const replies = new WeakMap<HTMLElement, MarkdownStream>();

/**
 * Draws `text` as the reply of an article made by `messageArticle`, in place; false when the
 * article has no reply text to update (it must then be drawn again).
 */
export function updateReplyText(article: HTMLElement, text: string): boolean {
  const reply = replies.get(article);
  if (reply === undefined) return false;
  reply.update(text);
  return true;
}

export function messageArticle(context: MessageViewContext, message: ChatMessage): HTMLElement {
  const article = context.document.createElement("article");
  article.setAttribute("aria-label", LABELS[message.kind]);
  article.className = `message ${message.kind}${message.isError ? " error" : ""}`;
  if (message.kind === "assistant") {
    article.classList.add("markdown");
    if (message.thinking) article.append(thinkingBlock(context, message));
    const body = context.document.createElement("div");
    body.className = "reply";
    const reply = context.streamMarkdown(body);
    reply.update(message.text);
    replies.set(article, reply);
    article.append(body);
    const ended = endBlock(context, message);
    if (ended) article.append(ended);
  } else if (message.kind === "tool" && message.tool) {
    article.append(toolCardView(context, message.tool, message.text));
  } else if (message.kind === "compaction" || message.kind === "branchSummary") {
    article.classList.add("summary");
    article.append(summaryBlock(context, message));
  } else {
    const text = context.document.createElement("div");
    text.className = "user-text";
    text.textContent = message.text;
    article.append(text);
    if (message.images) {
      const note = context.document.createElement("div");
      note.className = "attachments-note";
      note.textContent = message.images === 1 ? "[1 image]" : `[${message.images} images]`;
      article.append(note);
    }
  }
  const entryId = entryIdOf(message);
  if (entryId !== undefined) article.dataset.entryId = entryId;
  const actions = entryId === undefined ? [] : actionsFor(message.kind);
  if (entryId !== undefined && actions.length > 0) {
    const bar = context.document.createElement("div");
    bar.className = "actions";
    bar.setAttribute("role", "group");
    bar.setAttribute("aria-label", "message actions");
    for (const action of actions) {
      const button = actionButton(context.document, action);
      button.addEventListener("click", () => context.onAction(action, entryId, message.text));
      bar.append(button);
    }
    article.append(bar);
  }
  return article;
}
