/**
 * The chat as a view of server state (pure: the requester is passed in). `load` draws the last page
 * of the branch (`pi/getBranch` with `limit`) and the run in progress (`pi/getRunState`: partial
 * reply, running tools, queue); `pi/event`s are then applied in `seq` order, those the run state
 * already holds skipped. Events arriving while a load is in flight wait for it. A compaction's
 * status row follows `compaction_start` / `compaction_end` (from `pi/event` during a run, and from
 * `pi/compactionStarted` / `pi/compactionEnded` for every compaction) and the run state's `compaction`.
 * An automatic retry after a failed reply is a status row from `auto_retry_start` to `auto_retry_end`;
 * a chat loaded during one (a run going on whose last reply failed) shows it without the delay.
 */
import { ChatTranscript, type ChatMessage, type CompactionStatus, type LiveRun, type RetryStatus } from "../shared/chatModel";
import type { Requester } from "../shared/messageActions";
import { Methods, type CompactionEnded, type CompactionEndEvent, type CompactionStarted, type CompactionStartEvent, type PiEvent } from "../shared/protocol";
import { CheckpointMarks } from "../shared/rewindModel";

type Json = Record<string, unknown>;

export interface QueueState {
  steering: string[];
  followUp: string[];
}

export interface RunState extends LiveRun {
  running: boolean;
  seq: number;
  queue?: QueueState;
  /** A compaction running now (pi-lsp's own field). */
  compaction?: { reason?: string };
}

interface BranchPage {
  entries: Json[];
  hasMore?: boolean;
}

/** Entries drawn at first and per "load older" step. */
export const PAGE_SIZE = 100;

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];

export class ChatSync {
  transcript = new ChatTranscript();
  queue: QueueState = { steering: [], followUp: [] };
  running = false;
  /** Older entries exist before the first one drawn. */
  hasMore = false;
  /** The compaction shown as a status row: running, failed, or retrying the request after it. */
  compaction: CompactionStatus | undefined;
  /** The automatic retry under way after a failed reply: the status row. */
  retry: RetryStatus | undefined;
  /** The messages that have a workspace state (Rewind code to here). */
  checkpoints = new CheckpointMarks();
  private firstEntryId: string | undefined;
  private seq = 0;
  private generation = 0;
  /** Events and compaction notices (seq undefined) that came while a load was in flight. */
  private waiting: [number | undefined, PiEvent][] | undefined;

  constructor(
    private readonly request: Requester,
    private readonly pageSize = PAGE_SIZE,
  ) {}

  /** Forget everything (no session open). */
  clear(): void {
    this.generation += 1;
    this.waiting = undefined;
    this.transcript = new ChatTranscript();
    this.queue = { steering: [], followUp: [] };
    this.running = false;
    this.hasMore = false;
    this.compaction = undefined;
    this.retry = undefined;
    this.checkpoints = new CheckpointMarks();
    this.firstEntryId = undefined;
    this.seq = 0;
  }

  /** Redraw from the server: run state first, then the branch's last page, then the events that came meanwhile. */
  async load(): Promise<void> {
    const generation = ++this.generation;
    const waiting: [number | undefined, PiEvent][] = [];
    this.waiting = waiting;
    try {
      const state = await this.request<RunState>(Methods.getRunState, {});
      const page = await this.request<BranchPage>(Methods.getBranch, { limit: this.pageSize });
      if (generation !== this.generation) return;
      const transcript = ChatTranscript.fromBranch(page.entries);
      if (state.running) transcript.resume(state);
      this.transcript = transcript;
      this.checkpoints = CheckpointMarks.fromBranch(page.entries);
      this.queue = { steering: strings(state.queue?.steering), followUp: strings(state.queue?.followUp) };
      this.running = state.running;
      this.hasMore = page.hasMore === true;
      this.firstEntryId = typeof page.entries[0]?.id === "string" ? page.entries[0].id : undefined;
      this.seq = state.seq;
      // A running compaction is server state; a failure (or a retry after one) is only what was seen.
      if (state.compaction) this.compaction = { reason: String(state.compaction.reason ?? "manual"), state: "running" };
      else if (this.compaction?.state === "running") this.compaction = undefined;
      this.retry = state.running && !state.partial ? this.retryAfter(transcript.messages.at(-1)) : undefined;
      this.waiting = undefined;
      for (const [seq, event] of waiting) this.applyEvent(seq, event);
    } finally {
      if (generation === this.generation) this.waiting = undefined;
    }
  }

