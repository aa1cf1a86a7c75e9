#!/usr/bin/env node
// pi's side of the session-store benchmarks: times pi's own SessionManager (the published npm
// package, imported by file URL like tests/pi/driver.mjs does) on the same operations that
// bench_session.py times for pi-lsp, and prints one JSON object on stdout.
//
//   node --expose-gc pi_bench.mjs open FILE [--check]      open + buildSessionContext(), memory
//   node --expose-gc pi_bench.mjs ops FILE MESSAGES.json N    getTree, context after one append, appends
//   node --expose-gc pi_bench.mjs appends FILE MESSAGES.json N  append throughput alone
//   node --expose-gc pi_bench.mjs list DIR RUNS               SessionManager.list over a folder
//   node --expose-gc pi_bench.mjs hold FILE...                open every FILE in one process, keep them
//
// The package is found under $PI_ORACLE_DIR (default: <repo>/.pi-oracle). FILE for `ops` is
// appended to: pass a copy. Times are milliseconds (performance.now()).

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ORACLE_DIR = process.env.PI_ORACLE_DIR || path.join(HERE, "..", ".pi-oracle");
const DIST = path.join(ORACLE_DIR, "node_modules", "@mariozechner", "pi-coding-agent", "dist");

// pi's library may log; keep stdout for our one JSON line.
const writeOut = process.stdout.write.bind(process.stdout);
for (const name of ["log", "info", "debug", "warn"]) console[name] = (...args) => console.error(...args);

// Only the session manager's module (the package's index.js re-exports it): the whole package takes
// ~2 s of CPU to load, which every fresh process here (and each smoke run in `make test`) would pay.
const { SessionManager } = await import(pathToFileURL(path.join(DIST, "core", "session-manager.js")).href);
const PKG = JSON.parse(fs.readFileSync(path.join(DIST, "..", "package.json"), "utf8"));

