// Runs pi's own built-in tools (from the pi npm package) for differential tests.
// One JSON request per stdin line, one JSON answer per stdout line, answered in order.
// Requests: {op:"definitions"} | {op:"execute", tool, cwd, args, abortAfterMs?}
//           {op:"validate", tool, args} | {op:"prepare", tool, args} | {op:"editPreview", cwd, path, edits}
//           {op:"userBash", cwd, command, abortAfterMs?}
import { createInterface } from "node:readline";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.env.PI_ORACLE_DIR;
if (!root) throw new Error("PI_ORACLE_DIR must name the folder holding node_modules");
const pkg = join(root, "node_modules", "@mariozechner");
const load = (rel) => import(pathToFileURL(join(pkg, rel)).href);

const tools = await load("pi-coding-agent/dist/core/tools/index.js");
const editDiff = await load("pi-coding-agent/dist/core/tools/edit-diff.js");
const bashExecutor = await load("pi-coding-agent/dist/core/bash-executor.js");
const validation = await load("pi-ai/dist/utils/validation.js");

function withAbort(abortAfterMs) {
  const controller = new AbortController();
  if (typeof abortAfterMs === "number") setTimeout(() => controller.abort(), abortAfterMs);
  return controller.signal;
}

// Partial results a tool sent: how many, the first and the last (bash sends them, cumulative).
function summarise(updates) {
  return { count: updates.length, first: updates[0] ?? null, last: updates.at(-1) ?? null };
}

async function handle(req) {
  switch (req.op) {
    case "definitions": {
      const defs = tools.createAllToolDefinitions(process.cwd());
      const out = {};
      for (const [name, def] of Object.entries(defs)) {
        out[name] = {
          name: def.name,
          label: def.label,
          description: def.description,
          parameters: JSON.parse(JSON.stringify(def.parameters)),
          promptSnippet: def.promptSnippet ?? null,
          promptGuidelines: def.promptGuidelines ?? [],
        };
      }
      return out;
    }
    case "execute": {
      const def = tools.createToolDefinition(req.tool, req.cwd);
      const updates = [];
      const onUpdate = (partial) => updates.push(JSON.parse(JSON.stringify(partial)));
      let args = req.args;
      if (def.prepareArguments) args = def.prepareArguments(args);
      try {
        const result = await def.execute("call-1", args, withAbort(req.abortAfterMs), onUpdate, undefined);
        return { ok: JSON.parse(JSON.stringify(result)), updates: summarise(updates) };
      } catch (error) {
        return { error: error instanceof Error ? error.message : String(error), updates: summarise(updates) };
      }
    }
    case "prepare": {
      const def = tools.createToolDefinition(req.tool, req.cwd ?? process.cwd());
      return def.prepareArguments ? def.prepareArguments(req.args) : req.args;
    }
    case "validate": {
      const def = tools.createToolDefinition(req.tool, process.cwd());
      try {
        return { ok: validation.validateToolArguments(def, { name: req.tool, arguments: req.args }) };
      } catch (error) {
        return { error: error.message };
      }
    }
    case "editPreview":
      return await editDiff.computeEditsDiff(req.path, req.edits, req.cwd);
    case "userBash": {
      const ops = tools.createLocalBashOperations();
      const chunks = [];
      const result = await bashExecutor.executeBashWithOperations(req.command, req.cwd, ops, {
        onChunk: (text) => chunks.push(text),
        signal: withAbort(req.abortAfterMs),
      });
      return { ...result, streamed: chunks.join("") };
    }
    default:
      throw new Error(`unknown op ${req.op}`);
  }
}

const rl = createInterface({ input: process.stdin });
let queue = Promise.resolve();
rl.on("line", (line) => {
  if (!line.trim()) return;
  queue = queue.then(async () => {
    const req = JSON.parse(line);
    let answer;
    try {
      answer = { id: req.id, result: await handle(req) };
    } catch (error) {
      answer = { id: req.id, fail: String(error?.stack ?? error) };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  });
});