  /** Load the page before the first entry drawn; returns whether anything was added. */
  async loadOlder(): Promise<boolean> {
    const beforeId = this.firstEntryId;
    if (!this.hasMore || beforeId === undefined) return false;
    const generation = this.generation;
    const page = await this.request<BranchPage>(Methods.getBranch, { beforeId, limit: this.pageSize });
    if (generation !== this.generation || beforeId !== this.firstEntryId) return false;
    this.transcript.prepend(page.entries);
    this.checkpoints.prepend(page.entries);
    this.hasMore = page.hasMore === true;
    if (typeof page.entries[0]?.id === "string") this.firstEntryId = page.entries[0].id;
    return page.entries.length > 0;
  }

  /** The one message the last applied event changed, when that was all it changed. */
  get touchedOnly(): ChatMessage | undefined {
    return this.transcript.lastTouched;
  }

  /** One `pi/event` of the open session; returns whether anything visible changed. */
  onEvent(seq: number, event: PiEvent): boolean {
    if (this.waiting) {
      this.waiting.push([seq, event]);
      return false;
    }
    return this.applyEvent(seq, event);
  }

  /**
   * `pi/compactionStarted` / `pi/compactionEnded` (sent for every compaction, manual or automatic,
   * without a seq): applied as the `compaction_start` / `compaction_end` event they mirror.
   */
  onCompactionNotice(started: boolean, params: CompactionStarted | CompactionEnded): boolean {
    const event: CompactionStartEvent | CompactionEndEvent =
      started || !("aborted" in params) ? { type: "compaction_start", reason: params.reason } : compactionEnd(params);
    if (this.waiting) {
      this.waiting.push([undefined, event]);
      return false;
    }
    return this.applyEvent(undefined, event);
  }

  /** The status row after a compaction_start / compaction_end. */
  private noteCompaction(event: CompactionStartEvent | CompactionEndEvent): void {
    const reason = event.reason;
    if (event.type === "compaction_start") this.compaction = { reason, state: "running" };
    else if (typeof event.errorMessage === "string") this.compaction = { reason, state: "failed", error: event.errorMessage };
    else if (event.willRetry && !event.aborted) this.compaction = { reason, state: "retrying" };
    else this.compaction = undefined;
  }

  /** A run going on after a failed reply is retrying it (the row seen live, else one without the delay). */
  private retryAfter(last: ChatMessage | undefined): RetryStatus | undefined {
    if (last?.kind !== "assistant" || last.stopReason !== "error") return undefined;
    return this.retry ?? { attempt: last.attempts ?? 1, errorMessage: last.errorMessage ?? "" };
  }

  private applyEvent(seq: number | undefined, event: PiEvent): boolean {
    this.transcript.lastTouched = undefined;
    if (seq !== undefined) {
      if (seq <= this.seq) return false;
      this.seq = seq;
    }
    // The request is retried after an overflow's compaction, and a new run starts afresh.
    if (this.compaction?.state === "retrying" && (event.type === "message_start" || event.type === "agent_end")) this.compaction = undefined;
    if (event.type === "message_start" && event.message.role === "user") this.retry = undefined;
    this.checkpoints.onEvent(event);
    switch (event.type) {
      case "compaction_start":
        this.noteCompaction(event);
        return true;
      case "compaction_end":
        this.noteCompaction(event);
        this.transcript.apply(event);
        return true;
      case "queue_update":
        this.queue = { steering: strings(event.steering), followUp: strings(event.followUp) };
        return true;
      case "auto_retry_start":
        // pi sends it after the failed attempt's agent_end: the run goes on through the delay.
        this.running = true;
        this.retry = {
          attempt: typeof event.attempt === "number" ? event.attempt : 1,
          ...(typeof event.maxAttempts === "number" ? { maxAttempts: event.maxAttempts } : {}),
          ...(typeof event.delayMs === "number" ? { delayMs: event.delayMs } : {}),
          errorMessage: typeof event.errorMessage === "string" ? event.errorMessage : "",
        };
        return true;
      case "auto_retry_end":
        this.retry = undefined;
        return true;
      case "agent_start":
        this.running = true;
        if (this.retry) this.retry = { ...this.retry, started: true };
        if (this.compaction?.state !== "running") this.compaction = undefined;
        return true;
      case "agent_end":
        this.running = false;
        return true;
      default:
        return this.transcript.apply(event);
    }
  }
}

/** `pi/compactionEnded` as the `compaction_end` event it mirrors (`error` is the event's `errorMessage`). */
function compactionEnd(params: CompactionEnded): CompactionEndEvent {
  const event: CompactionEndEvent = { type: "compaction_end", reason: params.reason, aborted: params.aborted, willRetry: params.willRetry };
  if (params.result) event.result = params.result;
  if (params.error !== undefined) event.errorMessage = params.error;
  return event;
}
