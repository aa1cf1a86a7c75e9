#!/usr/bin/env node
// Drives pi itself (the published npm package @mariozechner/pi-coding-agent, 0.73.1) for pi-lsp's
// differential tests: a test asks pi a question through this process and compares pi's answer with
// ours. Nothing here reimplements pi; each operation calls pi's own functions and returns what they
// return, made JSON-safe.
//
// Where pi is: $PI_ORACLE_DIR/node_modules/@mariozechner/pi-coding-agent, $PI_ORACLE_DIR defaulting to
// the repository's .pi-oracle folder (`make oracle` installs it there).
//
// Conversation, one JSON object per line each way, answered strictly in order:
//   stdin   {"op": "<operation>", "id": <anything, echoed>, ...arguments}
//   stdout  {"id": ..., "op": ..., "result": <value>, "info": {...}}   (info only when non-empty)
//      or   {"id": ..., "op": ..., "error": "<message>"}
// stdout carries answers only: whatever pi prints goes to stderr.
// The Python side is tests/oracle.py (PiOracle.request / PiOracle.result).
//
// Conventions shared by several operations:
//   * Entry sources: `entries` (or the operation's own key, e.g. `pathEntries`) is an inline list used
//     as given; `path` is a session file read with pi's parseSessionEntries, migrated with
//     migrateSessionEntries and stripped of its header (as pi's own tests prepare entries).
//   * Scratch folders: operations that write files work in a fresh temporary folder, removed after
//     the answer; "$TMP" in argument strings stands for it, and its path is written back as "$TMP".
//   * Trees: `treeFormat` is "nested" (default; {id, type, label?, children:[...]}), "flat" (pre-order
//     rows {id, type, label?, parentId, depth, children:[ids]}; use it for long chains, which nest
//     deeper than JSON parsers allow) or "none".
//
// ADDING AN OPERATION (e.g. a pi tool, or pi's agent loop against a fake model):
//   1. If the pi function is not in one of PI_MODULES, add its module (a path under the package's
//      dist/) to that list; every export is then reachable as `pi.<name>`.
//   2. Write one `async function opName(request)` in the section for its area (or a new section),
//      returning `answer(result, info?)`. Throw an Error for bad arguments: the message goes back
//      as the answer's "error". Use withScratchDir() for files and pi's own classes and functions for
//      the work.
//   3. Add it to OPERATIONS at the end of the file, and document its arguments in a comment above it.
//   4. Call it from a test with `pi_oracle.result("<op>", argument=...)` (the `pi_oracle` fixture).

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const INSTALL_ROOT = process.env.PI_ORACLE_DIR || path.join(REPO, ".pi-oracle");
const PACKAGE_DIR = path.join(INSTALL_ROOT, "node_modules", "@mariozechner", "pi-coding-agent");

// Modules whose exports are merged into `pi`; the first module exporting a name wins.
const PI_MODULES = [
	"index.js",
	"core/session-manager.js",
	"core/compaction/index.js",
	"core/system-prompt.js",
	"core/skills.js",
	"core/resource-loader.js",
	"core/tools/index.js",
	"config.js",
];

const pi = {};

// --------------------------------------------------------------------------------------------
// Output discipline

const writeAnswerLine = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest);
for (const level of ["log", "info", "debug", "warn"]) console[level] = (...args) => console.error(...args);

/** Sets become arrays and Maps objects: pi uses both in values the tests compare. */
function jsonSafe(_key, value) {
	if (value instanceof Set) return [...value];
	if (value instanceof Map) return Object.fromEntries(value);
	return value;
}

function send(message) {
	writeAnswerLine(`${JSON.stringify(message, jsonSafe)}\n`);
}

function answer(result, info = {}) {
	return { result, info };
}

// --------------------------------------------------------------------------------------------
// Helpers

const ownKey = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

/** Apply `change` to every string inside `value` (objects and arrays copied, the rest kept). */
function mapStrings(value, change) {
	if (typeof value === "string") return change(value);
	if (Array.isArray(value)) return value.map((item) => mapStrings(item, change));
	if (value !== null && typeof value === "object" && !(value instanceof Set) && !(value instanceof Map)) {
		return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, change)]));
	}
	return value;
}

