#!/usr/bin/env node
// Runs pi's own agent (createAgentSession from @mariozechner/pi-coding-agent 0.73.1) for one scripted
// conversation against a model endpoint the test controls (a loopback fake of the Messages API, set in
// <agentDir>/models.json by the caller), and reports what pi handed to its model layer.
//
// Input: one JSON object on stdin
//   {cwd, agentDir, sessionDir, sessionFile?, modelId, thinkingLevel?, tools?: string[],
//    prompts: [{text, images?: [{data, mimeType}]}]}
// The caller sets PI_CODING_AGENT_DIR=<agentDir> and ANTHROPIC_API_KEY in the environment.
//
// Output: one JSON object on stdout
//   {contexts: [[AgentMessage...] per model call, as pi passed them to convertToLlm],
//    tools: [{name, description, parameters}], systemPrompt, sessionFile, thinkingLevel, model,
//    commands: [{name, description, source, path}] as pi's RPC get_commands lists them}
// Anything pi prints goes to stderr.

import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const INSTALL_ROOT = process.env.PI_ORACLE_DIR || path.join(REPO, ".pi-oracle");
const PACKAGE = path.join(INSTALL_ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "index.js");

const realLog = console.log;
console.log = (...args) => console.error(...args);

async function readStdin() {
	const chunks = [];
	for await (const chunk of process.stdin) chunks.push(chunk);
	return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function main() {
	const input = await readStdin();
	const pi = await import(pathToFileURL(PACKAGE).href);
	const authStorage = pi.AuthStorage.create(path.join(input.agentDir, "auth.json"));
	const modelRegistry = pi.ModelRegistry.create(authStorage, path.join(input.agentDir, "models.json"));
	const model = modelRegistry.find("anthropic", input.modelId);
	if (!model) throw new Error(`pi does not know model ${input.modelId}`);
	const sessionManager = input.sessionFile
		? pi.SessionManager.open(input.sessionFile, input.sessionDir)
		: pi.SessionManager.create(input.cwd, input.sessionDir);
	const { session } = await pi.createAgentSession({
		cwd: input.cwd,
		agentDir: input.agentDir,
		authStorage,
		modelRegistry,
		model,
		thinkingLevel: input.thinkingLevel,
		sessionManager,
		...(input.tools ? { tools: input.tools } : {}),
	});
	const contexts = [];
	const agent = session.agent;
	const convert = agent.convertToLlm;
	agent.convertToLlm = (messages) => {
		contexts.push(structuredClone(messages));
		return convert(messages);
	};
	for (const prompt of input.prompts) {
		await session.prompt(prompt.text, prompt.images ? { images: prompt.images } : undefined);
	}
	const tools = agent.state.tools.map((tool) => ({
		name: tool.name,
		description: tool.description,
		parameters: tool.parameters,
	}));
	const commands = [
		...session.promptTemplates.map((t) => ({
			name: t.name,
			description: t.description,
			source: "prompt",
			path: t.sourceInfo?.path,
		})),
		...session.resourceLoader.getSkills().skills.map((s) => ({
			name: `skill:${s.name}`,
			description: s.description,
			source: "skill",
			path: s.sourceInfo?.path,
		})),
	];
	realLog(
		JSON.stringify({
			commands,
			contexts,
			tools,
			systemPrompt: agent.state.systemPrompt,
			sessionFile: session.sessionFile ?? null,
			thinkingLevel: agent.state.thinkingLevel,
			model: agent.state.model.id,
		}),
	);
	process.exit(0);
}

main().catch((error) => {
	console.error(error?.stack ?? String(error));
	process.exit(1);
});
