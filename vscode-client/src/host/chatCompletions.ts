/** What the chat's prompt box completes: workspace files for `@`; for `/` the chat's own commands, prompt templates and skills. */
import * as vscode from "vscode";
import { commandItems } from "./builtinCommands";
import { rankPaths } from "./mentions";
import type { Requester } from "../shared/messageActions";
import { Methods } from "../shared/protocol";

interface Command {
  name: string;
  description?: string;
}

/** Files listed at most this often (a mention types several letters in a row). */
const FILE_LIST_TTL_MS = 10_000;
const MAX_FILES = 20_000;
/** Folders never worth mentioning (VS Code's default search excludes, which findFiles does not apply). */
const EXCLUDE = "**/{node_modules,.git,.venv,venv,__pycache__,bower_components}/**";

export class ChatCompletions {
  private files: { at: number; paths: string[] } | undefined;
  private commands: Command[] | undefined;

  constructor(private readonly request: Requester) {}

  /** Forget the cached lists (another session or folder). */
  reset(): void {
    this.files = undefined;
    this.commands = undefined;
  }

  async complete(kind: "mention" | "command", query: string): Promise<{ value: string; detail: string }[]> {
    if (kind === "mention") return rankPaths(query, await this.workspaceFiles()).map((value) => ({ value, detail: "" }));
    this.commands ??= (await this.request<{ commands: Command[] }>(Methods.getCommands, {})).commands;
    return commandItems(query, this.commands);
  }

  /** Paths of the workspace's files relative to their folder (the session's cwd is the first folder). */
  private async workspaceFiles(): Promise<string[]> {
    if (this.files && Date.now() - this.files.at < FILE_LIST_TTL_MS) return this.files.paths;
    const uris = await vscode.workspace.findFiles("**/*", EXCLUDE, MAX_FILES);
    const paths = uris.map((uri) => vscode.workspace.asRelativePath(uri, false));
    this.files = { at: Date.now(), paths };
    return paths;
  }
}