/** Run `work(dir)` in a fresh temporary folder, removed afterwards whatever happens. */
async function withScratchDir(work) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-lsp-driver-"));
	try {
		return await work(dir);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

const expandScratch = (value, dir) => mapStrings(value, (text) => text.replaceAll("$TMP", dir));
const hideScratch = (value, dir) => mapStrings(value, (text) => text.replaceAll(dir, "$TMP"));

function writeJsonLines(file, objects) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, objects.map((object) => `${JSON.stringify(object)}\n`).join(""));
}

/**
 * Put a session file for `request` into `dir` and return its path: a copy of `request.path`
 * (nothing when that file is missing), `request.lines` as JSON lines or `request.content` verbatim.
 */
function stageSessionFile(request, dir) {
	if (typeof request.path === "string") {
		const copy = path.join(dir, path.basename(request.path));
		if (fs.existsSync(request.path)) fs.copyFileSync(request.path, copy);
		return copy;
	}
	const file = path.join(dir, request.fileName ?? "session.jsonl");
	if (Array.isArray(request.lines)) writeJsonLines(file, request.lines);
	else if (typeof request.content === "string") fs.writeFileSync(file, request.content);
	else throw new Error('give "path", "lines" or "content"');
	return file;
}

/** The entries an operation works on (see "Entry sources" at the top). */
function entriesOf(request, key = "entries") {
	if (Array.isArray(request[key])) {
		const entries = structuredClone(request[key]);
		if (request.migrate) pi.migrateSessionEntries(entries);
		return request.dropHeader ? entries.filter((entry) => entry?.type !== "session") : entries;
	}
	if (typeof request.path !== "string") throw new Error(`give "${key}" (a list) or "path"`);
	const entries = pi.parseSessionEntries(fs.readFileSync(request.path, "utf8"));
	if (request.migrate !== false) pi.migrateSessionEntries(entries);
	return request.dropHeader === false ? entries : entries.filter((entry) => entry?.type !== "session");
}

function countRoles(messages) {
	const counts = {};
	for (const message of messages) counts[message?.role] = (counts[message?.role] ?? 0) + 1;
	return counts;
}

/** pi's tree (nodes {entry, children, label}) in the requested `treeFormat`; null for "none". */
function shapeTree(roots, format = "nested") {
	if (format === "none") return null;
	const describe = (node) => {
		const row = { id: node.entry.id, type: node.entry.type };
		if (node.label !== undefined) row.label = node.label;
		return row;
	};
	if (format === "flat") {
		const rows = [];
		const pending = roots.map((node) => ({ node, parentId: null, depth: 0 })).reverse();
		while (pending.length > 0) {
			const { node, parentId, depth } = pending.pop();
			rows.push({ ...describe(node), parentId, depth, children: node.children.map((c) => c.entry.id) });
			for (const child of [...node.children].reverse()) {
				pending.push({ node: child, parentId: node.entry.id, depth: depth + 1 });
			}
		}
		return rows;
	}
	// nested, built with an explicit stack: long sessions are deeper than the call stack
	const top = roots.map((node) => ({ ...describe(node), children: [] }));
	const pending = roots.map((node, index) => [node, top[index]]);
	while (pending.length > 0) {
		const [node, shaped] = pending.pop();
		for (const child of node.children) {
			const shapedChild = { ...describe(child), children: [] };
			shaped.children.push(shapedChild);
			pending.push([child, shapedChild]);
		}
	}
	return top;
}

