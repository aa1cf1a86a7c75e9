/**
 * The chat's blocks besides messages: queued messages, approval cards, the compaction's and the
 * automatic retry's status rows and the no-API-key notice.
 */
import type { ApprovalCard } from "../shared/approvalModel";
import type { CompactionStatus, RetryStatus } from "../shared/chatModel";
import type { ChatNotice, QueueView } from "../shared/chatProtocol";

export interface CardContext {
  document: Document;
  onRestoreQueue(): void;
  onApproval(toolCallId: string, decision: "allow" | "allowAlways" | "deny", reason?: string): void;
  onOpenDiff(toolCallId: string): void;
  /** Stop on the retry row: aborts the run, as the Stop button does. */
  onStop(): void;
}

/** A button in the theme's primary (the action a card is for) or secondary look. */
export function button(doc: Document, label: string, onClick: () => void, look: "primary" | "secondary" = "secondary"): HTMLButtonElement {
  const element = doc.createElement("button");
  element.type = "button";
  if (look === "secondary") element.className = "secondary";
  element.textContent = label;
  element.addEventListener("click", onClick);
  return element;
}

/** Messages typed during the run, waiting: steering first, then follow-ups, with "Restore to input". */
export function queueBlock(context: CardContext, queue: QueueView): HTMLElement | undefined {
  if (queue.steering.length === 0 && queue.followUp.length === 0) return undefined;
  const doc = context.document;
  const block = doc.createElement("section");
  block.className = "queue";
  block.setAttribute("aria-label", "queued messages");
  const items = [
    ...queue.steering.map((text) => ["steering", text]),
    ...queue.followUp.map((text) => ["follow-up", text]),
  ];
  for (const [kind, text] of items) {
    const item = doc.createElement("div");
    item.className = `queued ${kind}`;
    const tag = doc.createElement("span");
    tag.className = "tag";
    tag.textContent = `queued (${kind}) `;
    const body = doc.createElement("span");
    body.textContent = text;
    item.append(tag, body);
    block.append(item);
  }
  block.append(button(doc, "Restore to input", () => context.onRestoreQueue()));
  return block;
}

/** A unified diff's lines, each a span coloured by its kind (added, removed, hunk header, file header). */
export function diffLines(doc: Document, diff: string): HTMLElement[] {
  return diff.split("\n").map((line, index, lines) => {
    const span = doc.createElement("span");
    const kind = /^(\+\+\+|---) /.test(line) ? "file" : line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "added" : line.startsWith("-") ? "removed" : "";
    if (kind !== "") span.className = `diff-${kind}`;
    span.textContent = index < lines.length - 1 ? `${line}\n` : line;
    return span;
  });
}

/** A tool call waiting for the user: what it would do, "Open diff" for edits, Allow / Allow always / Deny with a reason. */
export function approvalBlock(context: CardContext, card: ApprovalCard): HTMLElement {
  const doc = context.document;
  const block = doc.createElement("section");
  block.className = "approval";
  block.setAttribute("role", "alertdialog");
  block.setAttribute("aria-label", "approval request");
  const title = doc.createElement("div");
  title.className = "approval-title";
  title.textContent = card.title;
  const detail = doc.createElement("pre");
  detail.className = "approval-detail";
  if (card.diffable) detail.append(...diffLines(doc, card.detail));
  else detail.textContent = card.detail;
  block.append(title, detail);
  if (card.diffable) block.append(button(doc, "Open diff", () => context.onOpenDiff(card.toolCallId)));
  const reason = doc.createElement("input");
  reason.type = "text";
  reason.className = "deny-reason";
  reason.setAttribute("aria-label", "Reason for denying (optional)");
  reason.placeholder = "Reason for denying (optional)";
  const bar = doc.createElement("div");
  bar.className = "actions";
  bar.append(
    button(doc, "Allow", () => context.onApproval(card.toolCallId, "allow"), "primary"),
    button(doc, "Allow always", () => context.onApproval(card.toolCallId, "allowAlways")),
    button(doc, "Deny", () => {
      const text = reason.value.trim();
      context.onApproval(card.toolCallId, "deny", text === "" ? undefined : text);
    }),
    reason,
  );
  block.append(bar);
  return block;
}

