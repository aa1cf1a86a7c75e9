/**
 * A loopback fake of the Anthropic Messages API for tests against the real server: each POST
 * /v1/messages streams a text reply as server-sent events, pausing after its first delta until
 * the test releases it, so a test can look at a run in the middle. `failures` makes the first
 * requests fail with those HTTP statuses (429, 529, 500 …) and an Anthropic error body instead.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

const frame = (event: string, data: object): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export class FakeModel {
  private readonly server: http.Server;
  requests = 0;
  private release: (() => void) | undefined;
  private paused: (() => void) | undefined;
  /** Resolves when a reply has sent its first delta and waits. */
  readonly pausedOnce: Promise<void>;

  constructor(
    private readonly pieces: [string, string],
    private readonly options: { failures?: number[]; pause?: boolean } = {},
  ) {
    this.pausedOnce = new Promise((resolve) => (this.paused = resolve));
    this.server = http.createServer((request, response) => {
      request.resume();
      request.on("end", () => void this.answer(response));
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Let the paused reply finish. */
  finish(): void {
    this.release?.();
  }

  close(): void {
    this.release?.();
    this.server.closeAllConnections();
    this.server.close();
  }

  private async answer(response: http.ServerResponse): Promise<void> {
    this.requests += 1;
    const failure = this.options.failures?.[this.requests - 1];
    if (failure !== undefined) {
      const type = failure === 429 ? "rate_limit_error" : failure === 529 ? "overloaded_error" : "api_error";
      response.writeHead(failure, { "content-type": "application/json" });
      response.end(JSON.stringify({ type: "error", error: { type, message: `fake ${failure}` } }));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const [first, rest] = this.pieces;
    const delta = (text: string): string =>
      frame("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
    response.write(
      frame("message_start", {
        type: "message_start",
        message: { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
      }) +
        frame("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
        delta(first),
    );
    if (this.options.pause !== false)
      await new Promise<void>((resolve) => {
        this.release = resolve;
        this.paused?.();
      });
    response.end(
      delta(rest) +
        frame("content_block_stop", { type: "content_block_stop", index: 0 }) +
        frame("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } }) +
        frame("message_stop", { type: "message_stop" }),
    );
  }
}
