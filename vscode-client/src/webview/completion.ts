/**
 * What the prompt box completes at the caret (pure): `@path` mentions of workspace files, written
 * as pi's own editor writes them (`@src/a.ts `, quoted as `@"my file.ts" ` when the path has a
 * space; the model sees the text as typed and pi's tools drop the leading `@`), and `/name` for a
 * prompt template or skill at the start of the prompt.
 */

export interface CompletionContext {
  kind: "mention" | "command";
  /** What was typed after `@` or `/`. */
  query: string;
  /** Where the token (with its `@` or `/`) starts. */
  start: number;
}

/** The mention or command being typed at `caret`, if any. */
export function completionAt(text: string, caret: number): CompletionContext | undefined {
  const before = text.slice(0, caret);
  const command = /^\/(\S*)$/.exec(before);
  if (command) return { kind: "command", query: command[1], start: 0 };
  const mention = /(^|\s)@("[^"]*|[^\s"]*)$/.exec(before);
  if (!mention) return undefined;
  const start = mention.index + mention[1].length;
  return { kind: "mention", query: mention[2].replace(/^"/, ""), start };
}

/** How a workspace path is written in the prompt. */
export function mentionText(path: string): string {
  return /\s/.test(path) ? `@"${path}"` : `@${path}`;
}

/** The prompt with the token at the caret replaced by the chosen item, and where the caret goes. */
export function applyCompletion(
  text: string,
  caret: number,
  context: CompletionContext,
  value: string,
): { text: string; caret: number } {
  const inserted = `${context.kind === "mention" ? mentionText(value) : `/${value}`} `;
  const rest = text.slice(caret).replace(/^\S*/, "");
  return { text: text.slice(0, context.start) + inserted + rest.replace(/^ /, ""), caret: context.start + inserted.length };
}
