/** The `pi.*` editor settings as the server's settings object (initializationOptions.pi). */

/** Reads one setting; `undefined` when the user left it at its default. */
export type SettingReader = (key: string) => unknown;

const NUMBER_KEYS = ["compaction.reserveTokens", "compaction.keepRecentTokens"] as const;
const STRING_KEYS = ["model", "thinkingLevel"] as const;

/**
 * Build the nested settings object the protocol expects. Only values the user set are sent, so
 * the server's own defaults and settings files keep deciding everything else; empty strings mean
 * "not set".
 */
export function piSettings(read: SettingReader): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  const compaction: Record<string, unknown> = {};
  const enabled = read("compaction.enabled");
  if (typeof enabled === "boolean") compaction.enabled = enabled;
  for (const key of NUMBER_KEYS) {
    const value = read(key);
    if (typeof value === "number" && Number.isFinite(value)) {
      compaction[key.slice("compaction.".length)] = value;
    }
  }
  if (Object.keys(compaction).length > 0) settings.compaction = compaction;
  for (const key of STRING_KEYS) {
    const value = read(key);
    if (typeof value === "string" && value !== "") settings[key] = value;
  }
  return settings;
}
