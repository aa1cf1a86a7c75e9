/** Open Session… search, Compact…'s preview and progress, Show System Prompt: against the real server. */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { CompactionPlan, describePlan, progressMessage } from "../src/host/compactionPlan";
import { formatTokens } from "../src/host/gaugeModel";
import { pickItem, SessionSearch } from "../src/host/sessionSearch";
import { ShellResult, shellSummary } from "../src/host/shellResult";
import { PROMPT_MARKER, SystemPromptResult, systemPromptDocument } from "../src/host/systemPromptView";
import { treeEntryOf } from "../src/host/treeModel";
import { needsServer, RealServer, say, startServer } from "./realServer";

async function reply(server: RealServer, text: string): Promise<string> {
  const { id } = await server.request<{ id: string }>("pi/appendEntry", {
    entry: {
      type: "message",
      message: {
        role: "assistant",
        content: [{ type: "text", text }],
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        usage: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop",
        timestamp: Date.now(),
      },
    },
  });
  return id;
}

test("Open Session… searches message text on the server and keeps only the latest answer", { skip: needsServer }, async () => {
  const server = await startServer();
  try {
    // pi's own session folder for the cwd (under the scratch agent dir), as Open Session… searches it.
    for (const [name, words] of [["fruit", "banana bread recipe"], ["car", "engine oil change"], ["other", "banana boat song"]]) {
      await server.request("pi/newSession", { cwd: server.home });
      await say(server, words);
      await reply(server, `noted: ${words}`);
      await server.request("pi/setSessionName", { name });
    }
    const search = new SessionSearch(server.request, server.home);
    const names = async (query: string, all = false) => ((await search.search(query, all)) ?? []).map((s) => s.name).sort();
    assert.deepEqual(await names(""), ["car", "fruit", "other"]);
    assert.deepEqual(await names("banana"), ["fruit", "other"]);
    assert.deepEqual(await names('"engine oil"'), ["car"]);
    assert.deepEqual(await names("banana", true), ["fruit", "other"]);
    assert.deepEqual(await new SessionSearch(server.request, path.join(server.home, "elsewhere")).search("banana"), []);
    // Two searches in flight: the first one's answer is dropped.
    const [older, newer] = await Promise.all([search.search("banana"), search.search("engine")]);
    assert.equal(older, undefined);
    assert.ok(Array.isArray(newer));
    assert.deepEqual(await names("re:ban+ana\\s+b(read|oat)"), ["fruit", "other"]);
    const item = pickItem({ path: "/s/a.jsonl", id: "abc", name: undefined, modified: "2026-12-02T10:11:12.123Z", messageCount: 4, firstMessage: "fix\nthe   bug", cwd: "/w" }, true);
    assert.deepEqual(item, { label: "fix the bug", description: "4 messages · 2026-12-02 10:11:12", detail: "/w — /s/a.jsonl", path: "/s/a.jsonl" });
  } finally {
    server.close();
  }
});

test("Compact… describes pi/prepareCompaction, then compacts with $/progress lines", { skip: needsServer, timeout: 60_000 }, async () => {
  const server = await startServer({ tokenizer: "estimate", summarizer: "offline", compaction: { keepRecentTokens: 1000 } });
  try {
    await server.request("pi/newSession", { cwd: server.home, sessionDir: path.join(server.home, "sessions") });
    const long = "word ".repeat(400);
    for (let i = 0; i < 6; i++) {
      await say(server, `question ${i} ${long}`);
      await reply(server, `answer ${i} ${long}`);
    }
    const plan = await server.request<CompactionPlan>("pi/prepareCompaction", {});
    assert.ok(plan.summarizeCount > 0);
    const { entry } = await server.request<{ entry: Record<string, unknown> }>("pi/getEntry", { id: plan.firstKeptEntryId });
    const { message, detail } = describePlan(plan, treeEntryOf(entry));
    assert.match(message, /^Compact this session \([\d.]+k? tokens\)\?$/);
    assert.match(detail, new RegExp(`^Summarised: ${plan.summarizeCount} messages`));
    assert.match(detail, /Kept as they are: the messages from “(user|assistant): (question|answer) \d/);
    assert.ok(detail.includes(`Context now: ${formatTokens(plan.tokensBefore)} tokens.`));

    const lines: string[] = [];
    const token = "compact-test";
    const listening = server.connection.onProgress({ __brand: "ProgressType" } as never, token, (value: { kind?: string; message?: string; title?: string }) => {
      const line = progressMessage(value);
      if (line) lines.push(line);
    });
    const result = await server.request<{ summarizer: string; tokensBefore: number }>("pi/compact", { workDoneToken: token, customInstructions: "keep the numbers" });
    listening.dispose();
    assert.equal(result.summarizer, "offline");
    assert.equal(lines[0], "preparing");
    assert.ok(lines.includes(`summarising ${plan.summarizeCount} messages (offline)`), lines.join(" | "));
    assert.match(lines[lines.length - 1], /^compacted: /);
  } finally {
    server.close();
  }
});

test("Show System Prompt lists each source with its tokens, then the prompt exactly", { skip: needsServer }, async () => {
  const server = await startServer();
  try {
    const project = path.join(server.home, "project");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "AGENTS.md"), "Always answer in haiku.\n".repeat(20));
    const prompt = await server.request<SystemPromptResult>("pi/getSystemPrompt", { cwd: project });
    const document = systemPromptDocument(prompt, project);
    const agents = prompt.sources.find((source) => source.path === path.join(project, "AGENTS.md"));
    assert.ok(agents && agents.tokens > 0);
    assert.match(document, new RegExp(`^pi system prompt for ${project}: [\\d,]+ tokens`));
    assert.ok(document.includes(`${agents.tokens} tokens  context file  ${agents.path}`));
    assert.ok(document.endsWith(`${PROMPT_MARKER}\n\n${prompt.text}`));
    const bare = systemPromptDocument({ text: "T", tokens: 1, sources: [] }, undefined);
    assert.match(bare, /built-in prompt only/);
  } finally {
    server.close();
  }
});

test("Run Shell Command runs pi/bash in the session's folder and sums the answer up", { skip: needsServer }, async () => {
  const server = await startServer();
  try {
    await server.request("pi/newSession", { cwd: server.home, sessionDir: path.join(server.home, "sessions") });
    const ok = await server.request<ShellResult>("pi/bash", { command: "echo first; echo last", excludeFromContext: false });
    assert.deepEqual(shellSummary("echo …", ok), { message: "pi: $ echo … — exit 0: last", failed: false });
    const bad = await server.request<ShellResult>("pi/bash", { command: "exit 3", excludeFromContext: true });
    assert.deepEqual(shellSummary("exit 3", bad), { message: "pi: $ exit 3 — exit 3 (no output)", failed: true });
    const { entries } = await server.request<{ entries: { message?: { role: string; command?: string } }[] }>("pi/getBranch", {});
    // Checkpoint entries (custom, no message) follow a command that changed files: only the messages count here.
    assert.deepEqual(entries.filter((e) => e.message !== undefined).map((e) => e.message?.command), ["echo first; echo last", "exit 3"]);
    assert.equal(shellSummary("x", { output: "y".repeat(500), exitCode: null, cancelled: true, truncated: true }).message, `pi: $ x — stopped, output truncated: ${"y".repeat(159)}…`);
  } finally {
    server.close();
  }
});