/** Everything a test may compare about a SessionManager after it was opened or scripted. */
function describeManager(manager, treeFormat) {
	const leafId = manager.getLeafId();
	return {
		sessionId: manager.getSessionId(),
		sessionFile: manager.getSessionFile() ?? null,
		cwd: manager.getCwd(),
		header: manager.getHeader(),
		entries: manager.getEntries(),
		// JSON has no undefined: pi's undefined leaf (e.g. after forkFrom of v1 data) is flagged
		leafId: leafId ?? null,
		...(leafId === undefined ? { leafIdUndefined: true } : {}),
		tree: shapeTree(manager.getTree(), treeFormat),
		context: manager.buildSessionContext(),
		sessionName: manager.getSessionName() ?? null,
	};
}

/** Every file under `dir` by relative path (text). */
function readTree(dir) {
	const files = {};
	const visit = (folder) => {
		for (const item of fs.readdirSync(folder, { withFileTypes: true })) {
			const full = path.join(folder, item.name);
			if (item.isDirectory()) visit(full);
			else if (item.isFile()) files[path.relative(dir, full)] = fs.readFileSync(full, "utf8");
		}
	};
	if (fs.existsSync(dir)) visit(dir);
	return files;
}

/** Run `work` with environment variables set (null unsets), restoring them afterwards. */
async function withEnvironment(variables, work) {
	const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
	const assign = (name, value) => {
		if (value === null || value === undefined) delete process.env[name];
		else process.env[name] = String(value);
	};
	for (const [name, value] of Object.entries(variables)) assign(name, value);
	try {
		return await work();
	} finally {
		for (const [name, value] of Object.entries(saved)) assign(name, value);
	}
}

/** Run `work` while `new Date()` and Date.now() say `instant` (ISO text or epoch ms); as is without it. */
async function atInstant(instant, work) {
	if (instant === undefined || instant === null) return work();
	const RealDate = globalThis.Date;
	const frozen = new RealDate(instant).getTime();
	if (Number.isNaN(frozen)) throw new Error(`"now" is not a date: ${instant}`);
	globalThis.Date = class extends RealDate {
		constructor(...args) {
			super(...(args.length === 0 ? [frozen] : args));
		}
		static now() {
			return frozen;
		}
	};
	try {
		return await work();
	} finally {
		globalThis.Date = RealDate;
	}
}

function describeSkill(skill) {
	const { name, description, filePath, baseDir, disableModelInvocation, sourceInfo } = skill;
	return { name, description, filePath, baseDir, disableModelInvocation, sourceInfo };
}

// --------------------------------------------------------------------------------------------
// Operations: package

/** {} -> the installed pi's version, node's, and the session format version. */
async function opVersion() {
	const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8"));
	return answer({
		version: manifest.version,
		node: process.version,
		currentSessionVersion: pi.CURRENT_SESSION_VERSION,
	});
}

// --------------------------------------------------------------------------------------------
// Operations: sessions

/** {entries|path, leafId?} -> buildSessionContext(entries, leafId); leafId omitted = undefined. */
async function opContext(request) {
	const entries = entriesOf(request);
	const context = pi.buildSessionContext(entries, ownKey(request, "leafId") ? request.leafId : undefined);
	return answer(context, { roles: countRoles(context.messages) });
}

/**
 * {path|lines|content, sessionDir?, cwdOverride?, treeFormat?, returnFile?}
 * -> SessionManager.open on a copy in a scratch folder (the original is never touched):
 *    {header, entries, leafId, tree, context, sessionName, sessionId, cwd}.
 * info: rewritten (did opening change the copy: migration, repair), bytesAfter, fileContent (with
 * returnFile), entryCount, contextRoles.
 */
async function opLoad(request) {
	return withScratchDir((dir) => {
		const file = stageSessionFile(request, dir);
		const readCopy = () => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null);
		const before = readCopy();
		const sessionDir = request.sessionDir ? expandScratch(request.sessionDir, dir) : undefined;
		const manager = pi.SessionManager.open(file, sessionDir, request.cwdOverride);
		const { sessionFile: _file, ...state } = describeManager(manager, request.treeFormat);
		const after = readCopy();
		const info = {
			entryCount: state.entries.length,
			contextRoles: countRoles(state.context.messages),
			rewritten: before !== after,
			bytesAfter: after === null ? null : Buffer.byteLength(after),
		};
		if (request.returnFile) info.fileContent = after;
		return answer(hideScratch(state, dir), hideScratch(info, dir));
	});
}

