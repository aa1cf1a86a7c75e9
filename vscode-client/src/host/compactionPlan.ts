/** What Compact… shows before it runs: pi/prepareCompaction described for people (pure). */
import { formatTokens } from "./gaugeModel";
import { describeEntry, TreeEntry } from "./treeModel";

export interface CompactionPlan {
  firstKeptEntryId: string;
  isSplitTurn: boolean;
  tokensBefore: number;
  summarizeCount: number;
  turnPrefixCount: number;
  readFiles: string[];
  modifiedFiles: string[];
  hasPreviousSummary: boolean;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

function fileList(files: string[]): string {
  const shown = files.slice(0, 5).join(", ");
  return files.length > 5 ? `${shown} and ${files.length - 5} more` : shown;
}

/** The question's one line and its detail: what is summarised, what is kept, tokens before. */
export function describePlan(plan: CompactionPlan, firstKept: TreeEntry | undefined): { message: string; detail: string } {
  const summarised = [plural(plan.summarizeCount, "message")];
  if (plan.isSplitTurn && plan.turnPrefixCount > 0) summarised.push(`the first ${plural(plan.turnPrefixCount, "message")} of a turn that is cut`);
  const lines = [
    `Summarised: ${summarised.join(" and ")}${plan.hasPreviousSummary ? ", updating the previous summary" : ""}.`,
    `Kept as they are: the messages from ${firstKept ? `“${describeEntry(firstKept).slice(0, 80)}”` : plan.firstKeptEntryId} on.`,
    `Context now: ${formatTokens(plan.tokensBefore)} tokens.`,
  ];
  if (plan.readFiles.length > 0) lines.push(`Files read: ${fileList(plan.readFiles)}.`);
  if (plan.modifiedFiles.length > 0) lines.push(`Files changed: ${fileList(plan.modifiedFiles)}.`);
  return { message: `Compact this session (${formatTokens(plan.tokensBefore)} tokens)?`, detail: lines.join("\n") };
}

/** A `$/progress` value of pi/compact as one line for the progress notification. */
export function progressMessage(value: { kind?: string; message?: string; title?: string }): string | undefined {
  return value.message ?? value.title;
}
