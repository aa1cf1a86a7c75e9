/** The chat transcript as plain messages: drawn from pi/getBranch, then advanced by pi/event (pure). */
import { toolSummary } from "./toolCards";
import type { AssistantMessage, PiEvent, RunningTool } from "./protocol";

/** `compaction` and `branchSummary` are summary cards: a compaction entry, a `branch_summary` entry. */
export type ChatKind = "user" | "assistant" | "tool" | "compaction" | "branchSummary";

/** A tool call's card: what was called, its output so far, whether it still runs. */
export interface ToolCard {
  callId: string;
  name: string;
  args: Record<string, unknown>;
  output: string;
  running: boolean;
}

/** The reply being streamed and the running tools, as `pi/getRunState` gives them. */
export interface LiveRun {
  partial?: AssistantMessage;
  tools?: RunningTool[];
}

export interface ChatMessage {
  key: string;
  kind: ChatKind;
  /** The message's text; for a tool call, its one-line summary; for a summary card, the summary (markdown). */
  text: string;
  tool?: ToolCard;
  /** How many images a user message carries (pasted or dropped). */
  images?: number;
  /** A reply's thinking, when it has any (drawn as a collapsed block). */
  thinking?: string;
  isError?: boolean;
  /** A compaction card: the context's tokens before it (the compaction entry's tokensBefore). */
  tokensBefore?: number;
  /** A reply that did not end normally: the model failed ("error") or the user stopped it ("aborted"). */
  stopReason?: "error" | "aborted";
  /** Why the reply failed (the server's errorMessage). */
  errorMessage?: string;
  /** A reply retried after errors: how many attempts the one reply shown stands for (2 or more). */
  attempts?: number;
}

/** The automatic retry under way after a failed reply (`auto_retry_start`), drawn as one status row. */
export interface RetryStatus {
  attempt: number;
  maxAttempts?: number;
  delayMs?: number;
  errorMessage: string;
  /** The delay is over and the attempt runs (its `agent_start` came). */
  started?: boolean;
}

/**
 * A compaction the chat shows as a status row: running (between compaction_start and
 * compaction_end), failed (with the server's message), or done and retrying the request (overflow).
 */
export interface CompactionStatus {
  reason: string;
  state: "running" | "failed" | "retrying";
  error?: string;
}

type Json = Record<string, unknown>;

/** The thinking of an assistant message's content (its thinking parts, joined). */
export function contentThinking(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is Json => typeof part === "object" && part !== null && (part as Json).type === "thinking")
    .map((part) => (typeof part.thinking === "string" ? part.thinking : ""))
    .join("\n\n");
}

/** A user message: its text, and the number of its images when it has any. */
function userMessage(key: string, content: unknown): ChatMessage {
  const images = Array.isArray(content)
    ? content.filter((part) => typeof part === "object" && part !== null && (part as Json).type === "image").length
    : 0;
  return { key, kind: "user", text: contentText(content), ...(images > 0 ? { images } : {}) };
}

/** A compaction's card: its summary (markdown) and the tokens it summarised; undefined when malformed. */
export function compactionCard(entryId: unknown, summary: unknown, tokensBefore: unknown): ChatMessage | undefined {
  if (typeof entryId !== "string" || typeof summary !== "string") return undefined;
  return { key: entryId, kind: "compaction", text: summary, ...(typeof tokensBefore === "number" ? { tokensBefore } : {}) };
}

/** A compaction or branch_summary entry as its summary card; undefined for other entries. */
function summaryCard(entry: Json): ChatMessage | undefined {
  if (entry.type === "compaction") return compactionCard(entry.id, entry.summary, entry.tokensBefore);
  if (entry.type !== "branch_summary" || typeof entry.id !== "string" || typeof entry.summary !== "string") return undefined;
  return { key: entry.id, kind: "branchSummary", text: entry.summary };
}

/** The session entry a message is drawn from, once known (keys of messages still streaming hold a ':'). */
export function entryIdOf(message: ChatMessage): string | undefined {
  return message.kind !== "tool" && !message.key.includes(":") ? message.key : undefined;
}

/** The text of a message's content (a string or a list of parts); thinking and tool calls left out. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is Json => typeof part === "object" && part !== null && (part as Json).type === "text")
    .map((part) => (typeof part.text === "string" ? part.text : ""))
    .join("");
}

function toolCalls(content: unknown): Json[] {
  return Array.isArray(content)
    ? content.filter((part): part is Json => typeof part === "object" && part !== null && (part as Json).type === "toolCall")
    : [];
}

/** An assistant message's stopReason and errorMessage, when it did not end normally. */
function endState(message: Json): Pick<ChatMessage, "stopReason" | "errorMessage"> {
  if (message.stopReason !== "error" && message.stopReason !== "aborted") return {};
  return {
    stopReason: message.stopReason,
    ...(typeof message.errorMessage === "string" && message.errorMessage !== "" ? { errorMessage: message.errorMessage } : {}),
  };
}

