/**
 * Chat streaming benchmark: the real host code (ChatViewProvider + ChatTranscript, in Node, with
 * `vscode` stubbed) receives pi/event text deltas of a long reply and posts to the real webview
 * bundle (out/webview.js in the page ChatViewProvider writes), running in headless Chromium
 * (playwright-core). Measured:
 *   - delta → paint: from the delta reaching ChatViewProvider.onEvent to the first frame painted
 *     after the webview handled the post (rAF, then a task after that frame), p50/p99;
 *   - frame time while streaming: intervals between animation frames, and long animation frames.
 * The hop from extension host to webview is a CDP Runtime.evaluate of the post as JSON here, where
 * VS Code uses its own IPC and an iframe postMessage; both serialise the message. Numbers go to stdout (a markdown table)
 * and benchmarks/out/vscode_webview.json.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { chromium, type Page } from "playwright-core";
import * as vscode from "vscode";
import { ChatViewProvider } from "../src/host/chatView";
import { deltas, replyText } from "./reply";
import type { PiEvent } from "../src/shared/protocol";

interface Options {
  bytes: number;
  deltaChars: number;
  intervalMs: number;
  /** Take a Chromium CPU profile of the measured stream and print the functions by self time. */
  profile: boolean;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
}

/** The `top` functions of a CPU profile by self time (ms), summed over their call sites. */
function selfTimes(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }, top: number): string[] {
  const byNode = new Map<number, number>();
  profile.samples.forEach((id, index) => byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000));
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const frame = node.callFrame;
    const name = `${frame.functionName || "(anonymous)"} ${path.basename(frame.url)}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + (byNode.get(node.id) ?? 0));
  }
  return [...byFunction.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, ms]) => `${ms.toFixed(0).padStart(7)} ms  ${name}`);
}

const clientDir = path.resolve(__dirname, "..", "..");
// The global performance (Node and the page both have one: page functions must not capture an import).
const wallNow = () => performance.timeOrigin + performance.now();

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function summary(values: number[]): { n: number; p50: number; p95: number; p99: number; max: number; mean: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length);
  return { n: values.length, p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), p99: quantile(sorted, 0.99), max: sorted[sorted.length - 1] ?? NaN, mean };
}

/** Installed before the webview's own script: the VS Code API stand-in and the paint probes. */
function pageProbes(): void {
  const w = window as unknown as Record<string, unknown>;
  const sent: number[] = [];
  const latencies: number[] = [];
  const frames: number[] = [];
  const longFrames: number[] = [];
  let recording = false;
  w.acquireVsCodeApi = () => ({
    postMessage: (message: unknown) => (w.__toHost as unknown[]).push(message),
    getState: () => undefined,
    setState: () => undefined,
  });
  w.__toHost = [];
  w.__probe = { sent, latencies, frames, longFrames };
  w.__deliver = (message: unknown, t0: number) => {
    sent.push(t0);
    window.postMessage(message, "*");
  };
  // Registered before the webview's listener: it runs first, then the webview draws in the same
  // task; the rAF after it precedes the next paint and a task queued from there follows it.
  window.addEventListener("message", (event: MessageEvent) => {
    const data = event.data as { type?: string };
    const t0 = sent.shift() ?? NaN; // one per __deliver, in order
    if (data?.type !== "state" && data?.type !== "message" && data?.type !== "append") return; // a draw of the transcript
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => latencies.push(performance.timeOrigin + performance.now() - t0);
      channel.port2.postMessage(0);
    });
  });
  const tick = (time: number) => {
    if (recording) frames.push(time);
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  w.__record = (on: boolean) => {
    recording = on;
  };
  new PerformanceObserver((list) => {
    if (!recording) return;
    for (const entry of list.getEntries()) longFrames.push(entry.duration);
  }).observe({ type: "long-animation-frame", buffered: false });
}

interface Probe {
  sent: number[];
  latencies: number[];
  frames: number[];
  longFrames: number[];
}

/** Node clock minus page clock, from the round trip with the smallest delay. */
async function clockOffset(page: Page): Promise<number> {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 20; i++) {
    const before = wallNow();
    const pageTime = await page.evaluate(() => performance.timeOrigin + performance.now());
    const after = wallNow();
    if (after - before < best.rtt) best = { rtt: after - before, offset: (before + after) / 2 - pageTime };
  }
  return best.offset;
}

let seq = 0;

async function stream(page: Page, chat: ChatViewProvider, setT0: (t: number) => void, options: Options, offset: number): Promise<{ hostMs: number[] }> {
  const text = replyText(options.bytes);
  const parts = deltas(text, options.deltaChars);
  const hostMs: number[] = [];
  const event = (e: PiEvent) => {
    const t0 = wallNow();
    setT0(t0 - offset);
    chat.onEvent(++seq, e);
    hostMs.push(wallNow() - t0);
  };
  event({ type: "agent_start" });
  event({ type: "message_start", message: { role: "user", content: "Explain the tree, with code." } });
  event({ type: "message_start", message: { role: "assistant", content: [] } });
  const start = wallNow();
  for (let i = 0; i < parts.length; i++) {
    const due = start + i * options.intervalMs;
    const wait = due - wallNow();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    event({ type: "message_update", assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: parts[i] } });
  }
  event({ type: "message_end", entryId: "reply", message: { role: "assistant", content: [{ type: "text", text }] } });
  event({ type: "agent_end", entryIds: ["reply"], stopReason: "stop" });
  return { hostMs };
}

async function run(options: Options): Promise<Record<string, unknown>> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 420, height: 900 } });
    await page.addInitScript(pageProbes);
    const hop = await page.context().newCDPSession(page);
    // The oldest event not yet carried by a post: a post that gathers several deltas is timed
    // from its oldest one (the worst of them).
    let t0: number | undefined;
    let latest = 0;
    let onMessage: (message: unknown) => void = () => undefined;
    const webview = {
      options: {},
      html: "",
      cspSource: "file:",
      asWebviewUri: (uri: vscode.Uri) => uri,
      onDidReceiveMessage: (handler: (message: unknown) => void) => {
        onMessage = handler;
        return { dispose: () => undefined };
      },
      postMessage: (message: unknown) => {
        const sentAt = t0 ?? latest;
        t0 = undefined;
        // One JSON text evaluated in the page, as VS Code's IPC carries a post: Playwright's own
        // evaluate wraps every call in its utility script, which costs the page more than the post.
        return hop.send("Runtime.evaluate", { expression: `__deliver(${JSON.stringify(message)}, ${sentAt})`, awaitPromise: false }).then(() => true);
      },
    };
    // The chat asks the server for models when drawn; nothing else reaches it while streaming.
    const answers: Record<string, unknown> = {
      "pi/listModels": { models: [], current: { modelId: "claude-sonnet-4-5", thinkingLevel: "off" }, hasApiKey: true },
    };
    const client = { sendRequest: (method: string) => Promise.resolve(answers[method] ?? {}) };
    const chat = new ChatViewProvider(vscode.Uri.file(clientDir), (() => client) as never, { current: undefined } as never, {} as never);
    const listen = () => ({ dispose: () => undefined });
    chat.resolveWebviewView({ webview, visible: true, onDidDispose: listen, onDidChangeVisibility: listen } as never);
    const htmlFile = path.join(clientDir, "bench", "out", "chat.html");
    fs.writeFileSync(htmlFile, webview.html);
    await page.goto(`file://${htmlFile}`);
    await page.waitForFunction(() => ((window as unknown as { __toHost: { type: string }[] }).__toHost ?? []).some((m) => m.type === "ready"));
    onMessage({ type: "ready" });
    const offset = await clockOffset(page);

    // Warm-up (JIT, fonts), not counted.
    await stream(page, chat, (t) => {
      latest = t;
      t0 ??= t;
    }, { ...options, bytes: 4000 }, offset);
    await page.evaluate(() => {
      const probe = (window as unknown as { __probe: Probe }).__probe;
      probe.latencies.length = 0;
    });

    const cdp = options.profile ? await page.context().newCDPSession(page) : undefined;
    if (cdp) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
      await cdp.send("Profiler.start");
    }
    await page.evaluate(() => (window as unknown as { __record: (on: boolean) => void }).__record(true));
    const { hostMs } = await stream(page, chat, (t) => {
      latest = t;
      t0 ??= t;
    }, options, offset);
    await page.waitForFunction(() => (window as unknown as { __probe: Probe }).__probe.sent.length === 0, undefined, { timeout: 900_000 });
    await page.waitForTimeout(200);
    await page.evaluate(() => (window as unknown as { __record: (on: boolean) => void }).__record(false));
    const probe = await page.evaluate(() => (window as unknown as { __probe: Probe }).__probe);
    const profiled = cdp ? selfTimes((await cdp.send("Profiler.stop")).profile as never, 25) : undefined;
    const intervals = probe.frames.slice(1).map((t, i) => t - probe.frames[i]);
    const articles = await page.locator('article[aria-label="assistant message"]').count();
    return {
      options,
      deltas: deltas(replyText(options.bytes), options.deltaChars).length,
      articles,
      deltaToPaintMs: summary(probe.latencies),
      hostOnEventMs: summary(hostMs),
      frameIntervalMs: summary(intervals),
      framesOver50ms: intervals.filter((v) => v > 50).length,
      longAnimationFramesMs: summary(probe.longFrames),
      chromium: browser.version(),
      ...(profiled ? { selfTimeByFunction: profiled } : {}),
    };
  } finally {
    await browser.close();
  }
}

