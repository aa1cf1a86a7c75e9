/** The `pi.*` editor settings as the server's settings object (initializationOptions.pi). */

/** Reads one setting; `undefined` when the user left it at its default. */
export type SettingReader = (key: string) => unknown;

type Kind = "string" | "number" | "boolean" | "strings" | "object";

/**
 * Every server setting of docs/protocol.md ("Settings") that the editor mirrors as `pi.<key>`,
 * with its JSON type. package.json declares the same keys (a test keeps them in step).
 */
export const SERVER_SETTINGS: Readonly<Record<string, Kind>> = {
  sessionDir: "string",
  contextWindow: "number",
  model: "string",
  thinkingLevel: "string",
  summarizer: "string",
  tokenizer: "string",
  approval: "string",
  tools: "strings",
  steeringMode: "string",
  followUpMode: "string",
  shellPath: "string",
  shellCommandPrefix: "string",
  thinkingBudgets: "object",
  "images.blockImages": "boolean",
  "compaction.enabled": "boolean",
  "compaction.reserveTokens": "number",
  "compaction.keepRecentTokens": "number",
  "compaction.model": "string",
  "branchSummary.reserveTokens": "number",
  "retry.enabled": "boolean",
  "retry.maxRetries": "number",
  "retry.baseDelayMs": "number",
  "retry.provider.maxRetries": "number",
  "retry.provider.maxRetryDelayMs": "number",
  "retry.provider.timeoutMs": "number",
};

/**
 * Settings a repository must not choose for its user (they run programs, widen what the agent may
 * do, move where sessions are written or repeat paid model calls): read from the user's own
 * settings only, never from a workspace's `.vscode/settings.json` (package.json also gives them
 * `machine` scope). The server applies the same rule to a workspace's `.pi/settings.json`.
 */
export const USER_ONLY_SETTINGS: ReadonlySet<string> = new Set([
  "server.command",
  "server.python",
  "server.shared",
  "sessionDir",
  "approval",
  "tools",
  "shellPath",
  "shellCommandPrefix",
  "retry.maxRetries",
  "retry.provider.maxRetries",
]);

function accepted(kind: Kind, value: unknown): boolean {
  switch (kind) {
    case "string":
      return typeof value === "string" && value !== "";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "strings":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length > 0;
  }
}

/**
 * Build the nested settings object the protocol expects. Only values the user set are sent, so
 * the server's own defaults and settings files keep deciding everything else; empty strings mean
 * "not set", and values of the wrong type are left out.
 */
export function piSettings(read: SettingReader): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const [key, kind] of Object.entries(SERVER_SETTINGS)) {
    const value = read(key);
    if (!accepted(kind, value)) continue;
    const parts = key.split(".");
    let target = settings;
    for (const part of parts.slice(0, -1)) target = (target[part] ??= {}) as Record<string, unknown>;
    target[parts[parts.length - 1]] = value;
  }
  return settings;
}

/** What VS Code's `inspect` gives for one setting (the scopes the user may have set it in). */
export interface InspectedSetting {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The value that counts: the most specific scope, except that user-only settings ignore the workspace. */
export function effectiveValue(key: string, inspected: InspectedSetting | undefined): unknown {
  if (inspected === undefined) return undefined;
  if (USER_ONLY_SETTINGS.has(key)) return inspected.globalValue;
  return inspected.workspaceFolderValue ?? inspected.workspaceValue ?? inspected.globalValue;
}