/** A failed reply that a retry of the same turn replaces (an errored reply with nothing drawn after it). */
function retriedReply(messages: ChatMessage[]): ChatMessage | undefined {
  const last = messages.at(-1);
  return last?.kind === "assistant" && last.stopReason === "error" ? last : undefined;
}

/** The text of the user message a reply answers (what Retry sends again); undefined if not drawn. */
export function promptBefore(messages: readonly ChatMessage[], key: string): string | undefined {
  const at = messages.findIndex((message) => message.key === key);
  for (let index = at - 1; index >= 0; index -= 1) if (messages[index].kind === "user") return messages[index].text;
  return undefined;
}

const asArgs = (args: unknown): Record<string, unknown> =>
  typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};

export class ChatTranscript {
  readonly messages: ChatMessage[] = [];
  private readonly tools = new Map<string, ChatMessage>();
  /** Results whose call lies in an older page not loaded yet (applied when it is prepended). */
  private readonly orphanResults = new Map<string, { output: string; isError: boolean }>();
  private streaming: ChatMessage | undefined;
  /**
   * The one message the last event changed, when it changed nothing else (a streamed delta or a
   * tool's partial output): the view then redraws only that message.
   */
  lastTouched: ChatMessage | undefined;
  private sentUser: ChatMessage | undefined;
  private streamingShown = false;
  /** The failed reply the reply streaming now retries: it takes that reply's place once shown. */
  private retrying: ChatMessage | undefined;

  /**
   * Add a reply; a retry of a failed reply (`replaces`) goes in its place instead, counting the
   * attempts, so a retry sequence shows as one reply live and when drawn again from the branch.
   */
  private place(reply: ChatMessage, replaces: ChatMessage | undefined): void {
    const at = replaces === undefined ? -1 : this.messages.indexOf(replaces);
    if (at < 0 || replaces === undefined) {
      this.messages.push(reply);
      return;
    }
    reply.attempts = (replaces.attempts ?? 1) + 1;
    this.messages[at] = reply;
  }

  /** A retry that succeeded with nothing to draw (only tool calls): the failed reply it retried goes. */
  private dropRetried(replaces: ChatMessage | undefined): void {
    const at = replaces === undefined ? -1 : this.messages.indexOf(replaces);
    if (at >= 0) this.messages.splice(at, 1);
  }

  /** Redraw from the branch's entries (root first), as after a reload. */
  static fromBranch(entries: Json[]): ChatTranscript {
    const transcript = new ChatTranscript();
    for (const entry of entries) {
      if (entry.type === "compaction" || entry.type === "branch_summary") {
        const card = summaryCard(entry);
        if (card) transcript.messages.push(card);
        continue;
      }
      if (entry.type !== "message") continue;
      const message = entry.message as Json;
      const id = String(entry.id);
      if (message.role === "user") transcript.messages.push(userMessage(id, message.content));
      else if (message.role === "assistant") {
        const text = contentText(message.content);
        const thinking = contentThinking(message.content);
        const ended = endState(message);
        if (text !== "" || thinking !== "" || ended.stopReason !== undefined)
          transcript.place({ key: id, kind: "assistant", text, ...(thinking !== "" ? { thinking } : {}), ...ended }, retriedReply(transcript.messages));
        else transcript.dropRetried(retriedReply(transcript.messages));
        for (const call of toolCalls(message.content)) transcript.addTool(String(call.id), String(call.name), call.arguments);
      } else if (message.role === "toolResult") {
        const callId = String(message.toolCallId);
        const output = contentText(message.content);
        if (transcript.tools.has(callId)) transcript.finishTool(callId, output, message.isError === true, false);
        else transcript.orphanResults.set(callId, { output, isError: message.isError === true });
      }
    }
    return transcript;
  }

  /** Older entries of the branch (a page loaded on scrolling up) go before what is shown. */
  prepend(entries: Json[]): void {
    const older = ChatTranscript.fromBranch(entries);
    for (const [callId, card] of older.tools) {
      if (this.tools.has(callId)) continue;
      this.tools.set(callId, card);
      const result = this.orphanResults.get(callId);
      if (result) {
        this.finishTool(callId, result.output, result.isError, false);
        this.orphanResults.delete(callId);
      }
    }
    for (const [callId, result] of older.orphanResults) this.orphanResults.set(callId, result);
    this.messages.unshift(...older.messages);
  }