/**
 * {path|lines|content, sessionDir?, cwdOverride?} -> SessionManager.open on a copy, answered only
 * with what is safe to send for any file, even one whose entries nest deeper than JSON.stringify
 * can write: {sessionId, leafId, entries: [{id, type, parentId}], contextRoles}.
 */
async function opLoadOutline(request) {
	return withScratchDir((dir) => {
		const file = stageSessionFile(request, dir);
		const sessionDir = request.sessionDir ? expandScratch(request.sessionDir, dir) : undefined;
		const manager = pi.SessionManager.open(file, sessionDir, request.cwdOverride);
		const entries = manager.getEntries().map((entry) => ({ id: entry.id, type: entry.type, parentId: entry.parentId }));
		const context = manager.buildSessionContext();
		return answer({
			sessionId: manager.getSessionId(),
			leafId: manager.getLeafId() ?? null,
			entries,
			contextRoles: context.messages.map((message) => message.role),
		});
	});
}

/** {dir, cwd?="/"} -> SessionManager.list(cwd, dir) (dates as ISO text). */
async function opList(request) {
	if (typeof request.dir !== "string") throw new Error('give "dir"');
	return answer(await pi.SessionManager.list(request.cwd ?? "/", request.dir));
}

/** How a script's SessionManager comes to be, by init.kind (strings already have $TMP expanded). */
const SCRIPT_STARTS = {
	inMemory: (init, dir) => pi.SessionManager.inMemory(init.cwd ?? dir),
	create: (init, dir) => pi.SessionManager.create(init.cwd ?? dir, init.sessionDir ?? path.join(dir, "sessions")),
	open: (init, dir) => {
		const file = typeof init.path === "string" ? init.path : stageSessionFile(init, dir);
		return pi.SessionManager.open(file, init.sessionDir, init.cwdOverride);
	},
	forkFrom: (init, dir) => {
		let source = init.sourcePath;
		if (typeof source !== "string") {
			source = path.join(dir, "source.jsonl");
			writeJsonLines(source, init.lines ?? []);
		}
		return pi.SessionManager.forkFrom(source, init.targetCwd ?? dir, init.sessionDir ?? path.join(dir, "sessions"));
	},
	continueRecent: (init, dir) =>
		pi.SessionManager.continueRecent(init.cwd ?? dir, init.sessionDir ?? path.join(dir, "sessions")),
};

/**
 * {init: {kind, ...}, steps: [{method, args?}], files?: {relative: [objects] | "text"}, returnFiles?,
 *  treeFormat?} -> calls SessionManager methods one after another in a scratch folder.
 * init.kind: inMemory {cwd?} | create {cwd, sessionDir?} | open {path|lines|content, sessionDir?,
 * cwdOverride?} (a `path` is used in place, not copied) | forkFrom {sourcePath|lines, targetCwd,
 * sessionDir?} | continueRecent {cwd, sessionDir}.
 * An argument that is exactly "$R<n>" is the value step n returned. A throwing step is recorded as
 * {method, error} and the script goes on.
 * Result: {results: [{method, value|error}], ...the manager's final state, files?}.
 */
