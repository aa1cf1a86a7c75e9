/** What Run Shell Command says when `pi/bash` answers (pure). */

export interface ShellResult {
  output: string;
  exitCode: number | null;
  cancelled?: boolean;
  truncated?: boolean;
  entryId?: string;
}

/** One line: the command, how it ended, the last line it printed; `failed` for a non-zero exit. */
export function shellSummary(command: string, result: ShellResult): { message: string; failed: boolean } {
  const lastLine = result.output.trimEnd().split("\n").pop() ?? "";
  const ended = result.cancelled ? "stopped" : result.exitCode === null ? "ended" : `exit ${result.exitCode}`;
  const failed = result.cancelled === true || (result.exitCode !== null && result.exitCode !== 0);
  const tail = lastLine === "" ? " (no output)" : `: ${lastLine.length > 160 ? `${lastLine.slice(0, 159)}…` : lastLine}`;
  return { message: `pi: $ ${command} — ${ended}${result.truncated ? ", output truncated" : ""}${tail}`, failed };
}