  /** A run in progress (`pi/getRunState`): its partial reply keeps streaming, its tools keep running. */
  resume(live: LiveRun): void {
    const partial = live.partial;
    if (partial && partial.role === "assistant") {
      const thinking = contentThinking(partial.content);
      this.streaming = { key: `assistant:${this.messages.length}`, kind: "assistant", text: contentText(partial.content) };
      if (thinking !== "") this.streaming.thinking = thinking;
      this.streamingShown = false;
      this.retrying = retriedReply(this.messages);
      if (this.streaming.text !== "" || thinking !== "") this.show(this.streaming);
    }
    for (const tool of live.tools ?? []) {
      this.addTool(tool.toolCallId, tool.toolName, tool.args, true);
      if (tool.partialResult) this.finishTool(tool.toolCallId, contentText(tool.partialResult.content), false, true);
    }
  }

  private addTool(callId: string, name: string, args: unknown, running = false): void {
    const existing = this.tools.get(callId);
    if (existing?.tool) {
      existing.tool.running = running || existing.tool.running;
      return;
    }
    const card: ChatMessage = {
      key: `tool:${callId}`,
      kind: "tool",
      text: toolSummary(name, asArgs(args)),
      tool: { callId, name, args: asArgs(args), output: "", running },
    };
    this.tools.set(callId, card);
    this.messages.push(card);
  }

  private finishTool(callId: string, output: string, isError: boolean, running: boolean): void {
    const card = this.tools.get(callId);
    if (!card?.tool) return;
    card.tool.output = output;
    card.tool.running = running;
    if (isError) card.isError = true;
    else delete card.isError;
  }

  /** The card of a tool call, if shown (for "Open diff"). */
  toolCard(callId: string): ToolCard | undefined {
    return this.tools.get(callId)?.tool;
  }

  /** A message finished streaming under an entry id already shown (a redraw raced the run): keep one. */
  private settle(message: ChatMessage, entryId: string): void {
    const duplicate = this.messages.findIndex((other) => other !== message && other.key === entryId);
    if (duplicate >= 0) {
      const at = this.messages.indexOf(message);
      if (at >= 0) this.messages.splice(at, 1);
      return;
    }
    message.key = entryId;
  }

  /** A streamed reply becomes an article once it has something to show. */
  private show(reply: ChatMessage): void {
    if (this.streamingShown) return;
    this.streamingShown = true;
    this.place(reply, this.retrying);
    this.retrying = undefined;
  }

  /** Apply one pi/event; returns whether anything visible changed. */
  apply(event: PiEvent): boolean {
    this.lastTouched = undefined;
    switch (event.type) {
      case "message_start": {
        const message = event.message;
        if (message.role === "user") {
          this.sentUser = userMessage(`user:${this.messages.length}`, message.content);
          this.messages.push(this.sentUser);
          return true;
        }
        if (message.role === "assistant") {
          // A reply is an article from its first delta on; created here, shown once it has text.
          this.streaming = { key: `assistant:${this.messages.length}`, kind: "assistant", text: "" };
          this.streamingShown = false;
          this.retrying = retriedReply(this.messages);
          return false;
        }
        return false;
      }
      case "message_update": {
        const update = event.assistantMessageEvent;
        if (!this.streaming || (update?.type !== "text_delta" && update?.type !== "thinking_delta")) return false;
        const delta = typeof update.delta === "string" ? update.delta : "";
        if (update.type === "text_delta") this.streaming.text += delta;
        else this.streaming.thinking = (this.streaming.thinking ?? "") + delta;
        this.show(this.streaming);
        this.lastTouched = this.streaming;
        return true;
      }
      case "message_end": {
        const message = event.message;
        if (message.role === "user" && this.sentUser && typeof event.entryId === "string") {
          this.settle(this.sentUser, event.entryId);
          this.sentUser = undefined;
          return true;
        }
        if (message.role !== "assistant" || !this.streaming) return false;
        const final = contentText(message.content);
        const thinking = contentThinking(message.content);
        this.streaming.text = final;
        if (thinking !== "") this.streaming.thinking = thinking;
        else delete this.streaming.thinking;
        Object.assign(this.streaming, endState(message));
        if (final !== "" || thinking !== "" || this.streaming.stopReason !== undefined) this.show(this.streaming);
        else this.dropRetried(this.retrying);
        this.retrying = undefined;
        if (typeof event.entryId === "string") this.settle(this.streaming, event.entryId);
        this.streaming = undefined;
        return true;
      }
      case "tool_execution_start":
        this.addTool(event.toolCallId, event.toolName, event.args, true);
        return true;
      case "tool_execution_update":
        this.finishTool(event.toolCallId, contentText(event.partialResult.content), false, true);
        this.lastTouched = this.tools.get(event.toolCallId);
        return true;
      case "compaction_end": {
        // A compaction written during a run: its card goes where it happened (once, by entry id).
        const card = compactionCard(event.result?.entryId, event.result?.summary, event.result?.tokensBefore);
        if (!card || this.messages.some((message) => message.key === card.key)) return false;
        this.messages.push(card);
        return true;
      }
      case "tool_execution_end":
        this.finishTool(event.toolCallId, contentText(event.result.content), event.isError, false);
        return true;
      default:
        return false;
    }
  }
}
