/** How a tool call is shown as a compact card, and the two sides of an edit/write diff (pure). */

type Json = Record<string, unknown>;

/** Tools whose output is folded away by default (reading tools); bash shows its output live. */
const COLLAPSED_TOOLS = new Set(["read", "grep", "find", "ls"]);
/** Tools that change a file and so offer "Open diff". */
const DIFF_TOOLS = new Set(["edit", "write"]);

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** One line saying what the call does: `$ command`, `read path`, `grep "pattern" in path` … */
export function toolSummary(name: string, args: Json): string {
  const path = text(args.path);
  switch (name) {
    case "bash":
      return `$ ${text(args.command)}`;
    case "read":
    case "ls":
    case "edit":
    case "write":
      return `${name} ${path || "."}`.trimEnd();
    case "grep":
    case "find":
      return `${name} ${JSON.stringify(text(args.pattern))}${path ? ` in ${path}` : ""}`;
    default:
      return `${name} ${JSON.stringify(args)}`;
  }
}

export const isCollapsedTool = (name: string): boolean => COLLAPSED_TOOLS.has(name);
export const isDiffTool = (name: string): boolean => DIFF_TOOLS.has(name);

/** The replacements of an edit call: `edits[]`, plus pi's legacy top-level oldText/newText. */
export function editReplacements(args: Json): { oldText: string; newText: string }[] {
  const edits = Array.isArray(args.edits) ? (args.edits as unknown[]) : [];
  const replacements = edits
    .filter((edit): edit is Json => typeof edit === "object" && edit !== null)
    .map((edit) => ({ oldText: text(edit.oldText), newText: text(edit.newText) }));
  if (typeof args.oldText === "string") replacements.push({ oldText: args.oldText, newText: text(args.newText) });
  return replacements;
}

export interface DiffSides {
  title: string;
  before: string;
  after: string;
  /** The line (0-based) the diff editor opens at: the first change. */
  line?: number;
}

/**
 * The file before and after a proposed edit/write, given its current text (undefined: no such
 * file). Each edit replaces the first occurrence of its oldText, as the tool does with unique ones.
 */
export function proposedDiff(name: string, args: Json, current: string | undefined): DiffSides | undefined {
  const path = text(args.path);
  if (name === "write") return { title: `${path} (proposed write)`, before: current ?? "", after: text(args.content) };
  if (name !== "edit") return undefined;
  let after = current ?? "";
  for (const { oldText, newText } of editReplacements(args)) {
    const at = after.indexOf(oldText);
    if (at >= 0 && oldText !== "") after = after.slice(0, at) + newText + after.slice(at + oldText.length);
  }
  return { title: `${path} (proposed edit)`, before: current ?? "", after };
}

/**
 * For a finished edit/write card. An edit is shown as the whole file at its first change: `after`
 * is the file now (`current`), `before` it with each newText put back to its oldText, `line` the
 * first changed line (0-based). When that cannot be done (no file, a deletion's empty newText, the
 * text changed since) it is the call's own texts: what it replaced and with what.
 */
export function recordedDiff(name: string, args: Json, current?: string): DiffSides | undefined {
  const path = text(args.path);
  if (name === "write") return { title: `${path} (written)`, before: "", after: text(args.content) };
  if (name !== "edit") return undefined;
  const replacements = editReplacements(args);
  const whole = current === undefined ? undefined : wholeFileSides(current, replacements);
  if (whole) return { title: `${path} (edit)`, ...whole };
  const join = (parts: string[]): string => parts.join("\n…\n");
  return {
    title: `${path} (edit, the changed parts only)`,
    before: join(replacements.map((r) => r.oldText)),
    after: join(replacements.map((r) => r.newText)),
  };
}

/** The file now and before the replacements, with the first changed line; undefined when a newText is not found. */
function wholeFileSides(current: string, replacements: { oldText: string; newText: string }[]): { before: string; after: string; line: number } | undefined {
  if (replacements.length === 0) return undefined;
  let first = current.length;
  for (const { newText } of replacements) {
    const at = newText === "" ? -1 : current.indexOf(newText);
    if (at < 0) return undefined;
    first = Math.min(first, at);
  }
  let before = current;
  for (const { oldText, newText } of replacements) {
    const at = before.indexOf(newText);
    if (at < 0) return undefined;
    before = before.slice(0, at) + oldText + before.slice(at + newText.length);
  }
  return { before, after: current, line: current.slice(0, first).split("\n").length - 1 };
}