const now = () => performance.now();
const gc = () => {
	if (typeof globalThis.gc === "function") {
		globalThis.gc();
		globalThis.gc();
	}
};
const median = (values) => {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
// Make the peak RSS (maxRSS) start again from the current RSS (Linux >= 4.0).
const resetPeakRss = () => {
	try {
		fs.writeFileSync("/proc/self/clear_refs", "5");
	} catch {
		// the peak then includes module loading's earlier peak (subtracted below)
	}
};
// Peak RSS: VmHWM (reset by resetPeakRss), else resourceUsage().maxRSS, which never drops below
// the parent's RSS at fork.
const peakRss = () => {
	try {
		const match = fs.readFileSync("/proc/self/status", "utf8").match(/^VmHWM:\s+(\d+) kB/m);
		if (match) return Number(match[1]) * 1024;
	} catch {
		// fall through
	}
	return process.resourceUsage().maxRSS * 1024;
};
const emit = (obj) => writeOut(`${JSON.stringify({ pi_version: PKG.version, node: process.version, ...obj })}\n`);

function open(file, check) {
	const size = fs.statSync(file).size;
	gc();
	resetPeakRss();
	const base = process.memoryUsage();
	const baseMaxRss = peakRss();
	const t0 = now();
	const sm = SessionManager.open(file);
	const t1 = now();
	const context = sm.buildSessionContext();
	const t2 = now();
	// Peak RSS of the process so far minus the RSS before opening (the baseline is the larger of
	// the current RSS and the earlier peak, so module loading never counts).
	const peakGrowth = peakRss() - Math.max(baseMaxRss, base.rss);
	const afterPeak = process.memoryUsage();
	gc();
	const retained = process.memoryUsage();
	const result = {
		op: "open",
		file_bytes: size,
		open_ms: t1 - t0,
		context_ms: t2 - t1,
		total_ms: t2 - t0,
		entries: sm.getEntries().length,
		messages: context.messages.length,
		peak_rss_bytes: peakGrowth,
		heap_after_bytes: afterPeak.heapUsed + afterPeak.external - base.heapUsed - base.external,
		retained_rss_bytes: retained.rss - base.rss,
		retained_heap_bytes: retained.heapUsed + retained.external - base.heapUsed - base.external,
	};
	if (check) {
		result.context_sha256 = crypto.createHash("sha256").update(JSON.stringify(context.messages)).digest("hex");
		result.thinking_level = context.thinkingLevel;
		result.model = context.model;
	}
	emit(result);
}

function ops(file, messagesFile, appends) {
	const messages = JSON.parse(fs.readFileSync(messagesFile, "utf8"));
	const sm = SessionManager.open(file);
	gc();
	// getTree: fresh tree each call (pi builds it from scratch every time)
	const tree = [];
	for (let i = 0; i < 5; i++) {
		const t0 = now();
		sm.getTree();
		tree.push(now() - t0);
	}
	// context after one append: pi rebuilds the whole context each time
	const afterAppend = [];
	for (let i = 0; i < 7; i++) {
		sm.appendMessage(messages[i % messages.length]);
		const t0 = now();
		sm.buildSessionContext();
		afterAppend.push(now() - t0);
	}
	// append throughput (persisted: pi's appendFileSync per entry)
	const t0 = now();
	for (let i = 0; i < appends; i++) sm.appendMessage(messages[i % messages.length]);
	const appendMs = now() - t0;
	emit({
		op: "ops",
		get_tree_ms: median(tree),
		context_after_append_ms: median(afterAppend),
		appends,
		append_ms: appendMs,
		appends_per_s: appends / (appendMs / 1000),
	});
}

// append throughput alone: 50 appends to warm up, then N timed (bench_session.py alternates runs)
function appends(file, messagesFile, count) {
	const messages = JSON.parse(fs.readFileSync(messagesFile, "utf8"));
	const sm = SessionManager.open(file);
	for (let i = 0; i < 50; i++) sm.appendMessage(messages[i % messages.length]);
	gc();
	const t0 = now();
	for (let i = 0; i < count; i++) sm.appendMessage(messages[i % messages.length]);
	const appendMs = now() - t0;
	emit({ op: "appends", appends: count, append_ms: appendMs, appends_per_s: count / (appendMs / 1000) });
}

async function list(dir, runs) {
	const times = [];
	let count = 0;
	for (let i = 0; i < runs; i++) {
		const t0 = now();
		const sessions = await SessionManager.list("/home/dev/projects/acme-webapp", dir);
		times.push(now() - t0);
		count = sessions.length;
		gc();
	}
	emit({ op: "list", list_ms: median(times), runs: times, sessions: count });
}

// Many sessions open in one process, as a server holds them: each opened and its context built
// (an agent session keeps its messages), all kept referenced; RSS growth over the RSS before.
function hold(files) {
	gc();
	resetPeakRss();
	const base = process.memoryUsage().rss;
	const baseMaxRss = peakRss();
	const held = [];
	let bytes = 0;
	const t0 = now();
	for (const file of files) {
		bytes += fs.statSync(file).size;
		const sm = SessionManager.open(file);
		held.push([sm, sm.buildSessionContext().messages]);
	}
	const openMs = now() - t0;
	const peakGrowth = peakRss() - Math.max(baseMaxRss, base);
	gc();
	emit({
		op: "hold",
		files: files.length,
		file_bytes: bytes,
		entries: held.reduce((total, [sm]) => total + sm.getEntries().length, 0),
		open_ms: openMs,
		peak_rss_bytes: peakGrowth,
		retained_rss_bytes: process.memoryUsage().rss - base,
	});
}

const [mode, ...args] = process.argv.slice(2);
if (mode === "open") open(args[0], args.includes("--check"));
else if (mode === "ops") ops(args[0], args[1], Number(args[2] ?? 1000));
else if (mode === "appends") appends(args[0], args[1], Number(args[2] ?? 1000));
else if (mode === "list") await list(args[0], Number(args[1] ?? 3));
else if (mode === "hold") hold(args);
else {
	console.error(`usage: pi_bench.mjs open FILE [--check] | ops FILE MESSAGES.json N | appends FILE MESSAGES.json N | list DIR RUNS | hold FILE...`);
	process.exit(2);
}
