/** The messages between the chat view's host code and its webview (types only). */
import type { ApprovalCard } from "./approvalModel";
import type { ChatMessage, CompactionStatus, RetryStatus } from "./chatModel";
import type { MessageAction } from "./messageActions";
import type { VersionPlace } from "./messageVersions";
import type { RestoreNotice } from "./rewindModel";

export interface QueueView {
  steering: string[];
  followUp: string[];
}

/** Why the chat shows a notice above the prompt box. */
export type ChatNotice = "noApiKey";

/** Everything the webview draws, posted whole after each change. */
export interface ChatViewState {
  messages: ChatMessage[];
  queue: QueueView;
  running: boolean;
  hasMore: boolean;
  approvals: ApprovalCard[];
  notice?: ChatNotice;
  /** The server's agent dir (where pi's auth.json lives), for the no-key notice. */
  agentDir?: string;
  /** A compaction running, failed, or retrying the request after it: the status row. */
  compaction?: CompactionStatus;
  /** The automatic retry after a failed reply: the status row, with Stop. */
  retry?: RetryStatus;
  /** Entry ids of the messages that have a workspace state (they offer Rewind code to here). */
  rewindable?: string[];
  /** What the last restore did, with Undo restore. */
  restore?: RestoreNotice;
  /** User messages (by entry id) that were edited and resent: where each stands among its versions (‹ 1/2 ›). */
  versions?: Record<string, VersionPlace>;
}

export interface ModelChoice {
  id: string;
  name: string;
  reasoning: boolean;
  /** Opus, Sonnet, Haiku…: the picker groups models by it. */
  family?: string;
}

export type HostToWebview =
  | { type: "state"; state: ChatViewState }
  /** One message changed (a streamed delta, a tool's output): replaced by key, or appended when new. */
  | { type: "message"; message: ChatMessage }
  /**
   * A streamed reply's text (or thinking) grew: `delta` is added at `from` (the length the webview
   * has); a post that does not start where the webview's text ends is ignored (the next whole post
   * draws the message again). A few dozen bytes a delta instead of the whole reply.
   */
  | { type: "append"; key: string; field: "text" | "thinking"; from: number; delta: string }
  | { type: "status"; status: string }
  | { type: "draft"; text: string; images?: PromptImage[] }
  | { type: "reveal"; entryId: string }
  | { type: "models"; models: ModelChoice[]; modelId: string; thinkingLevel: string }
  | { type: "completions"; kind: "mention" | "command"; query: string; items: { value: string; detail: string }[] }
  /** The prompt box takes the keyboard focus (pi: Focus Chat Prompt). */
  | { type: "focusPrompt" };

export type SendMode = "steer" | "followUp";

/** An image pasted or dropped into the prompt box, as `pi/prompt` takes it (base64, no data: prefix). */
export interface PromptImage {
  data: string;
  mimeType: string;
}

export type WebviewToHost =
  | { type: "ready" }
  | { type: "send"; text: string; mode: SendMode; images?: PromptImage[] }
  | { type: "stop" }
  /** Retry on a failed reply: its user message's text is sent again as a new prompt. */
  | { type: "retry"; key: string }
  | { type: "restoreQueue" }
  | { type: "loadOlder" }
  | { type: "approval"; toolCallId: string; decision: "allow" | "allowAlways" | "deny"; reason?: string }
  | { type: "openDiff"; toolCallId: string }
  | { type: "complete"; kind: "mention" | "command"; query: string }
  | { type: "setModel"; modelId?: string; thinkingLevel?: string }
  /** A message action; for editAndResend `text` is the edited text (typed in place in the chat). */
  | { type: "action"; action: MessageAction; entryId: string; text: string }
  /** ‹ or › on a resent message: show its previous (-1) or next (1) version. */
  | { type: "version"; entryId: string; step: -1 | 1 }
  | { type: "undoRestore"; undoId: string }
  /** A hunk of an approval under review accepted or rejected from the card's checkbox. */
  | { type: "hunk"; toolCallId: string; index: number; accepted: boolean }
  /** A code block's Copy / Insert at cursor / Save as new file. */
  | { type: "codeAction"; action: "copy" | "insert" | "newFile"; code: string; language: string };

/** pi's thinking levels, from the protocol source (generated `protocol.ts`). */
export { THINKING_LEVELS } from "./protocol";
