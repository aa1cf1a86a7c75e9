/** The Show System Prompt document: its sources with token counts, then the prompt as sent (pure). */

export interface SystemPromptResult {
  text: string;
  tokens: number;
  sources: { kind: string; path: string; tokens: number }[];
  skills?: { name: string; disableModelInvocation?: boolean }[];
  diagnostics?: { path: string; severity: string; message: string }[];
}

const KIND_LABELS: Record<string, string> = {
  system: "SYSTEM.md (replaces the default prompt)",
  append: "APPEND_SYSTEM.md",
  agents: "context file",
  skill: "skill",
};

/** Thousands separated, as people read counts. */
export function formatCount(count: number): string {
  return count.toLocaleString("en-US");
}

/** The line that separates the overview from the prompt itself. */
export const PROMPT_MARKER = "──────── the system prompt as sent to the model ────────";

export function systemPromptDocument(result: SystemPromptResult, cwd: string | undefined): string {
  const lines = [`pi system prompt${cwd ? ` for ${cwd}` : ""}: ${formatCount(result.tokens)} tokens`, ""];
  if (result.sources.length === 0) {
    lines.push("Sources: pi's built-in prompt only (no context files, SYSTEM.md or skills).");
  } else {
    lines.push("Sources, in prompt order:");
    const width = Math.max(...result.sources.map((source) => formatCount(source.tokens).length));
    for (const source of result.sources) {
      lines.push(`  ${formatCount(source.tokens).padStart(width)} tokens  ${KIND_LABELS[source.kind] ?? source.kind}  ${source.path}`);
    }
    const fromFiles = result.sources.reduce((sum, source) => sum + source.tokens, 0);
    lines.push(`  (pi's own text and the tool list: about ${formatCount(Math.max(0, result.tokens - fromFiles))} tokens)`);
  }
  const hidden = (result.skills ?? []).filter((skill) => skill.disableModelInvocation).map((skill) => skill.name);
  if (hidden.length > 0) lines.push("", `Skills the model is not shown (disable-model-invocation): ${hidden.join(", ")}`);
  if ((result.diagnostics ?? []).length > 0) {
    lines.push("", "Problems:");
    for (const diagnostic of result.diagnostics ?? []) lines.push(`  ${diagnostic.severity}: ${diagnostic.path}: ${diagnostic.message}`);
  }
  lines.push("", PROMPT_MARKER, "", result.text);
  return lines.join("\n");
}