async function opScript(request) {
	return withScratchDir(async (dir) => {
		for (const [relative, content] of Object.entries(request.files ?? {})) {
			const file = path.join(dir, relative);
			if (Array.isArray(content)) writeJsonLines(file, content);
			else {
				fs.mkdirSync(path.dirname(file), { recursive: true });
				fs.writeFileSync(file, String(content));
			}
		}
		const init = expandScratch(request.init ?? { kind: "inMemory" }, dir);
		const start = ownKey(SCRIPT_STARTS, init.kind) ? SCRIPT_STARTS[init.kind] : undefined;
		if (!start) throw new Error(`unknown init.kind: ${init.kind}`);
		const manager = start(init, dir);
		const results = [];
		const earlierValue = (text) => {
			const match = /^\$R(\d+)$/.exec(text);
			return match ? (results[Number(match[1])]?.value ?? null) : text;
		};
		for (const step of request.steps ?? []) {
			const args = mapStrings(expandScratch(step.args ?? [], dir), earlierValue);
			try {
				if (typeof manager[step.method] !== "function") throw new Error(`SessionManager has no method ${step.method}`);
				let value = await manager[step.method](...args);
				if (step.method === "getTree") value = shapeTree(value, request.treeFormat);
				results.push({ method: step.method, value: value ?? null });
			} catch (error) {
				results.push({ method: step.method, error: error?.message ?? String(error) });
			}
		}
		const result = { results, ...describeManager(manager, request.treeFormat) };
		if (request.returnFiles) result.files = readTree(dir);
		return answer(hideScratch(result, dir));
	});
}

// --------------------------------------------------------------------------------------------
// Operations: compaction and tokens

/** {entries|path, startIndex?=0, endIndex?=length, keepRecentTokens?=pi's default} -> findCutPoint. */
async function opCut(request) {
	const entries = entriesOf(request);
	const keep = request.keepRecentTokens ?? pi.DEFAULT_COMPACTION_SETTINGS.keepRecentTokens;
	const cut = pi.findCutPoint(entries, request.startIndex ?? 0, request.endIndex ?? entries.length, keep);
	return answer(cut);
}

/** {message} -> estimateTokens(message); {messages} -> {perMessage, sum, context: estimateContextTokens}. */
async function opEstimate(request) {
	if (request.message !== undefined) return answer(pi.estimateTokens(request.message));
	if (!Array.isArray(request.messages)) throw new Error('give "message" or "messages"');
	const perMessage = request.messages.map((message) => pi.estimateTokens(message));
	return answer({
		perMessage,
		sum: perMessage.reduce((total, tokens) => total + tokens, 0),
		context: pi.estimateContextTokens(request.messages),
	});
}

/**
 * {usage?, contextTokens?, contextWindow?, settings?, entries?} -> whichever of
 * calculateContextTokens(usage), shouldCompact(contextTokens, contextWindow, settings over pi's
 * defaults) and getLastAssistantUsage(entries) the arguments allow.
 */
async function opTokens(request) {
	const result = {};
	if (request.usage) result.calculateContextTokens = pi.calculateContextTokens(request.usage);
	if (request.contextTokens !== undefined) {
		const settings = { ...pi.DEFAULT_COMPACTION_SETTINGS, ...request.settings };
		result.shouldCompact = pi.shouldCompact(request.contextTokens, request.contextWindow ?? 0, settings);
	}
	if (Array.isArray(request.entries)) result.getLastAssistantUsage = pi.getLastAssistantUsage(request.entries) ?? null;
	return answer(result);
}

/**
 * {pathEntries|path, settings?, summaryOnly?} -> prepareCompaction(entries, settings over pi's
 * defaults), its fileOps sets as lists; null when pi prepares nothing. summaryOnly replaces the two
 * message lists by their roles. info: firstKeptEntryIndex, fileLists (computeFileLists), counts.
 */
async function opPrepare(request) {
	const entries = entriesOf(request, "pathEntries");
	const preparation = pi.prepareCompaction(entries, { ...pi.DEFAULT_COMPACTION_SETTINGS, ...request.settings });
	if (!preparation) return answer(null);
	const info = {
		firstKeptEntryIndex: entries.findIndex((entry) => entry?.id === preparation.firstKeptEntryId),
		fileLists: pi.computeFileLists(preparation.fileOps),
		messagesToSummarizeCount: preparation.messagesToSummarize.length,
		turnPrefixMessagesCount: preparation.turnPrefixMessages.length,
	};
	const result = { ...preparation };
	if (request.summaryOnly) {
		result.messagesToSummarize = preparation.messagesToSummarize.map((message) => message.role);
		result.turnPrefixMessages = preparation.turnPrefixMessages.map((message) => message.role);
	}
	return answer(result, info);
}

