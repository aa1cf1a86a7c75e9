// The official ACP TypeScript SDK as a client of the real `pi-lsp acp` (driven by test_acp_sdk.py).
//
// usage: node client.mjs CONFIG.json   (prints one JSON report on stdout)
// CONFIG: {command: [...], env: {...}, cwd, phase: "first" | "load" | "resume" | "pages" | "live", sessionId?, image?, …}
//
// Every line the agent writes is checked against the SDK's own v1 JSON schema (schema/v1/schema.json)
// with ajv: each answer against the response type of the request it answers (or Error), each
// notification and request against its params type. Problems are reported, never thrown, so the
// Python side sees all of them.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { client, ndJsonStream, methods } from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";

const here = dirname(fileURLToPath(import.meta.url));
const schemaPath = join(here, "node_modules", "@agentclientprotocol", "sdk", "schema", "v1", "schema.json");
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
const config = JSON.parse(readFileSync(process.argv[2], "utf8"));

// ---------------------------------------------------------------- schema checks of every agent message
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema(schema, "acp");
const validators = new Map();
function check(defName, value, what) {
  let validate = validators.get(defName);
  if (!validate) {
    validate = ajv.getSchema(`acp#/$defs/${defName}`);
    if (!validate) throw new Error(`no ${defName} in the schema`);
    validators.set(defName, validate);
  }
  report.validated += 1;
  if (!validate(value)) {
    report.schemaErrors.push({ what, defName, errors: validate.errors.slice(0, 5), value: JSON.stringify(value).slice(0, 400) });
  }
}
const RESPONSES = {
  initialize: "InitializeResponse",
  authenticate: "AuthenticateResponse",
  "session/new": "NewSessionResponse",
  "session/load": "LoadSessionResponse",
  "session/resume": "ResumeSessionResponse",
  "session/list": "ListSessionsResponse",
  "session/close": "CloseSessionResponse",
  "session/prompt": "PromptResponse",
  "session/set_mode": "SetSessionModeResponse",
  "session/set_config_option": "SetSessionConfigOptionResponse",
};
const PARAMS = {
  "session/update": "SessionNotification",
  "session/request_permission": "RequestPermissionRequest",
  "fs/read_text_file": "ReadTextFileRequest",
};
const sentMethods = new Map(); // our request id → method

function onAgentLine(line) {
  if (!line.trim()) return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    report.schemaErrors.push({ what: "not JSON", value: line.slice(0, 200) });
    return;
  }
  report.received += 1;
  if (message.jsonrpc !== "2.0") report.schemaErrors.push({ what: "jsonrpc", value: line.slice(0, 200) });
  if (message.method) {
    const def = PARAMS[message.method];
    if (!def) report.schemaErrors.push({ what: `unexpected method ${message.method}` });
    else check(def, message.params, message.method);
    check("id" in message ? "AgentRequest" : "AgentNotification", message, "envelope");
  } else if ("error" in message) {
    check("Error", message.error, `error of ${sentMethods.get(message.id)}`);
  } else {
    const method = sentMethods.get(message.id);
    const def = RESPONSES[method];
    if (!def) report.schemaErrors.push({ what: `answer to unknown id ${message.id}` });
    else check(def, message.result, method);
    check("AgentResponse", message, "envelope");
  }
}

// ---------------------------------------------------------------- the agent process, tapped both ways
const child = spawn(config.command[0], config.command.slice(1), {
  cwd: config.cwd,
  env: config.env,
  stdio: ["pipe", "pipe", "inherit"],
});
let pendingText = "";
const decoder = new TextDecoder();
const input = new ReadableStream({
  start(controller) {
    child.stdout.on("data", (chunk) => {
      pendingText += decoder.decode(chunk, { stream: true });
      let newline;
      while ((newline = pendingText.indexOf("\n")) >= 0) {
        onAgentLine(pendingText.slice(0, newline));
        pendingText = pendingText.slice(newline + 1);
      }
      try {
        controller.enqueue(new Uint8Array(chunk));
      } catch {
        // the SDK closed its side (the connection ended): the tap above still saw the line
      }
    });
    child.stdout.on("end", () => {
      try {
        controller.close();
      } catch {
        // already closed by the SDK
      }
    });
  },
});
const encoder = new TextDecoder();
const output = new WritableStream({
  write(chunk) {
    for (const line of encoder.decode(chunk).split("\n")) {
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      if (message.method && "id" in message) sentMethods.set(message.id, message.method);
    }
    return new Promise((resolve, reject) => child.stdin.write(chunk, (error) => (error ? reject(error) : resolve())));
  },
  close() {
    child.stdin.end();
  },
});

