/**
 * The chat's transcript: the message list (each message's article, cached while it is unchanged and
 * repainted in place while it streams), the cards between and after the messages (compaction, retry,
 * approvals, restore, queue, notice), the "pi is working" line, and scrolling: the view follows a
 * stream only from the bottom, keeps its place when older messages load, and offers *New messages*.
 */
import type { ChatMessage } from "../shared/chatModel";
import type { ChatViewState, WebviewToHost } from "../shared/chatProtocol";
import { approvalBlock, button, compactionRow, noticeBlock, queueBlock, retryRow, type CardContext } from "./cards";
import { codeActionAt } from "./codeBlocks";
import { element } from "./dom";
import { openEditor, syncVersions } from "./editInPlace";
import { emptyState } from "./emptyState";
import { createMarkdown } from "./markdown";
import { messageArticle, updateReplyText, type MessageViewContext } from "./messageView";
import { restoreBlock, syncReview, syncRewindButton } from "./rewindView";
import { rovingArticles } from "./roving";

/** Closer than this to the bottom counts as "at the bottom": the view then follows the stream. */
const BOTTOM_SLACK = 24;
/** Closer than this to the top loads the older page. */
const TOP_SLACK = 40;

export interface Transcript {
  /** The parts to put in the page, in order: the message list (with New messages) and the working line. */
  readonly elements: readonly HTMLElement[];
  /** Draws the current state, moving only what changed. */
  draw(): void;
  /** The next draw scrolls to the bottom wherever the reader was (the user's own send); scrolls there now. */
  followNext(): void;
  /** Scrolls a message into view and focuses it (Session Tree: Open in Chat). */
  reveal(entryId: string): void;
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

/** `state`: the state to draw (the latest the host posted, drawn or not yet). */
export function createTranscript(doc: Document, win: Window, post: (message: WebviewToHost) => void, state: () => ChatViewState): Transcript {
  const log = element(doc, "main", { id: "log", "aria-live": "polite" });
  // Shown while the reader is scrolled up and something new was drawn below: the view follows a
  // stream only from the bottom, so nothing moves under a reader, and this is the way down.
  const newMessages = button(doc, "New messages", () => scrollToBottom(), "primary");
  newMessages.classList.add("new-messages");
  newMessages.hidden = true;
  const logWrap = element(doc, "div", { class: "log-wrap" });
  logWrap.append(log, newMessages);
  const working = element(doc, "div", { class: "working" }, "pi is working… (Stop to abort)");
  working.hidden = true;

  let loadingOlder = false;
  /** Set by the user's own send: the next draw scrolls to the bottom wherever the reader was. */
  let followNextDraw = false;
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

  /** The messages' articles, each with its rewind button and versions brought up to date. */
  function messageNodes(current: ChatViewState): HTMLElement[] {
    const nodes: HTMLElement[] = [];
    const keys = new Set<string>();
    const rewindable = new Set(current.rewindable ?? []);
    for (const message of current.messages) {
      keys.add(message.key);
      const drawnArticle = article(message);
      const entryId = drawnArticle.dataset.entryId;
      const offers = entryId !== undefined && rewindable.has(entryId) && (message.kind === "user" || message.kind === "assistant");
      syncRewindButton(doc, drawnArticle, offers, () => entryId && post({ type: "action", action: "rewindCode", entryId, text: "" }));
      if (entryId !== undefined && message.kind === "user") {
        syncVersions(doc, drawnArticle, current.versions?.[entryId], (step) => post({ type: "version", entryId, step }));
      }
      nodes.push(drawnArticle);
    }
    for (const key of [...drawn.keys()]) if (!keys.has(key)) drawn.delete(key);
    return nodes;
  }

  function draw(): void {
    const current = state();
    const fromBottom = log.scrollHeight - log.scrollTop - log.clientHeight;
    const atBottom = fromBottom < BOTTOM_SLACK;
    const nodes: HTMLElement[] = [];
    if (current.hasMore) {
      const older = element(doc, "button", { type: "button", class: "older" }, "Load older messages");
      older.addEventListener("click", loadOlder);
      nodes.push(older);
    }
    awaitingApproval.clear();
    for (const card of current.approvals) awaitingApproval.add(card.toolCallId);
    nodes.push(...messageNodes(current));
    if (current.compaction) nodes.push(compactionRow(doc, current.compaction));
    if (current.retry) nodes.push(retryRow(cards, current.retry));
    const waiting = new Set(current.approvals.map((card) => card.toolCallId));
    for (const id of [...approvalCards.keys()]) if (!waiting.has(id)) approvalCards.delete(id);
    const newApprovals: HTMLElement[] = [];
    for (const card of current.approvals) {
      let block = approvalCards.get(card.toolCallId);
      if (block === undefined) {
        block = approvalBlock(cards, card);
        newApprovals.push(block);
      }
      approvalCards.set(card.toolCallId, block);
      syncReview(doc, block, card.review, (index, accepted) => post({ type: "hunk", toolCallId: card.toolCallId, index, accepted }));
      nodes.push(block);
    }
    if (current.restore) nodes.push(restoreBlock(doc, current.restore, (undoId) => post({ type: "undoRestore", undoId })));
    const queued = queueBlock(cards, current.queue);
    if (queued) nodes.push(queued);
    if (current.notice) nodes.push(noticeBlock(doc, current.notice, current.agentDir));
    if (nodes.length === (current.notice ? 1 : 0) && !current.running) nodes.unshift(emptyState(doc, current.notice !== undefined));
    const heightBefore = log.scrollHeight;
    placeChildren(log, nodes);
    roving.refresh();
    if (loadingOlder) log.scrollTop = log.scrollHeight - log.clientHeight - fromBottom;
    else if (atBottom || followNextDraw) scrollToBottom();
    else if (log.scrollHeight > heightBefore) newMessages.hidden = false;
    followNextDraw = false;
    loadingOlder = false;
    // A run waits on an approval: its card always brings itself into view, wherever the reader is.
    for (const block of newApprovals) block.scrollIntoView?.({ block: "nearest" });
    working.hidden = !current.running;
  }

  /** Scroll to the newest message (and follow the stream from there). */
  function scrollToBottom(): void {
    log.scrollTop = log.scrollHeight;
    newMessages.hidden = true;
  }

  function loadOlder(): void {
    if (!state().hasMore || loadingOlder) return;
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

  /** The drawn article of an entry, if it is drawn. */
  function articleOf(entryId: string): HTMLElement | undefined {
    return Array.from(log.querySelectorAll<HTMLElement>("article")).find((a) => a.dataset.entryId === entryId);
  }

  function reveal(entryId: string): void {
    const target = articleOf(entryId);
    if (!target) return;
    target.tabIndex = -1;
    target.scrollIntoView?.({ block: "center" });
    target.focus();
  }

  function followNext(): void {
    followNextDraw = true;
    scrollToBottom();
  }

  return { elements: [logWrap, working], draw, followNext, reveal };
}
