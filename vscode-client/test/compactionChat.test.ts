/**
 * Compaction in the chat against the real pi-lsp (PI_LSP_COMMAND), offline (no API key: the
 * server's offline summariser): the status row while `pi/compact` runs, then the compaction's
 * card where it lies in the branch, drawn again by a chat opened later; a branch summary likewise.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import type { CompactionStatus } from "../src/shared/chatModel";
import { ChatSync } from "../src/host/chatSync";
import { assistantEntry, needsServer, say, startServer, type RealServer } from "./realServer";
import type { CompactionEnded, CompactionStarted } from "../src/shared/protocol";

/** A user question and the assistant's answer (whose usage says `total` tokens); the question's id. */
async function turn(server: RealServer, question: string, answer: string, total: number): Promise<string> {
  const id = await say(server, question);
  await server.request("pi/appendEntry", { entry: assistantEntry([{ type: "text", text: answer }], total) });
  return id;
}

test("pi/compact offline: a status row while it runs, then its card, drawn again by a chat opened later", { skip: needsServer, timeout: 60_000 }, async () => {
  const server = await startServer({ tokenizer: "estimate", compaction: { keepRecentTokens: 60 } });
  const chat = new ChatSync(server.request);
  const seen: (CompactionStatus | undefined)[] = [];
  server.connection.onNotification("pi/compactionStarted", (params: CompactionStarted) => {
    chat.onCompactionNotice(true, params);
    seen.push(chat.compaction);
  });
  server.connection.onNotification("pi/compactionEnded", (params: CompactionEnded) => {
    chat.onCompactionNotice(false, params);
    seen.push(chat.compaction);
  });
  try {
    await server.request("pi/newSession", { cwd: server.home, sessionDir: path.join(server.home, "sessions") });
    for (let n = 0; n < 3; n += 1) await turn(server, `question ${n}: ${"word ".repeat(150)}`, `answer ${n}`, 1000 + n);
    await chat.load();
    const result = await server.request<{ entryId: string; summary: string; tokensBefore: number; summarizer: string }>("pi/compact", {});
    assert.equal(result.summarizer, "offline");
    // Both notices come before the response: running, then gone (it succeeded).
    assert.deepEqual(seen, [{ reason: "manual", state: "running" }, undefined]);
    const card = chat.transcript.messages.at(-1);
    assert.deepEqual(card, { key: result.entryId, kind: "compaction", text: result.summary, tokensBefore: result.tokensBefore });

    // A chat opened now (a reload) draws the card from pi/getBranch, after the messages before it.
    const reopened = new ChatSync(server.request);
    await reopened.load();
    assert.deepEqual(reopened.transcript.messages.map((m) => m.kind), ["user", "assistant", "user", "assistant", "user", "assistant", "compaction"]);
    assert.deepEqual(reopened.transcript.messages.at(-1), card);
    assert.equal(reopened.compaction, undefined);

    // A second compaction right away has nothing to do: a manual one says so in the row.
    await assert.rejects(server.request("pi/compact", {}), /nothing to compact/);
    assert.equal(chat.compaction?.state, "failed");
    assert.match(chat.compaction?.error ?? "", /^Compaction failed: nothing to compact/);
  } finally {
    server.close();
  }
});

test("navigating away with a summary: the branch summary is a card in the chat", { skip: needsServer, timeout: 60_000 }, async () => {
  const server = await startServer({ tokenizer: "estimate" });
  try {
    await server.request("pi/newSession", { cwd: server.home, sessionDir: path.join(server.home, "sessions") });
    const first = await turn(server, "first way", "done the first way", 100);
    await turn(server, "more of it", "more done", 200);
    const { summaryEntryId } = await server.request<{ summaryEntryId: string }>("pi/navigate", { targetId: first, summarize: true });
    const chat = new ChatSync(server.request);
    await chat.load();
    const last = chat.transcript.messages.at(-1);
    assert.equal(last?.key, summaryEntryId);
    assert.equal(last?.kind, "branchSummary");
    assert.ok((last?.text ?? "").length > 0);
  } finally {
    server.close();
  }
});
