/** Which program starts pi-lsp: the user's `pi.server.command`, else `pi-lsp` found on PATH. */
import * as path from "node:path";

export interface ServerCommand {
  command: string;
  args: string[];
}

/** Thrown when no server can be started; its message tells the user what to set. */
export class ServerNotFoundError extends Error {}

/**
 * Resolve the server command. `configured` is the `pi.server.command` array; `findOnPath` looks a
 * program up on PATH (injected so tests need no real PATH). vscode-languageclient appends
 * `--stdio` to the arguments, which pi-lsp accepts.
 */
export function resolveServerCommand(
  configured: unknown,
  findOnPath: (program: string) => string | undefined,
): ServerCommand {
  if (Array.isArray(configured) && configured.length > 0) {
    if (!configured.every((part) => typeof part === "string" && part.length > 0)) {
      throw new ServerNotFoundError(
        "pi.server.command must be a list of non-empty strings, e.g. [\"/path/to/pi-lsp\"].",
      );
    }
    const [command, ...args] = configured as string[];
    return { command, args };
  }
  const found = findOnPath("pi-lsp");
  if (found === undefined) {
    throw new ServerNotFoundError(
      "pi-lsp was not found on PATH. Install it (pip install pi-lsp, Python 3.11+) or set " +
        "pi.server.command to the program that starts it.",
    );
  }
  return { command: found, args: [] };
}

/** Look a program up on PATH the way a shell would (first executable match). */
export function findOnPathWith(
  envPath: string | undefined,
  isExecutable: (file: string) => boolean,
  program: string,
  extensions: string[] = [""],
): string | undefined {
  for (const dir of (envPath ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    for (const ext of extensions) {
      const candidate = path.join(dir, program + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}
