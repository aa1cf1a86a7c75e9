/** The chat webview's own code: draws the transcript the host posts, sends prompts and Stop. */
import { entryIdOf, type ChatMessage } from "../chatModel";
import { ACTION_LABELS, actionsFor } from "../messageActions";
import { createMarkdownRenderer } from "./markdown";

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): { draft?: string } | undefined;
  setState(state: { draft?: string }): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscodeApi = acquireVsCodeApi();
const log = document.getElementById("log") as HTMLElement;
const input = document.getElementById("prompt") as HTMLTextAreaElement;
const status = document.getElementById("status") as HTMLElement;
const renderMarkdown = createMarkdownRenderer(window);
const LABELS = { user: "user message", assistant: "assistant message", tool: "tool call" } as const;

input.value = vscodeApi.getState()?.draft ?? "";
input.addEventListener("input", () => vscodeApi.setState({ draft: input.value }));

function send(): void {
  const text = input.value.trim();
  if (text === "") return;
  vscodeApi.postMessage({ type: "send", text });
  input.value = "";
  vscodeApi.setState({ draft: "" });
}

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    send();
  }
});
document.getElementById("send")?.addEventListener("click", send);
document.getElementById("stop")?.addEventListener("click", () => vscodeApi.postMessage({ type: "stop" }));

/** Thinking blocks the reader opened, by message key, so a redraw keeps them open. */
const openThinking = new Set<string>();

/** A reply's thinking as a collapsed disclosure (text only). */
function thinkingBlock(message: ChatMessage): HTMLDetailsElement {
  const details = document.createElement("details");
  details.className = "thinking";
  details.open = openThinking.has(message.key);
  const summary = document.createElement("summary");
  summary.textContent = "Thinking";
  const body = document.createElement("div");
  body.textContent = message.thinking ?? "";
  details.append(summary, body);
  details.addEventListener("toggle", () => {
    if (details.open) openThinking.add(message.key);
    else openThinking.delete(message.key);
  });
  return details;
}

/** Draw the messages as articles: a reply as sanitised markdown, the rest as text (textContent). */
function render(messages: ChatMessage[]): void {
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 20;
  const articles = messages.map((message) => {
    const article = document.createElement("article");
    article.setAttribute("aria-label", LABELS[message.kind]);
    article.className = `message ${message.kind}${message.isError ? " error" : ""}`;
    if (message.kind === "assistant") {
      article.classList.add("markdown");
      if (message.thinking) article.append(thinkingBlock(message));
      article.append(renderMarkdown(message.text));
    } else {
      article.textContent = message.text;
    }
    const entryId = entryIdOf(message);
    const actions = entryId === undefined ? [] : actionsFor(message.kind);
    if (entryId !== undefined && actions.length > 0) {
      const bar = document.createElement("div");
      bar.className = "actions";
      bar.setAttribute("role", "group");
      bar.setAttribute("aria-label", "message actions");
      for (const action of actions) {
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = ACTION_LABELS[action];
        button.addEventListener("click", () => vscodeApi.postMessage({ type: "action", action, entryId, text: message.text }));
        bar.append(button);
      }
      article.append(bar);
    }
    return article;
  });
  log.replaceChildren(...articles);
  if (atBottom) log.scrollTop = log.scrollHeight;
}

window.addEventListener("message", (event: MessageEvent) => {
  const data = event.data as { type: string; messages?: ChatMessage[]; status?: string; text?: string };
  if (data.type === "render" && data.messages) render(data.messages);
  if (data.type === "status") status.textContent = data.status ?? "";
  if (data.type === "draft") {
    input.value = data.text ?? "";
    vscodeApi.setState({ draft: input.value });
    input.focus();
  }
});
vscodeApi.postMessage({ type: "ready" });