const RUNNING: Record<string, string> = {
  manual: "Compacting: summarising the conversation…",
  threshold: "Auto-compacting: the context is near the model's window, summarising older messages…",
  overflow: "The context overflowed the model's window: compacting, then retrying…",
};

/** The compaction under way (a live status row), or its failure with the server's message. */
export function compactionRow(doc: Document, status: CompactionStatus): HTMLElement {
  const row = doc.createElement("div");
  row.setAttribute("aria-label", "compaction status");
  if (status.state === "failed") {
    row.className = "compaction-status error";
    row.setAttribute("role", "alert");
    row.textContent = status.error ?? "Compaction failed.";
    return row;
  }
  row.className = "compaction-status";
  row.setAttribute("role", "status");
  row.textContent = status.state === "retrying" ? "Compacted; retrying the request with the summary…" : (RUNNING[status.reason] ?? RUNNING.manual);
  return row;
}

/** What a model failure is, from its message ("429 …", "529 …" as the server words them). */
export function failureTitle(errorMessage: string | undefined): string {
  const text = errorMessage ?? "";
  if (/^429\b|rate.?limit|too many requests/i.test(text)) return "Rate limited";
  if (/^529\b|overloaded/i.test(text)) return "Model overloaded";
  return "Model error";
}

/**
 * A failure's message as a reader wants it: the Anthropic SDK's "429 {JSON error body}" becomes
 * "429 rate_limit_error: the body's message"; anything else is kept as it is.
 */
export function readableError(errorMessage: string): string {
  const match = /^(\d{3}) (\{[\s\S]*\})\s*$/.exec(errorMessage);
  if (!match) return errorMessage;
  try {
    const body = JSON.parse(match[2]) as { error?: { type?: unknown; message?: unknown } };
    const { type, message } = body.error ?? {};
    if (typeof message !== "string" || message === "") return errorMessage;
    return `${match[1]} ${typeof type === "string" ? `${type}: ` : ""}${message}`;
  } catch {
    return errorMessage;
  }
}

/** The retry row's line: what failed, when the next attempt comes and which one it is. */
export function retryLine(retry: RetryStatus): string {
  const count = retry.maxAttempts === undefined ? "" : ` (${retry.attempt}/${retry.maxAttempts})`;
  const when =
    retry.started || retry.delayMs === undefined ? `retrying${count}…` : `retrying in ${Math.max(1, Math.round(retry.delayMs / 1000))} s${count}`;
  return `${failureTitle(retry.errorMessage)} — ${when}`;
}

/** The automatic retry after a failed reply: one status row, the server's message, and Stop. */
export function retryRow(context: CardContext, retry: RetryStatus): HTMLElement {
  const doc = context.document;
  const row = doc.createElement("div");
  row.className = "retry-status";
  row.setAttribute("role", "status");
  row.setAttribute("aria-label", "retry status");
  const line = doc.createElement("span");
  line.className = "retry-line";
  line.textContent = retryLine(retry);
  row.append(line);
  if (retry.errorMessage !== "") {
    const detail = doc.createElement("div");
    detail.className = "retry-detail";
    detail.textContent = readableError(retry.errorMessage);
    row.append(detail);
  }
  row.append(button(doc, "Stop", () => context.onStop()));
  return row;
}

/** How to set an API key (the server has none), and that compaction still works without one. */
export function noticeBlock(doc: Document, notice: ChatNotice, agentDir = "~/.pi/agent"): HTMLElement {
  const block = doc.createElement("section");
  block.className = "notice";
  block.setAttribute("role", "note");
  block.setAttribute("aria-label", "no API key");
  const lines =
    notice === "noApiKey"
      ? [
          "pi has no Anthropic API key, so it cannot answer yet.",
          "Run “pi: Set API Key…”: VS Code keeps the key in its secret storage and hands it to pi-lsp, at once, no restart needed.",
          `Or log in with the pi CLI so that ${agentDir.replace(/[\\/]+$/, "")}/auth.json holds a key, or set ANTHROPIC_API_KEY where VS Code starts pi-lsp (then run “pi: Restart Server”).`,
          "Sessions, the tree and Compact… still work offline: without a key compaction writes its summary locally.",
        ]
      : [];
  for (const line of lines) {
    const paragraph = doc.createElement("p");
    paragraph.textContent = line;
    block.append(paragraph);
  }
  return block;
}
