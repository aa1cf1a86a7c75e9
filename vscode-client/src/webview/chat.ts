/** The chat webview's own code: draws the transcript the host posts, sends prompts and Stop. */
import type { ChatMessage } from "../chatModel";
import { createMarkdownRenderer } from "./markdown";
import { messageArticle, type MessageViewContext } from "./messageView";

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
const view: MessageViewContext = {
  document,
  renderMarkdown: createMarkdownRenderer(window),
  openThinking: new Set<string>(),
  onAction: (action, entryId, text) => vscodeApi.postMessage({ type: "action", action, entryId, text }),
};

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

/** Draw the messages as articles: a reply as sanitised markdown, the rest as text (textContent). */
function render(messages: ChatMessage[]): void {
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 20;
  const articles = messages.map((message) => messageArticle(view, message));
  log.replaceChildren(...articles);
  if (atBottom) log.scrollTop = log.scrollHeight;
}

/** Scroll a message into view and focus it (Session Tree: Open in Chat). */
function reveal(entryId: string): void {
  const article = Array.from(log.querySelectorAll<HTMLElement>("article")).find((a) => a.dataset.entryId === entryId);
  if (!article) return;
  article.tabIndex = -1;
  article.scrollIntoView({ block: "center" });
  article.focus();
}

window.addEventListener("message", (event: MessageEvent) => {
  const data = event.data as { type: string; messages?: ChatMessage[]; status?: string; text?: string; entryId?: string };
  if (data.type === "render" && data.messages) render(data.messages);
  if (data.type === "reveal" && data.entryId) reveal(data.entryId);
  if (data.type === "status") status.textContent = data.status ?? "";
  if (data.type === "draft") {
    input.value = data.text ?? "";
    vscodeApi.setState({ draft: input.value });
    input.focus();
  }
});
vscodeApi.postMessage({ type: "ready" });