// ---------------------------------------------------------------- the client
const report = { fsReads: [], sequence: [], validated: 0, received: 0, schemaErrors: [], updates: [], permissions: [], results: {}, errors: {} };
const waiters = [];
function onUpdate(params) {
  report.updates.push(params);
  const u = params.update;
  report.sequence.push(`${u.sessionUpdate}:${u.toolCallId ?? ""}:${u.content && u.content.length ? "content" : ""}`);
  for (const waiter of [...waiters]) {
    if (waiter.predicate(params)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(params);
    }
  }
}
function waitForUpdate(predicate) {
  const seen = report.updates.find(predicate);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => waiters.push({ predicate, resolve }));
}
const kinds = (updates) => updates.map((u) => u.update.sessionUpdate);

// The editor's buffers: unsaved.txt is open with changes not on disk; other files are read from disk.
const UNSAVED = "unsaved buffer text\n";
const app = client({ name: "pi-lsp-acp-test" })
  .onRequest(methods.client.fs.readTextFile, ({ params }) => {
    report.fsReads.push(params.path);
    if (params.path.endsWith("/unsaved.txt")) return { content: UNSAVED };
    return { content: readFileSync(params.path, "utf8") };
  })
  .onNotification(methods.client.session.update, ({ params }) => onUpdate(params))
  .onRequest(methods.client.session.requestPermission, async ({ params, agent }) => {
    report.permissions.push(params);
    report.sequence.push(`permission:${params.toolCall.toolCallId}`);
    const content = JSON.stringify(params.toolCall.content ?? []);
    if (content.includes("hold-command")) {
      // the user cancels the turn while the question is open: ACP says answer it "cancelled"
      await agent.notify(methods.agent.session.cancel, { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    const optionId = content.includes("rejected-command") ? "reject_once" : "allow_once";
    return { outcome: { outcome: "selected", optionId } };
  });

async function attempt(name, promise) {
  try {
    report.results[name] = await promise;
  } catch (error) {
    report.errors[name] = { code: error.code, message: error.message, data: error.data };
  }
  return report.results[name];
}

const stream = ndJsonStream(output, input);
const PROMPT_ONE = "Edit a.txt, then run two commands";

await app.connectWith(stream, async (agent) => {
  const init = await attempt("initialize", agent.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: config.phase === "first", writeTextFile: false }, terminal: false },
    clientInfo: { name: "pi-lsp-acp-test", version: "1" },
  }));
  if (!init) return;
  const cwd = config.project;
  if (config.phase === "first") {
    const created = await attempt("new", agent.request(methods.agent.session.new, { cwd, mcpServers: [] }));
    const sessionId = created.sessionId;
    report.sessionId = sessionId;
    await waitForUpdate((u) => u.update.sessionUpdate === "available_commands_update");
    // 1. thinking, text, an edit (diff), a bash call allowed and one rejected
    await attempt("prompt1", agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: PROMPT_ONE }] }));
    report.afterPrompt1 = report.updates.length;
    // 2. cancel mid-stream; a second prompt meanwhile is refused
    const second = agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Tell a long story" }] });
    await waitForUpdate((u, i) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text.includes("Once upon"));
    await attempt("busy", agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "meanwhile" }] }));
    await agent.notify(methods.agent.session.cancel, { sessionId });
    await attempt("prompt2", second);
    // 3. modes and config options
    await attempt("setMode", agent.request(methods.agent.session.setMode, { sessionId, modeId: "ask" }));
    await attempt("setThinking", agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "thinking_level", value: "high" }));
    await attempt("badMode", agent.request(methods.agent.session.setMode, { sessionId, modeId: "yolo" }));
    await attempt("setMode2", agent.request(methods.agent.session.setMode, { sessionId, modeId: "acceptEdits" }));
    // 4. an image and resources
    await attempt("prompt3", agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "Look at these" },
        { type: "image", data: config.image, mimeType: "image/png" },
        { type: "resource", resource: { uri: `file://${cwd}/notes.md`, text: "embedded notes", mimeType: "text/markdown" } },
        { type: "resource_link", uri: `file://${cwd}/b.txt`, name: "b.txt" },
      ],
    }));
    // 5. the tools see the editor's unsaved buffer (fs/read_text_file): read it, refuse to edit it
    await attempt("prompt5", agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Read and edit unsaved.txt" }] }));
    // 6. cancelled while a permission question is open
    await attempt("prompt4", agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Run the held command" }] }));
    await attempt("list", agent.request(methods.agent.session.list, { cwd }));
    await attempt("unknownSession", agent.request(methods.agent.session.prompt, { sessionId: "no-such-session", prompt: [{ type: "text", text: "x" }] }));
    await attempt("close", agent.request(methods.agent.session.close, { sessionId }));
  } else if (config.phase === "load") {
    await attempt("load", agent.request(methods.agent.session.load, { sessionId: config.sessionId, cwd, mcpServers: [] }));
    report.replayed = kinds(report.updates);
    await attempt("close", agent.request(methods.agent.session.close, { sessionId: config.sessionId }));
  } else if (config.phase === "resume") {
    await attempt("resume", agent.request(methods.agent.session.resume, { sessionId: config.sessionId, cwd, mcpServers: [] }));
    report.afterResume = kinds(report.updates);
    await attempt("name", agent.request(methods.agent.session.prompt, { sessionId: config.sessionId, prompt: [{ type: "text", text: "/name From ACP" }] }));
    await attempt("session", agent.request(methods.agent.session.prompt, { sessionId: config.sessionId, prompt: [{ type: "text", text: "/session" }] }));
    await attempt("compact", agent.request(methods.agent.session.prompt, { sessionId: config.sessionId, prompt: [{ type: "text", text: "/compact keep the file names" }] }));
    // the whole branch again, with what LSP and pi appended meanwhile and the compaction
    report.beforeReload = report.updates.length;
    await attempt("reload", agent.request(methods.agent.session.load, { sessionId: config.sessionId, cwd, mcpServers: [] }));
    await attempt("close", agent.request(methods.agent.session.close, { sessionId: config.sessionId }));
  } else if (config.phase === "pages") {
    // every session of cwd, page by page; config.addBetween ({path, text}) is written after page 1
    report.pages = [];
    let cursor;
    do {
      const params = cursor === undefined ? { cwd } : { cwd, cursor };
      const page = await attempt(`page${report.pages.length}`, agent.request(methods.agent.session.list, params));
      if (!page) break;
      report.pages.push(page);
      if (report.pages.length === 1 && config.addBetween) writeFileSync(config.addBetween.path, config.addBetween.text);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined && report.pages.length < 100);
    await attempt("fresh", agent.request(methods.agent.session.list, { cwd }));
    await attempt("badCursor", agent.request(methods.agent.session.list, { cwd, cursor: "not-a-cursor" }));
    const first = report.pages[0]?.nextCursor;
    if (first) await attempt("otherCwd", agent.request(methods.agent.session.list, { cursor: first }));
  } else if (config.phase === "live") {
    // load the session, tell the test (config.loadedMarker), then see what another process appends
    // (until an agent text containing config.untilText); then prompt here (config.promptText) and
    // tell the test again (config.promptedMarker); then see its next appends (config.untilText2)
    const sessionId = config.sessionId;
    await attempt("load", agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] }));
    report.afterLoad = report.updates.length;
    writeFileSync(config.loadedMarker, sessionId);
    const said = (text) => (u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text.includes(text);
    const LIVE_WAIT_MS = 30000;
    const seen = (predicate, what) => Promise.race([
      waitForUpdate(predicate),
      new Promise((resolve) => setTimeout(() => { report.errors[what] = { message: "never came" }; resolve(); }, LIVE_WAIT_MS).unref()),
    ]);
    await seen(said(config.untilText), "untilText");
    report.afterLive = report.updates.length;
    await attempt("prompt", agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: config.promptText }] }));
    report.afterPrompt = report.updates.length;
    writeFileSync(config.promptedMarker, sessionId);
    await seen(said(config.untilText2), "untilText2");
    await attempt("close", agent.request(methods.agent.session.close, { sessionId }));
  }
});
child.stdin.end();
await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on("exit", resolve)));
report.exitCode = child.exitCode;
process.stdout.write(JSON.stringify(report));
