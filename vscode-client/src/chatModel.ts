/** The chat transcript as plain messages: drawn from pi/getBranch, then advanced by pi/event (pure). */

export type ChatKind = "user" | "assistant" | "tool";

export interface ChatMessage {
  key: string;
  kind: ChatKind;
  text: string;
  toolName?: string;
  /** A reply's thinking, when it has any (drawn as a collapsed block). */
  thinking?: string;
  isError?: boolean;
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

function describeCall(name: string, args: unknown): string {
  return `${name} ${JSON.stringify(args ?? {})}`;
}

export class ChatTranscript {
  readonly messages: ChatMessage[] = [];
  private readonly tools = new Map<string, ChatMessage>();
  private streaming: ChatMessage | undefined;
  private sentUser: ChatMessage | undefined;
  private streamingShown = false;

  /** Redraw from the branch's entries (root first), as after a reload. */
  static fromBranch(entries: Json[]): ChatTranscript {
    const transcript = new ChatTranscript();
    for (const entry of entries) {
      if (entry.type !== "message") continue;
      const message = entry.message as Json;
      const id = String(entry.id);
      if (message.role === "user") transcript.messages.push({ key: id, kind: "user", text: contentText(message.content) });
      else if (message.role === "assistant") {
        const text = contentText(message.content);
        const thinking = contentThinking(message.content);
        if (text !== "" || thinking !== "")
          transcript.messages.push({ key: id, kind: "assistant", text, ...(thinking !== "" ? { thinking } : {}) });
        for (const call of toolCalls(message.content)) transcript.addTool(String(call.id), String(call.name), call.arguments);
      } else if (message.role === "toolResult") {
        transcript.finishTool(String(message.toolCallId), contentText(message.content), message.isError === true);
      }
    }
    return transcript;
  }

  private addTool(callId: string, name: string, args: unknown): void {
    if (this.tools.has(callId)) return;
    const card: ChatMessage = { key: `tool:${callId}`, kind: "tool", toolName: name, text: describeCall(name, args) };
    this.tools.set(callId, card);
    this.messages.push(card);
  }

  private finishTool(callId: string, output: string, isError: boolean): void {
    const card = this.tools.get(callId);
    if (!card) return;
    card.text = `${card.text.split("\n")[0]}\n${output}`;
    card.isError = isError;
  }

  /** A streamed reply becomes an article once it has something to show. */
  private show(reply: ChatMessage): void {
    if (this.streamingShown) return;
    this.streamingShown = true;
    this.messages.push(reply);
  }

  /** Apply one pi/event; returns whether anything visible changed. */
  apply(event: Json): boolean {
    switch (event.type) {
      case "message_start": {
        const message = event.message as Json;
        if (message.role === "user") {
          this.sentUser = { key: `user:${this.messages.length}`, kind: "user", text: contentText(message.content) };
          this.messages.push(this.sentUser);
          return true;
        }
        if (message.role === "assistant") {
          // A reply is an article from its first delta on; created here, shown once it has text.
          this.streaming = { key: `assistant:${this.messages.length}`, kind: "assistant", text: "" };
          this.streamingShown = false;
          return false;
        }
        return false;
      }
      case "message_update": {
        const update = event.assistantMessageEvent as Json | undefined;
        if (!this.streaming || (update?.type !== "text_delta" && update?.type !== "thinking_delta")) return false;
        const delta = typeof update.delta === "string" ? update.delta : "";
        if (update.type === "text_delta") this.streaming.text += delta;
        else this.streaming.thinking = (this.streaming.thinking ?? "") + delta;
        this.show(this.streaming);
        return true;
      }
      case "message_end": {
        const message = event.message as Json;
        if (message.role === "user" && this.sentUser && typeof event.entryId === "string") {
          this.sentUser.key = event.entryId;
          this.sentUser = undefined;
          return true;
        }
        if (message.role !== "assistant" || !this.streaming) return false;
        const final = contentText(message.content);
        const thinking = contentThinking(message.content);
        this.streaming.text = final;
        if (thinking !== "") this.streaming.thinking = thinking;
        else delete this.streaming.thinking;
        if (final !== "" || thinking !== "") this.show(this.streaming);
        if (typeof event.entryId === "string") this.streaming.key = event.entryId;
        this.streaming = undefined;
        return true;
      }
      case "tool_execution_start":
        this.addTool(String(event.toolCallId), String(event.toolName), event.args);
        return true;
      case "tool_execution_update":
        this.finishTool(String(event.toolCallId), contentText((event.partialResult as Json | undefined)?.content), false);
        return true;
      case "tool_execution_end":
        this.finishTool(String(event.toolCallId), contentText((event.result as Json | undefined)?.content), event.isError === true);
        return true;
      default:
        return false;
    }
  }
}
