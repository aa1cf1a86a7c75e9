/**
 * The chat webview: builds its page, draws the state the host posts and sends what the user does.
 * Takes the document, window and VS Code API, so jsdom tests drive exactly what the webview runs.
 */
import type { ChatMessage } from "../chatModel";
import {
  THINKING_LEVELS,
  type ChatViewState,
  type HostToWebview,
  type ModelChoice,
  type PromptImage,
  type SendMode,
  type WebviewToHost,
} from "../chatProtocol";
import { approvalBlock, button, compactionRow, noticeBlock, queueBlock, retryRow, type CardContext } from "./cards";
import { codeActionAt } from "./codeBlocks";
import { applyCompletion, completionAt, type CompletionContext } from "./completion";
import { openEditor, syncVersions } from "./editInPlace";
import { createMarkdown } from "./markdown";
import { emptyState } from "./emptyState";
import { messageArticle, updateReplyText, type MessageViewContext } from "./messageView";
import { restoreBlock, syncReview, syncRewindButton } from "./rewindView";
import { rovingArticles } from "./roving";

export interface SavedState {
  draft?: string;
}

export interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  getState(): SavedState | undefined;
  setState(state: SavedState): void;
}

/** Closer than this to the bottom counts as "at the bottom": the view then follows the stream. */
const BOTTOM_SLACK = 24;
/** Closer than this to the top loads the older page. */
const TOP_SLACK = 40;
/** Largest image accepted (pi sends at most about this much base64 per image to the model). */
export const MAX_IMAGE_BYTES = 3_300_000;
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** A file's bytes as base64, without the data: prefix. */
function readBase64(win: Window, file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new (win as unknown as { FileReader: typeof FileReader }).FileReader();
    reader.onload = () => resolve(typeof reader.result === "string" ? reader.result.replace(/^data:[^,]*,/, "") : "");
    reader.onerror = () => reject(new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

export interface ChatApp {
  receive(message: HostToWebview): void;
}

function element<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  attributes: Record<string, string> = {},
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = doc.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Makes `nodes` the children of `parent`, moving only what is out of place: a streamed delta then
 * leaves every unchanged message where it is instead of detaching and re-attaching the whole log.
 */
export function placeChildren(parent: HTMLElement, nodes: readonly Node[]): void {
  nodes.forEach((node, index) => {
    const current = parent.childNodes[index];
    if (current !== node) parent.insertBefore(node, current ?? null);
  });
  while (parent.childNodes.length > nodes.length) parent.lastChild?.remove();
}

export function startChat(doc: Document, win: Window, api: VsCodeApi): ChatApp {
  const post = (message: WebviewToHost): void => api.postMessage(message);

  const modelSelect = element(doc, "select", { "aria-label": "Model" });
  const thinkingSelect = element(doc, "select", { "aria-label": "Thinking level" });
  const toolbar = element(doc, "header", { class: "toolbar" });
  toolbar.append(modelSelect, thinkingSelect);
  const log = element(doc, "main", { id: "log", "aria-live": "polite" });
  // Shown while the reader is scrolled up and something new was drawn below: the view follows a
  // stream only from the bottom, so nothing moves under a reader, and this is the way down.
  const newMessages = button(doc, "New messages", () => scrollToBottom(), "primary");
  newMessages.classList.add("new-messages");
  newMessages.hidden = true;
  const logWrap = element(doc, "div", { class: "log-wrap" });
  logWrap.append(log, newMessages);
  const status = element(doc, "div", { id: "status", role: "status" });
  const working = element(doc, "div", { class: "working" }, "pi is working… (Stop to abort)");
  working.hidden = true;
  const suggestions = element(doc, "ul", { id: "suggestions", role: "listbox", "aria-label": "Suggestions" });
  suggestions.hidden = true;
  const input = element(doc, "textarea", { id: "prompt", rows: "3", "aria-label": "Message pi" });
  const label = element(doc, "label", { for: "prompt", class: "prompt-label" }, "Message pi");
  const send = element(doc, "button", { type: "button" }, "Send");
  const stop = element(doc, "button", { type: "button", class: "secondary" }, "Stop");
  const buttons = element(doc, "div", { class: "buttons" });
  buttons.append(send, stop);
  const attachmentList = element(doc, "div", { class: "attachments", role: "list", "aria-label": "Attached images" });
  doc.body.append(toolbar, logWrap, working, status, suggestions, attachmentList, label, input, buttons);

  let state: ChatViewState = { messages: [], queue: { steering: [], followUp: [] }, running: false, hasMore: false, approvals: [] };
  let models: ModelChoice[] = [];
  let loadingOlder = false;
  /** Set by the user's own send: the next draw scrolls to the bottom wherever the reader was. */
  let followNext = false;
  const drawn = new Map<string, { message: ChatMessage; signature: string; article: HTMLElement; waiting: boolean }>();
  const awaitingApproval = new Set<string>();
  /** Approval cards kept while they wait, so a redraw never loses a reason being typed. */
  const approvalCards = new Map<string, HTMLElement>();
  const roving = rovingArticles(log);

  const markdown = createMarkdown(win);
  const messageView: MessageViewContext = {
    document: doc,
    renderMarkdown: markdown.render,
    streamMarkdown: markdown.stream,
    openThinking: new Set<string>(),
    toggledTools: new Set<string>(),
    onAction: (action, entryId, text) => {
      // Edit and resend happens where the message is: its editor's Send posts the edited text.
      const target = action === "editAndResend" ? articleOf(entryId) : undefined;
      if (target) openEditor(doc, target, text, (edited) => post({ type: "action", action, entryId, text: edited }));
      else post({ type: "action", action, entryId, text });
    },
    onOpenDiff: (toolCallId) => post({ type: "openDiff", toolCallId }),
    onRetry: (key) => post({ type: "retry", key }),
    awaitingApproval,
  };
  const cards: CardContext = {
    document: doc,
    onRestoreQueue: () => post({ type: "restoreQueue" }),
    onApproval: (toolCallId, decision, reason) =>
      post(reason === undefined ? { type: "approval", toolCallId, decision } : { type: "approval", toolCallId, decision, reason }),
    onOpenDiff: (toolCallId) => post({ type: "openDiff", toolCallId }),
    onStop: () => post({ type: "stop" }),
  };

  // ---------------------------------------------------------------- drawing

  /**
   * A message's article, reused while the message is unchanged; a reply whose text alone changed
   * (a streamed delta) is redrawn in place, from its last block on.
   */
  function article(message: ChatMessage): HTMLElement {
    const cached = drawn.get(message.key);
    const waiting = message.tool !== undefined && awaitingApproval.has(message.tool.callId);
    if (cached && cached.message === message && cached.waiting === waiting) return cached.article;
    const signature = JSON.stringify({ ...message, text: "" });
    if (cached && cached.signature === signature && cached.waiting === waiting) {
      if (cached.message.text === message.text || updateReplyText(cached.article, message.text)) {
        cached.message = message;
        return cached.article;
      }
    }
    const fresh = messageArticle(messageView, message);
    drawn.set(message.key, { message, signature, article: fresh, waiting });
    return fresh;
  }

  function draw(): void {
    const fromBottom = log.scrollHeight - log.scrollTop - log.clientHeight;
    const atBottom = fromBottom < BOTTOM_SLACK;
    const nodes: HTMLElement[] = [];
    if (state.hasMore) {
      const older = element(doc, "button", { type: "button", class: "older" }, "Load older messages");
      older.addEventListener("click", loadOlder);
      nodes.push(older);
    }
    awaitingApproval.clear();
    for (const card of state.approvals) awaitingApproval.add(card.toolCallId);
    const keys = new Set<string>();
    const rewindable = new Set(state.rewindable ?? []);
    for (const message of state.messages) {
      keys.add(message.key);
      const drawnArticle = article(message);
      const entryId = drawnArticle.dataset.entryId;
      const offers = entryId !== undefined && rewindable.has(entryId) && (message.kind === "user" || message.kind === "assistant");
      syncRewindButton(doc, drawnArticle, offers, () => entryId && post({ type: "action", action: "rewindCode", entryId, text: "" }));
      if (entryId !== undefined && message.kind === "user") {
        syncVersions(doc, drawnArticle, state.versions?.[entryId], (step) => post({ type: "version", entryId, step }));
      }
      nodes.push(drawnArticle);
    }
    for (const key of [...drawn.keys()]) if (!keys.has(key)) drawn.delete(key);
    if (state.compaction) nodes.push(compactionRow(doc, state.compaction));
    if (state.retry) nodes.push(retryRow(cards, state.retry));
    const waiting = new Set(state.approvals.map((card) => card.toolCallId));
    for (const id of [...approvalCards.keys()]) if (!waiting.has(id)) approvalCards.delete(id);
    const newApprovals: HTMLElement[] = [];
    for (const card of state.approvals) {
      let block = approvalCards.get(card.toolCallId);
      if (block === undefined) {
        block = approvalBlock(cards, card);
        newApprovals.push(block);
      }
      approvalCards.set(card.toolCallId, block);
      syncReview(doc, block, card.review, (index, accepted) => post({ type: "hunk", toolCallId: card.toolCallId, index, accepted }));
      nodes.push(block);
    }
    if (state.restore) nodes.push(restoreBlock(doc, state.restore, (undoId) => post({ type: "undoRestore", undoId })));
    const queued = queueBlock(cards, state.queue);
    if (queued) nodes.push(queued);
    if (state.notice) nodes.push(noticeBlock(doc, state.notice, state.agentDir));
    if (nodes.length === (state.notice ? 1 : 0) && !state.running) nodes.unshift(emptyState(doc, state.notice !== undefined));
    const heightBefore = log.scrollHeight;
    placeChildren(log, nodes);
    roving.refresh();
    if (loadingOlder) log.scrollTop = log.scrollHeight - log.clientHeight - fromBottom;
    else if (atBottom || followNext) scrollToBottom();
    else if (log.scrollHeight > heightBefore) newMessages.hidden = false;
    followNext = false;
    loadingOlder = false;
    // A run waits on an approval: its card always brings itself into view, wherever the reader is.
    for (const block of newApprovals) block.scrollIntoView?.({ block: "nearest" });
    working.hidden = !state.running;
    input.placeholder = state.running ? "Enter: steer the run · Alt+Enter: follow-up after it" : "Enter: send · Shift+Enter: new line";
  }

  /** Scroll to the newest message (and follow the stream from there). */
  function scrollToBottom(): void {
    log.scrollTop = log.scrollHeight;
    newMessages.hidden = true;
  }

  function loadOlder(): void {
    if (!state.hasMore || loadingOlder) return;
    loadingOlder = true;
    post({ type: "loadOlder" });
  }
  // Code blocks' buttons (drawn as plain markup in cached, cloned blocks): one listener for all.
  log.addEventListener("click", (event) => {
    const asked = codeActionAt(event.target);
    if (asked) post({ type: "codeAction", ...asked });
  });
  log.addEventListener("scroll", () => {
    if (log.scrollTop < TOP_SLACK) loadOlder();
    if (log.scrollHeight - log.scrollTop - log.clientHeight < BOTTOM_SLACK) newMessages.hidden = true;
  });

  function drawModels(modelId: string, thinkingLevel: string): void {
    // The host orders them: the current model on top, then each family together (an optgroup).
    const entries: HTMLElement[] = [];
    let group: HTMLOptGroupElement | undefined;
    models.forEach((model, index) => {
      const option = element(doc, "option", { value: model.id }, model.name);
      option.selected = model.id === modelId;
      if ((index === 0 && model.id === modelId) || model.family === undefined) {
        entries.push(option);
        group = undefined;
        return;
      }
      if (group?.label !== model.family) {
        group = element(doc, "optgroup", { label: model.family });
        entries.push(group);
      }
      group.append(option);
    });
    modelSelect.replaceChildren(...entries);
    const reasoning = models.find((model) => model.id === modelId)?.reasoning ?? true;
    const levels = reasoning ? THINKING_LEVELS : (["off"] as const);
    thinkingSelect.replaceChildren(
      ...levels.map((level) => {
        const option = element(doc, "option", { value: level }, `thinking: ${level}`);
        option.selected = level === thinkingLevel;
        return option;
      }),
    );
  }
  modelSelect.addEventListener("change", () => post({ type: "setModel", modelId: modelSelect.value }));
  thinkingSelect.addEventListener("change", () => post({ type: "setModel", thinkingLevel: thinkingSelect.value }));

  // ---------------------------------------------------------------- the prompt box

  const saveDraft = (): void => api.setState({ draft: input.value });
  input.value = api.getState()?.draft ?? "";

  let images: (PromptImage & { name: string })[] = [];

  function drawAttachments(): void {
    attachmentList.replaceChildren(
      ...images.map((image, index) => {
        const item = element(doc, "span", { role: "listitem", class: "attachment" }, `${image.name} `);
        const remove = element(doc, "button", { type: "button", "aria-label": `Remove image ${image.name}` }, "×");
        remove.addEventListener("click", () => {
          images.splice(index, 1);
          drawAttachments();
        });
        item.append(remove);
        return item;
      }),
    );
  }

  /** Pasted or dropped files: images are attached to the next message, anything else is refused with a word. */
  async function attach(files: File[]): Promise<void> {
    for (const file of files) {
      if (!IMAGE_TYPES.has(file.type)) {
        status.textContent = `${file.name || "That file"} is not a PNG, JPEG, GIF or WebP image; mention files with @ instead.`;
        continue;
      }
      if (file.size > MAX_IMAGE_BYTES) {
        status.textContent = `${file.name || "The image"} is larger than ${MAX_IMAGE_BYTES / 1_000_000} MB; attach a smaller one.`;
        continue;
      }
      images.push({ name: file.name || `image ${images.length + 1}`, mimeType: file.type, data: await readBase64(win, file) });
      drawAttachments();
    }
  }

  const imageFiles = (list: FileList | null | undefined): File[] => Array.from(list ?? []);
  input.addEventListener("paste", (event: ClipboardEvent) => {
    const files = imageFiles(event.clipboardData?.files);
    if (files.length === 0) return;
    event.preventDefault();
    void attach(files);
  });
  doc.addEventListener("dragover", (event: DragEvent) => {
    if (event.dataTransfer?.types.includes("Files")) event.preventDefault();
  });
  doc.addEventListener("drop", (event: DragEvent) => {
    const files = imageFiles(event.dataTransfer?.files);
    if (files.length === 0) return;
    event.preventDefault();
    void attach(files);
  });

  function submit(mode: SendMode): void {
    const text = input.value.trim();
    if (text === "" && images.length === 0) return;
    const attached = images.map(({ data, mimeType }) => ({ data, mimeType }));
    post(attached.length > 0 ? { type: "send", text, mode, images: attached } : { type: "send", text, mode });
    followNext = true;
    scrollToBottom();
    input.value = "";
    images = [];
    drawAttachments();
    saveDraft();
    closeSuggestions();
  }

  let completion: CompletionContext | undefined;
  let items: { value: string; detail: string }[] = [];
  let selected = 0;

  function closeSuggestions(): void {
    completion = undefined;
    items = [];
    suggestions.hidden = true;
    suggestions.replaceChildren();
    input.removeAttribute("aria-activedescendant");
  }

  function drawSuggestions(): void {
    suggestions.hidden = items.length === 0;
    suggestions.replaceChildren(
      ...items.map((item, index) => {
        const option = element(doc, "li", { role: "option", id: `suggestion-${index}` });
        option.setAttribute("aria-selected", String(index === selected));
        if (item.value === "") option.setAttribute("aria-disabled", "true"); // a note ("no templates"), never inserted
        option.textContent = item.value === "" ? item.detail : item.detail ? `${item.value} — ${item.detail}` : item.value;
        option.addEventListener("mousedown", (event) => {
          event.preventDefault();
          accept(index);
        });
        return option;
      }),
    );
    if (items.length > 0) input.setAttribute("aria-activedescendant", `suggestion-${selected}`);
  }

  function accept(index: number): void {
    const item = items[index];
    if (!completion || !item) return;
    if (item.value === "") return closeSuggestions();
    const caret = input.selectionStart ?? input.value.length;
    const next = applyCompletion(input.value, caret, completion, item.value);
    input.value = next.text;
    input.setSelectionRange(next.caret, next.caret);
    saveDraft();
    closeSuggestions();
    input.focus();
  }

  input.addEventListener("input", () => {
    saveDraft();
    const context = completionAt(input.value, input.selectionStart ?? input.value.length);
    if (!context) {
      closeSuggestions();
      return;
    }
    completion = context;
    post({ type: "complete", kind: context.kind, query: context.query });
  });

  input.addEventListener("keydown", (event) => {
    if (!suggestions.hidden && items.length > 0) {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        selected = (selected + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
        drawSuggestions();
        return;
      }
      if (event.key === "Enter" || event.key === "Tab") {
        event.preventDefault();
        accept(selected);
        return;
      }
      if (event.key === "Escape") {
        event.preventDefault();
        closeSuggestions();
        return;
      }
    }
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit(event.altKey ? "followUp" : "steer");
    }
  });
  send.addEventListener("click", () => submit("steer"));
  stop.addEventListener("click", () => post({ type: "stop" }));

  /** The drawn article of an entry, if it is drawn. */
  function articleOf(entryId: string): HTMLElement | undefined {
    return Array.from(log.querySelectorAll<HTMLElement>("article")).find((a) => a.dataset.entryId === entryId);
  }

  /** Scroll a message into view and focus it (Session Tree: Open in Chat). */
  function reveal(entryId: string): void {
    const target = articleOf(entryId);
    if (!target) return;
    target.tabIndex = -1;
    target.scrollIntoView?.({ block: "center" });
    target.focus();
  }

  // ---------------------------------------------------------------- from the host

  function receive(message: HostToWebview): void {
    switch (message.type) {
      case "state":
      case "message":
        applyState(message);
        draw();
        break;
      case "status":
        status.textContent = message.status;
        break;
      case "draft":
        input.value = input.value.trim() === "" ? message.text : `${message.text}\n${input.value}`;
        for (const image of message.images ?? []) images.push({ ...image, name: `image ${images.length + 1}` });
        drawAttachments();
        saveDraft();
        input.focus();
        break;
      case "reveal":
        reveal(message.entryId);
        break;
      case "models":
        models = message.models;
        drawModels(message.modelId, message.thinkingLevel);
        break;
      case "focusPrompt":
        input.focus();
        break;
      case "completions":
        if (!completion || completion.kind !== message.kind || completion.query !== message.query) return;
        items = message.items;
        selected = 0;
        drawSuggestions();
        break;
    }
  }

  /** A posted state, or one message of it replaced (by key) or appended: the data only, no drawing. */
  function applyState(message: Extract<HostToWebview, { type: "state" | "message" }>): void {
    if (message.type === "state") {
      state = message.state;
      return;
    }
    const at = state.messages.findIndex((other) => other.key === message.message.key);
    const messages = [...state.messages];
    if (at >= 0) messages[at] = message.message;
    else messages.push(message.message);
    state = { ...state, messages };
  }

  // The host posts after every change, one post per streamed delta (the whole state, or just the
  // message a delta changed). Drawing each would fall behind a fast stream, so posts only update
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
    if ((message.type === "state" || message.type === "message") && typeof win.requestAnimationFrame === "function") {
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
