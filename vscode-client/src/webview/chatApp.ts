/**
 * The chat webview: builds its page from its three parts (the toolbar, the transcript, the composer),
 * draws the state the host posts and sends what the user does. Takes the document, window and VS
 * Code API, so jsdom tests drive exactly what the webview runs.
 */
import type { ChatMessage } from "../shared/chatModel";
import type { ChatViewState, HostToWebview, WebviewToHost } from "../shared/chatProtocol";
import { createComposer, type DraftStore } from "./composer";
import { createToolbar } from "./toolbar";
import { createTranscript } from "./transcript";

export { MAX_IMAGE_BYTES, type SavedState } from "./composer";
export { placeChildren } from "./transcript";

export interface VsCodeApi extends DraftStore {
  postMessage(message: WebviewToHost): void;
}

export interface ChatApp {
  receive(message: HostToWebview): void;
}

export function startChat(doc: Document, win: Window, api: VsCodeApi): ChatApp {
  const post = (message: WebviewToHost): void => api.postMessage(message);
  let state: ChatViewState = { messages: [], queue: { steering: [], followUp: [] }, running: false, hasMore: false, approvals: [] };

  const toolbar = createToolbar(doc, post);
  const transcript = createTranscript(doc, win, post, () => state);
  const composer = createComposer(doc, win, api, post, () => transcript.followNext());
  doc.body.append(toolbar.element, ...transcript.elements, ...composer.elements);

  function draw(): void {
    transcript.draw();
    composer.showRunning(state.running);
  }

  function receive(message: HostToWebview): void {
    switch (message.type) {
      case "state":
      case "message":
      case "append":
        applyState(message);
        draw();
        break;
      case "status":
        composer.setStatus(message.status);
        break;
      case "draft":
        composer.restoreDraft(message.text, message.images ?? []);
        break;
      case "reveal":
        transcript.reveal(message.entryId);
        break;
      case "models":
        toolbar.showModels(message.models, message.modelId, message.thinkingLevel);
        break;
      case "focusPrompt":
        composer.focus();
        break;
      case "completions":
        composer.showCompletions(message);
        break;
    }
  }

  /**
   * A posted state, one message of it replaced (by key) or appended, or text added to one: the data
   * only, no drawing.
   */
  function applyState(message: Extract<HostToWebview, { type: "state" | "message" | "append" }>): void {
    if (message.type === "state") {
      state = message.state;
      return;
    }
    const key = message.type === "message" ? message.message.key : message.key;
    const at = state.messages.findIndex((other) => other.key === key);
    const messages = [...state.messages];
    if (message.type === "append") {
      const target = messages[at] as ChatMessage | undefined;
      const before = target?.[message.field] ?? "";
      if (target === undefined || before.length !== message.from) return; // not the text it extends
      messages[at] = { ...target, [message.field]: before + message.delta };
    } else if (at >= 0) messages[at] = message.message;
    else messages.push(message.message);
    state = { ...state, messages };
  }

  // The host posts after every change: the whole state, the one message a change touched, or the
  // text a streamed delta added (one post per delta). Drawing each would fall behind a fast stream, so posts only update
  // the data and the view is drawn on the next animation frame, once for all that arrived meanwhile.
  // Any other message first draws what is pending, so messages still apply in order.
  let drawPending = false;
  const flushDraw = (): void => {
    if (!drawPending) return;
    drawPending = false;
    draw();
  };
  win.addEventListener("message", (event: MessageEvent) => {
    const message = event.data as HostToWebview;
    if ((message.type === "state" || message.type === "message" || message.type === "append") && typeof win.requestAnimationFrame === "function") {
      applyState(message);
      if (!drawPending) win.requestAnimationFrame(flushDraw);
      drawPending = true;
      return;
    }
    flushDraw();
    receive(message);
  });
  post({ type: "ready" });
  return { receive };
}
