/**
 * Which server to start, in the order: the user's `pi.server.command`, else the user's
 * `pi.server.python`, else `pi-lsp` on PATH, else the private environment built from the shipped
 * wheel (serverEnvironment.ts). Pure: PATH lookups are injected.
 */
import * as path from "node:path";

export interface ServerCommand {
  command: string;
  args: string[];
}

/** Where the server comes from; `python` and `private` still need serverEnvironment.ts to become a command. */
export type ServerChoice =
  | ({ kind: "command" } & ServerCommand)
  | { kind: "python"; python: string }
  | { kind: "private" };

/** Thrown when no server can be started; its message tells the user what to set. */
export class ServerNotFoundError extends Error {}

/**
 * Choose the server. `configured` is the `pi.server.command` array, `python` the
 * `pi.server.python` string; `findOnPath` looks a program up on PATH (injected so tests need no
 * real PATH). vscode-languageclient appends `--stdio` to the arguments, which pi-lsp accepts.
 */
export function chooseServer(
  configured: unknown,
  python: unknown,
  findOnPath: (program: string) => string | undefined,
): ServerChoice {
  if (Array.isArray(configured) && configured.length > 0) {
    if (!configured.every((part) => typeof part === "string" && part.length > 0)) {
      throw new ServerNotFoundError(
        "pi.server.command must be a list of non-empty strings, e.g. [\"/path/to/pi-lsp\"].",
      );
    }
    const [command, ...args] = configured as string[];
    return { kind: "command", command, args };
  }
  if (typeof python === "string" && python.trim() !== "") return { kind: "python", python: python.trim() };
  const found = findOnPath("pi-lsp");
  if (found !== undefined) return { kind: "command", command: found, args: [] };
  return { kind: "private" };
}

/**
 * The program of `pi.server.command`, checked before anything starts: a path must name an
 * executable file, a bare name must be on PATH. Otherwise the one error the user sees is
 * "pi.server.command: /path not found" (not a client that fails to start five times over).
 */
export function checkProgram(
  program: string,
  isExecutable: (file: string) => boolean,
  findOnPath: (program: string) => string | undefined,
): void {
  const found = program.includes("/") || program.includes("\\") ? isExecutable(program) : findOnPath(program) !== undefined;
  if (!found) throw new ServerNotFoundError(`pi.server.command: ${program} not found`);
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

/** The settings that decide which server runs (user settings only, see settings.ts). */
export const SERVER_SETTINGS = ["server.command", "server.python", "server.shared"] as const;

/** The server settings as one comparable value: it changes exactly when one of them does. */
export function serverSettingsKey(read: (key: (typeof SERVER_SETTINGS)[number]) => unknown): string {
  return JSON.stringify(SERVER_SETTINGS.map((key) => read(key) ?? null));
}

/**
 * `resolve()` again while the server settings moved under it (at most `attempts` times): resolving
 * may take seconds (a private environment being built), and a server resolved from settings that
 * have since changed is not the one they name (seen in code-server: a machine setting in the user
 * settings is dropped once VS Code knows the window is remote). Returns what was resolved and the
 * key of the settings it was resolved from.
 */
export async function resolveSettled<T>(
  key: () => string,
  resolve: () => Promise<T>,
  attempts = 3,
): Promise<{ resolved: T; key: string }> {
  for (let attempt = 1; ; attempt += 1) {
    const before = key();
    const resolved = await resolve();
    if (key() === before || attempt >= attempts) return { resolved, key: before };
  }
}