// --------------------------------------------------------------------------------------------
// Operations: system prompt, skills, context files

/**
 * {dir, source?="path"} -> loadSkillsFromDir; {dirs, cwd?, agentDir?} -> loadSkills over exactly
 * those paths; {cwd, agentDir?, skillPaths?=[], includeDefaults?=true} -> loadSkills.
 * Result {skills, diagnostics}; format:true adds info.prompt = formatSkillsForPrompt(skills).
 */
async function opSkills(request) {
	let loaded;
	if (typeof request.dir === "string") {
		loaded = pi.loadSkillsFromDir({ dir: request.dir, source: request.source ?? "path" });
	} else if (Array.isArray(request.dirs)) {
		loaded = pi.loadSkills({
			cwd: request.cwd ?? process.cwd(),
			agentDir: request.agentDir ?? pi.getAgentDir(),
			skillPaths: request.dirs,
			includeDefaults: false,
		});
	} else if (typeof request.cwd === "string") {
		// pi 0.73 reads a missing includeDefaults as false, so it is always passed
		loaded = pi.loadSkills({
			cwd: request.cwd,
			agentDir: request.agentDir ?? pi.getAgentDir(),
			skillPaths: request.skillPaths ?? [],
			includeDefaults: request.includeDefaults ?? true,
		});
	} else {
		throw new Error('give "dir", "dirs" or "cwd"');
	}
	const info = request.format ? { prompt: pi.formatSkillsForPrompt(loaded.skills) } : {};
	return answer({ skills: loaded.skills.map(describeSkill), diagnostics: loaded.diagnostics }, info);
}

/** {cwd, agentDir?} -> loadProjectContextFiles: [{path, content}]. */
async function opContextFiles(request) {
	if (typeof request.cwd !== "string") throw new Error('give "cwd"');
	return answer(pi.loadProjectContextFiles({ cwd: request.cwd, agentDir: request.agentDir ?? pi.getAgentDir() }));
}

/**
 * Prompt snippets and guidelines of pi's built-in tools, collected the way pi's AgentSession does
 * before it builds the system prompt (snippets on one line, guidelines trimmed and de-duplicated).
 */
function builtinToolTexts(toolNames, cwd) {
	const toolSnippets = {};
	const promptGuidelines = [];
	for (const name of toolNames) {
		if (!pi.allToolNames.has(name)) continue;
		const definition = pi.createToolDefinition(name, cwd);
		const snippet = (definition.promptSnippet ?? "").replace(/[\r\n]+/g, " ").replace(/\s+/g, " ").trim();
		if (snippet) toolSnippets[name] = snippet;
		const guidelines = (definition.promptGuidelines ?? []).map((text) => text.trim()).filter(Boolean);
		promptGuidelines.push(...new Set(guidelines));
	}
	return { toolSnippets, promptGuidelines };
}

/**
 * {options, now?, tz?, builtinToolMetadata?} -> buildSystemPrompt(options) (text).
 * now freezes the clock; tz is TZ while building (pi prints the local date). builtinToolMetadata
 * adds the built-in tools' snippets and guidelines for options.selectedTools (default read, bash,
 * edit, write) as pi's app does; explicit snippets win, explicit guidelines come after.
 * info: readmePath, docsPath, examplesPath (pi's documentation paths in the default prompt).
 */
async function opSystemPrompt(request) {
	const options = structuredClone(request.options ?? {});
	if (request.builtinToolMetadata) {
		const tools = options.selectedTools ?? ["read", "bash", "edit", "write"];
		const texts = builtinToolTexts(tools, options.cwd ?? process.cwd());
		options.toolSnippets = { ...texts.toolSnippets, ...options.toolSnippets };
		options.promptGuidelines = [...texts.promptGuidelines, ...(options.promptGuidelines ?? [])];
	}
	const environment = request.tz ? { TZ: request.tz } : {};
	const text = await withEnvironment(environment, () => atInstant(request.now, () => pi.buildSystemPrompt(options)));
	return answer(text, { readmePath: pi.getReadmePath(), docsPath: pi.getDocsPath(), examplesPath: pi.getExamplesPath() });
}