function table(result: Record<string, unknown>): string {
  const row = (name: string, s: ReturnType<typeof summary>) =>
    `| ${name} | ${s.n} | ${s.p50.toFixed(1)} | ${s.p95.toFixed(1)} | ${s.p99.toFixed(1)} | ${s.max.toFixed(1)} |`;
  return [
    "| measure | n | p50 ms | p95 ms | p99 ms | max ms |",
    "|---|---|---|---|---|---|",
    row("delta → paint", result.deltaToPaintMs as ReturnType<typeof summary>),
    row("host onEvent", result.hostOnEventMs as ReturnType<typeof summary>),
    row("frame interval", result.frameIntervalMs as ReturnType<typeof summary>),
    row("long animation frames", result.longAnimationFramesMs as ReturnType<typeof summary>),
  ].join("\n");
}

async function main(): Promise<void> {
  const arg = (name: string, fallback: number) => {
    const found = process.argv.find((a) => a.startsWith(`--${name}=`));
    return found ? Number(found.split("=")[1]) : fallback;
  };
  // --smoke (make test): a short reply, only to check that the benchmark still runs; its numbers
  // mean nothing, so they do not replace a full run's in benchmarks/out/.
  const smoke = process.argv.includes("--smoke");
  const options: Options = { bytes: arg("bytes", smoke ? 4000 : 50 * 1024), deltaChars: arg("delta-chars", 20), intervalMs: arg("interval-ms", 10), profile: process.argv.includes("--profile") };
  const result = await run(options);
  if (!smoke && !options.profile) {
    const outDir = path.resolve(clientDir, "..", "benchmarks", "out");
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, "vscode_webview.json"), JSON.stringify(result, null, 2));
  }
  console.log(`${options.bytes} bytes in ${result.deltas as number} deltas of ${options.deltaChars} chars every ${options.intervalMs} ms; Chromium ${result.chromium as string}`);
  console.log(table(result));
  console.log(`frames over 50 ms: ${result.framesOver50ms as number}`);
  const profiled = result.selfTimeByFunction as string[] | undefined;
  if (profiled) console.log(["webview CPU profile, self time by function:", ...profiled].join("\n"));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
