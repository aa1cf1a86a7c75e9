/**
 * pi: Set API Key…: the Anthropic key lives in VS Code's SecretStorage and is handed to the server
 * over the connection (`pi/setApiKey`), where it stays in memory: never in a file, a log, the
 * shared server's state file or its environment. It is handed over again whenever the client
 * (re)connects, so it takes effect without a restart and survives one.
 */
import { Methods } from "../shared/protocol";
import * as vscode from "vscode";

const SECRET = "pi.anthropicApiKey";

export class ApiKeys {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly request: <T>(method: string, params: object) => Promise<T>,
  ) {}

  /** Ask for a key (empty: forget the stored one), store it, and hand it to the server. */
  async ask(): Promise<boolean> {
    const key = await vscode.window.showInputBox({
      title: "pi: Anthropic API key",
      prompt: "Stored in VS Code's secret storage and handed to pi-lsp in memory (empty: forget the stored key)",
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return false;
    if (key.trim() === "") await this.secrets.delete(SECRET);
    else await this.secrets.store(SECRET, key.trim());
    await this.handOver();
    return true;
  }

  /** Give the server the stored key, if there is one (after every connect). */
  async handOver(): Promise<void> {
    const key = await this.secrets.get(SECRET);
    await this.request(Methods.setApiKey, { apiKey: key ?? null });
  }
}