/**
 * {cwd, agentDir, home?, additionalSkillPaths?, additionalPromptTemplatePaths?, noSkills?,
 *  noPromptTemplates?, noContextFiles?, systemPrompt?, appendSystemPrompt?: [text],
 *  noExtensions?=true, noThemes?=true}
 * -> pi's app-level discovery (DefaultResourceLoader.reload): {skills, skillDiagnostics, prompts,
 *    promptDiagnostics, agentsFiles, systemPrompt, appendSystemPrompt}. home is $HOME meanwhile.
 */
async function opResources(request) {
	if (typeof request.cwd !== "string" || typeof request.agentDir !== "string") {
		throw new Error('give "cwd" and "agentDir"');
	}
	return withEnvironment(request.home ? { HOME: request.home } : {}, async () => {
		const loader = new pi.DefaultResourceLoader({
			cwd: request.cwd,
			agentDir: request.agentDir,
			additionalSkillPaths: request.additionalSkillPaths,
			additionalPromptTemplatePaths: request.additionalPromptTemplatePaths,
			noExtensions: request.noExtensions ?? true,
			noThemes: request.noThemes ?? true,
			noSkills: request.noSkills,
			noPromptTemplates: request.noPromptTemplates,
			noContextFiles: request.noContextFiles,
			systemPrompt: request.systemPrompt,
			appendSystemPrompt: request.appendSystemPrompt,
		});
		await loader.reload();
		const { skills, diagnostics: skillDiagnostics } = loader.getSkills();
		const { prompts, diagnostics: promptDiagnostics } = loader.getPrompts();
		return answer({
			skills: skills.map(describeSkill),
			skillDiagnostics,
			prompts: prompts.map(({ name, description, argumentHint, filePath, sourceInfo, content }) => ({
				name,
				description,
				argumentHint,
				filePath,
				sourceInfo,
				content,
			})),
			promptDiagnostics,
			agentsFiles: loader.getAgentsFiles().agentsFiles,
			systemPrompt: loader.getSystemPrompt() ?? null,
			appendSystemPrompt: loader.getAppendSystemPrompt(),
		});
	});
}

// --------------------------------------------------------------------------------------------
// Dispatch

const OPERATIONS = {
	version: opVersion,
	context: opContext,
	load: opLoad,
	loadOutline: opLoadOutline,
	list: opList,
	script: opScript,
	cut: opCut,
	estimate: opEstimate,
	tokens: opTokens,
	prepare: opPrepare,
	skills: opSkills,
	contextFiles: opContextFiles,
	systemPrompt: opSystemPrompt,
	resources: opResources,
};

async function handle(line) {
	if (line.trim() === "") return;
	let request;
	try {
		request = JSON.parse(line);
	} catch (error) {
		send({ op: null, error: `not a JSON request: ${error.message}` });
		return;
	}
	const head = { ...(ownKey(request, "id") ? { id: request.id } : {}), op: request.op ?? null };
	const operation = ownKey(OPERATIONS, request.op) ? OPERATIONS[request.op] : undefined;
	if (!operation) {
		send({ ...head, error: `unknown op: ${request.op}` });
		return;
	}
	try {
		const { result, info } = await operation(request);
		send({ ...head, result: result ?? null, ...(info && Object.keys(info).length > 0 ? { info } : {}) });
	} catch (error) {
		send({ ...head, error: error?.message ?? String(error) });
	}
}

async function loadPi() {
	for (const module of PI_MODULES) {
		const exports = await import(pathToFileURL(path.join(PACKAGE_DIR, "dist", module)).href);
		for (const [name, value] of Object.entries(exports)) if (!ownKey(pi, name)) pi[name] = value;
	}
}

try {
	await loadPi();
} catch (error) {
	send({ op: null, error: `cannot load pi from ${PACKAGE_DIR}: ${error?.message ?? error}` });
	process.exit(2);
}
for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
	await handle(line);
}
