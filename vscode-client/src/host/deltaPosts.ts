/**
 * The posts of streamed changes to the chat webview. A reply's text (or thinking) that grew is
 * posted at once as the characters added (`append`): a few dozen bytes, painted on the webview's
 * next frame. Any other one-message change (a tool's partial output, a reply's first text) posts
 * that message, at most once a frame: the first change after a quiet frame at once, the ones that
 * follow within the frame gathered into one post at its end. Changes to two messages within a
 * frame post the whole state.
 */
import type { ChatMessage } from "../shared/chatModel";
import type { HostToWebview } from "../shared/chatProtocol";

/** About one frame: tool output comes faster than the webview can paint it. */
export const DELTA_POST_MS = 16;

export interface DeltaSink {
  /** Post a message to the webview. */
  post(message: HostToWebview): void;
  /** Post the whole state. */
  all(): void;
}

/** What the webview was last sent of the one streamed reply: its object and the text it has. */
interface Shown {
  message: ChatMessage;
  text: string;
  thinking: string;
}

export class DeltaPosts {
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** What the gathered changes touched: one message, or more ("all": the whole state is posted). */
  private gathered: ChatMessage | "all" | undefined;
  private lastPost = -Infinity;
  private shown: Shown | undefined;

  constructor(
    private readonly sink: DeltaSink,
    private readonly frameMs = DELTA_POST_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A change to `message` alone (it is mutated in place while it streams). */
  gather(message: ChatMessage): void {
    const shown = this.shown;
    if (shown?.message === message && this.grewOnly(shown)) {
      this.flush(); // what was gathered goes first: the webview sees changes in order
      this.append(shown, "text");
      this.append(shown, "thinking");
      return;
    }
    this.gathered = this.gathered === undefined || this.gathered === message ? message : "all";
    if (this.timer !== undefined) return;
    const wait = this.lastPost + this.frameMs - this.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  /** Posts what is gathered now: before any other post, so the webview sees changes in order. */
  flush(): void {
    this.cancelTimer();
    const gathered = this.gathered;
    this.gathered = undefined;
    if (gathered === undefined) return;
    this.lastPost = this.now();
    if (gathered === "all") return this.sink.all();
    this.sink.post({ type: "message", message: gathered });
    this.shown = gathered.kind === "assistant" ? { message: gathered, text: gathered.text, thinking: gathered.thinking ?? "" } : undefined;
  }

  /** Forgets what is gathered: the whole state is being posted, and it carries those changes. */
  drop(): void {
    this.cancelTimer();
    this.gathered = undefined;
    this.shown = undefined;
  }

  /** Whether the shown reply changed only by text added at the end of its text or thinking. */
  private grewOnly(shown: Shown): boolean {
    const { message } = shown;
    return message.kind === "assistant" && message.text.startsWith(shown.text) && (message.thinking ?? "").startsWith(shown.thinking);
  }

  private append(shown: Shown, field: "text" | "thinking"): void {
    const now = shown.message[field] ?? "";
    if (now.length === shown[field].length) return;
    this.sink.post({ type: "append", key: shown.message.key, field, from: shown[field].length, delta: now.slice(shown[field].length) });
    shown[field] = now;
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
