/** One chat message as a DOM article: a reply as sanitised markdown with its thinking, the rest as text. */
import { entryIdOf, type ChatMessage } from "../chatModel";
import { ACTION_LABELS, actionsFor, type MessageAction } from "../messageActions";
import type { MarkdownRenderer } from "./markdown";

const LABELS = { user: "user message", assistant: "assistant message", tool: "tool call" } as const;

export interface MessageViewContext {
  document: Document;
  renderMarkdown: MarkdownRenderer;
  /** Thinking blocks the reader opened, by message key, so a redraw keeps them open. */
  openThinking: Set<string>;
  onAction(action: MessageAction, entryId: string, text: string): void;
}

/** A reply's thinking as a collapsed disclosure (text only). */
function thinkingBlock(context: MessageViewContext, message: ChatMessage): HTMLDetailsElement {
  const details = context.document.createElement("details");
  details.className = "thinking";
  details.open = context.openThinking.has(message.key);
  const summary = context.document.createElement("summary");
  summary.textContent = "Thinking";
  const body = context.document.createElement("div");
  body.textContent = message.thinking ?? "";
  details.append(summary, body);
  details.addEventListener("toggle", () => {
    if (details.open) context.openThinking.add(message.key);
    else context.openThinking.delete(message.key);
  });
  return details;
}

export function messageArticle(context: MessageViewContext, message: ChatMessage): HTMLElement {
  const article = context.document.createElement("article");
  article.setAttribute("aria-label", LABELS[message.kind]);
  article.className = `message ${message.kind}${message.isError ? " error" : ""}`;
  if (message.kind === "assistant") {
    article.classList.add("markdown");
    if (message.thinking) article.append(thinkingBlock(context, message));
    article.append(context.renderMarkdown(message.text));
  } else {
    article.textContent = message.text;
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
      const button = context.document.createElement("button");
      button.type = "button";
      button.textContent = ACTION_LABELS[action];
      button.addEventListener("click", () => context.onAction(action, entryId, message.text));
      bar.append(button);
    }
    article.append(bar);
  }
  return article;
}
