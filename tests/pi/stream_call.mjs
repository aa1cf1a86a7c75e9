#!/usr/bin/env node
// One model call through pi's own Anthropic provider (pi-ai 0.73.1 `streamSimple`) against an endpoint
// the test controls, reporting pi's AssistantMessageEvents and final AssistantMessage.
//
// Input (stdin JSON): {calls: [call...]}, each call
//   {baseUrl, modelId, apiKey, context: {systemPrompt?, messages, tools?}, reasoning?,
//    abortOnEvent?: {type, count}}  -- abort when the count-th event of that type arrives
// Calls run one after the other. Output (stdout JSON):
//   {results: [{events: [{type, contentIndex?, delta?, content?, toolCall?, reason?}], message,
//               wallMs, cpuMs, firstDeltaMs}]}   (timings for benchmarks/bench_llm_stream.py)

import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const INSTALL_ROOT = process.env.PI_ORACLE_DIR || path.join(REPO, ".pi-oracle");
const PI_AI = path.join(INSTALL_ROOT, "node_modules", "@mariozechner", "pi-ai", "dist", "index.js");

async function readStdin() {
	const chunks = [];
	for await (const chunk of process.stdin) chunks.push(chunk);
	return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function runCall(ai, input) {
	const known = ai.getModel("anthropic", input.modelId);
	if (!known) throw new Error(`unknown model ${input.modelId}`);
	const model = { ...known, baseUrl: input.baseUrl };
	const started = performance.now();
	const cpu = process.cpuUsage();
	let firstDeltaMs = null;
	const controller = new AbortController();
	const stream = ai.streamSimple(model, input.context, {
		apiKey: input.apiKey,
		maxRetries: 0,
		signal: controller.signal,
		...(input.reasoning ? { reasoning: input.reasoning } : {}),
	});
	const events = [];
	let seen = 0;
	for await (const event of stream) {
		const { partial, message, error, ...rest } = event;
		events.push(rest);
		if (firstDeltaMs === null && event.type.endsWith("_delta")) firstDeltaMs = performance.now() - started;
		const trigger = input.abortOnEvent;
		if (trigger && event.type === trigger.type && ++seen === trigger.count) controller.abort();
	}
	const message = await stream.result();
	const used = process.cpuUsage(cpu);
	const wallMs = performance.now() - started;
	return { events, message, wallMs, cpuMs: (used.user + used.system) / 1000, firstDeltaMs };
}

async function main() {
	const input = await readStdin();
	const ai = await import(pathToFileURL(PI_AI).href);
	const results = [];
	for (const call of input.calls) results.push(await runCall(ai, call));
	process.stdout.write(JSON.stringify({ results }) + "\n");
}

main().catch((error) => {
	console.error(error?.stack ?? String(error));
	process.exit(1);
});
