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

/** For a finished edit/write card: what the call replaced and with what (the call's own texts). */
export function recordedDiff(name: string, args: Json): DiffSides | undefined {
  const path = text(args.path);
  if (name === "write") return { title: `${path} (written)`, before: "", after: text(args.content) };
  if (name !== "edit") return undefined;
  const replacements = editReplacements(args);
  const join = (parts: string[]): string => parts.join("\n…\n");
  return {
    title: `${path} (edit)`,
    before: join(replacements.map((r) => r.oldText)),
    after: join(replacements.map((r) => r.newText)),
  };
}
