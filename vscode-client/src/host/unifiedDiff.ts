/**
 * Unified diffs as the server writes them (`---`/`+++`/`@@` hunks, `\ No newline at end of file`):
 * parsed into hunks, applied forwards with a chosen subset of hunks (an approval's per-hunk review)
 * or backwards (a Changes view's "before" side from the file after). Pure.
 */

export interface HunkLine {
  kind: " " | "-" | "+";
  /** The line with its line break ("" at the end of a file without a final newline). */
  text: string;
}

export interface ParsedHunk {
  /** 1-based first line of the old side (0 when the old side is empty). */
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: HunkLine[];
}

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** The hunks of a unified diff (or of one hunk's text); file headers and other lines are skipped. */
export function parseHunks(diff: string): ParsedHunk[] {
  const hunks: ParsedHunk[] = [];
  let current: ParsedHunk | undefined;
  const rows = diff.split("\n");
  if (rows.at(-1) === "") rows.pop();
  for (const row of rows) {
    const header = HEADER.exec(row);
    if (header) {
      current = {
        oldStart: Number(header[1]),
        oldLines: header[2] === undefined ? 1 : Number(header[2]),
        newStart: Number(header[3]),
        newLines: header[4] === undefined ? 1 : Number(header[4]),
        lines: [],
      };
      hunks.push(current);
      continue;
    }
    if (!current) continue;
    if (row.startsWith("\\")) {
      // "\ No newline at end of file": the line before it has no line break.
      const last = current.lines.at(-1);
      if (last) last.text = last.text.replace(/\n$/, "");
      continue;
    }
    const kind = row[0];
    if (kind === " " || kind === "-" || kind === "+") current.lines.push({ kind, text: `${row.slice(1)}\n` });
  }
  return hunks;
}

/** A file's lines, each with its line break (the last may have none). */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

export class DiffMismatch extends Error {}

/** Where each hunk landed in a composed text: 0-based first line and line count of what it shows. */
export interface HunkPlacement {
  index: number;
  startLine: number;
  lineCount: number;
  /** 0-based line of the hunk's first change (after its leading context lines). */
  changeLine: number;
  accepted: boolean;
}

export interface Composed {
  text: string;
  placements: HunkPlacement[];
}

/**
 * `before` with the hunks whose index is in `accepted` applied and the others left as `before`
 * has them; where each hunk's lines are in the result. Throws DiffMismatch when a hunk's old
 * lines are not where its header says (the diff is not of this text).
 */
export function composeHunks(before: string, hunks: readonly ParsedHunk[], accepted: ReadonlySet<number>): Composed {
  const old = splitLines(before);
  const out: string[] = [];
  const placements: HunkPlacement[] = [];
  let cursor = 0; // next old line (0-based) not yet copied
  hunks.forEach((hunk, index) => {
    const start = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
    if (start < cursor || start > old.length) throw new DiffMismatch(`hunk ${index + 1} does not fit the file`);
    out.push(...old.slice(cursor, start));
    cursor = start;
    const take = accepted.has(index);
    const startLine = out.length;
    for (const line of hunk.lines) {
      if (line.kind !== "+") {
        if (old[cursor] !== line.text) throw new DiffMismatch(`hunk ${index + 1} does not match line ${cursor + 1}`);
        cursor += 1;
      }
      if (line.kind === " " || (take ? line.kind === "+" : line.kind === "-")) out.push(line.text);
    }
    const context = hunk.lines.findIndex((line) => line.kind !== " ");
    const changeLine = Math.min(startLine + Math.max(context, 0), Math.max(out.length - 1, startLine));
    placements.push({ index, startLine, lineCount: out.length - startLine, changeLine, accepted: take });
  });
  out.push(...old.slice(cursor));
  return { text: out.join(""), placements };
}

/** The diff with its sides swapped (after → before). */
export function reverseHunks(hunks: readonly ParsedHunk[]): ParsedHunk[] {
  return hunks.map((hunk) => ({
    oldStart: hunk.newStart,
    oldLines: hunk.newLines,
    newStart: hunk.oldStart,
    newLines: hunk.oldLines,
    lines: hunk.lines.map((line) => ({ kind: line.kind === "+" ? "-" : line.kind === "-" ? "+" : " ", text: line.text })),
  }));
}

/** Every hunk applied: the text after the diff. */
export function applyDiff(before: string, diff: string): string {
  const hunks = parseHunks(diff);
  return composeHunks(before, hunks, new Set(hunks.map((_hunk, index) => index))).text;
}

/** The text before the diff, from the text after it. */
export function unapplyDiff(after: string, diff: string): string {
  const hunks = reverseHunks(parseHunks(diff));
  return composeHunks(after, hunks, new Set(hunks.map((_hunk, index) => index))).text;
}
