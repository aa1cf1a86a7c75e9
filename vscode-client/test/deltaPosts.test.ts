/**
 * The host's posts of a streamed reply (DeltaPosts, fed by ChatTranscript from pi events) reaching the
 * real webview (jsdom): text deltas cross as the characters added, at once, and draw the same reply.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import { DeltaPosts } from "../src/host/deltaPosts";
import { ChatTranscript, type ChatMessage } from "../src/shared/chatModel";
import type { HostToWebview } from "../src/shared/chatProtocol";
import type { PiEvent } from "../src/shared/protocol";
import { startChat } from "../src/webview/chatApp";

const textDelta = (delta: string): PiEvent => ({ type: "message_update", assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta } });
const thinkingDelta = (delta: string): PiEvent => ({ type: "message_update", assistantMessageEvent: { type: "thinking_delta", contentIndex: 0, delta } });

function host(frameMs = 16) {
  const transcript = new ChatTranscript();
  const posted: HostToWebview[] = [];
  const post = () =>
    posted.push({ type: "state", state: { messages: transcript.messages, queue: { steering: [], followUp: [] }, running: true, hasMore: false, approvals: [] } });
  const deltas = new DeltaPosts({ post: (message) => posted.push(structuredClone(message)), all: post }, frameMs);
  const apply = (event: PiEvent) => {
    if (!transcript.apply(event)) return;
    const only = transcript.lastTouched;
    if (only) deltas.gather(only);
    else {
      deltas.drop();
      post();
    }
  };
  return { transcript, posted, apply, deltas };
}

test("a streamed reply's deltas are posted at once as the text they add, and the webview draws the whole reply", () => {
  const { posted, apply } = host();
  apply({ type: "message_start", message: { role: "user", content: "go" } });
  apply({ type: "message_start", message: { role: "assistant", content: [] } });
  const parts = ["Hello", ", **wor", "ld**\n\n```ts\nconst a", " = 1;\n```\n\n- one", "\n- two"];
  apply(thinkingDelta("Let me"));
  apply(thinkingDelta(" think."));
  for (const part of parts) apply(textDelta(part));
  // The first post of the reply carries it whole; every later delta, only what it adds, with no wait.
  const appends = posted.filter((p) => p.type === "append");
  assert.deepEqual(
    appends.map((p) => [p.field, p.from, p.delta]),
    [["thinking", 6, " think."], ...parts.map((part, i) => ["text", parts.slice(0, i).join("").length, part])],
  );

  const dom = new JSDOM("<!DOCTYPE html><body></body>");
  const app = startChat(dom.window.document, dom.window as unknown as Window, { postMessage: () => undefined, getState: () => undefined, setState: () => undefined });
  for (const message of posted) app.receive(message);
  const reply = dom.window.document.querySelector("article[aria-label='assistant message']");
  const whole = new JSDOM("<!DOCTYPE html><body></body>");
  const reference = startChat(whole.window.document, whole.window as unknown as Window, { postMessage: () => undefined, getState: () => undefined, setState: () => undefined });
  reference.receive({ type: "message", message: { key: "assistant:1", kind: "assistant", text: parts.join(""), thinking: "Let me think." } });
  assert.equal(reply?.innerHTML, whole.window.document.querySelector("article[aria-label='assistant message']")?.innerHTML);
  assert.match(reply?.textContent ?? "", /Let me think\./);
});

test("other one-message changes post at most once a frame: the first at once, the rest at the frame's end", async () => {
  const posted: HostToWebview[] = [];
  let all = 0;
  let clock = 0; // the frame's clock stands still unless moved: nothing here depends on the machine's speed
  const deltas = new DeltaPosts({ post: (message) => posted.push(structuredClone(message)), all: () => (all += 1) }, 30, () => clock);
  const tool: ChatMessage = { key: "tool:1", kind: "tool", text: "bash ls", tool: { callId: "c1", name: "bash", args: {}, output: "a", running: true } };
  deltas.gather(tool);
  assert.equal(posted.length, 1, "the first change is posted at once");
  clock = 5;
  tool.tool!.output = "a\nb";
  deltas.gather(tool);
  tool.tool!.output = "a\nb\nc";
  deltas.gather(tool);
  assert.equal(posted.length, 1, "changes within the frame wait for its end");
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(posted.length, 2);
  assert.deepEqual(posted[1], { type: "message", message: tool });

  // Two messages changed within one frame: the whole state; flush() posts what waits at once.
  tool.tool!.output = "a\nb\nc\nd";
  deltas.gather(tool);
  assert.equal(posted.length, 2, "still the frame of the last post");
  deltas.gather({ key: "tool:2", kind: "tool", text: "bash pwd" });
  deltas.flush();
  assert.equal(all, 1);
  deltas.drop();
});
