/**
 * What `/` offers in the prompt box: the chat's own commands (/compact, /new, /model), then the
 * session's prompt templates and skills (`pi/getCommands`); with none of those, a line that says
 * so. Pure, so the list and the parsing of a sent `/command` are testable.
 */

export interface CommandItem {
  value: string;
  detail: string;
}

export const BUILTIN_COMMANDS: readonly CommandItem[] = [
  { value: "compact", detail: "Compact the conversation now (text after it: instructions for the summary)" },
  { value: "new", detail: "Start a new session" },
  { value: "model", detail: "Choose the model" },
];

/** An item with no value is a note, drawn but never inserted. */
export const NO_TEMPLATES: CommandItem = { value: "", detail: "No prompt templates or skills found for this session's folder" };

export interface ServerCommand {
  name: string;
  description?: string;
}

/** The items for `/query`: built-ins first, then templates and skills (prefix matches first), at most `limit`. */
export function commandItems(query: string, commands: readonly ServerCommand[], limit = 30): CommandItem[] {
  const needle = query.toLowerCase();
  const builtins = BUILTIN_COMMANDS.filter((command) => command.value.startsWith(needle));
  const found = commands
    .filter((command) => command.name.toLowerCase().includes(needle))
    .sort((a, b) => Number(!a.name.toLowerCase().startsWith(needle)) - Number(!b.name.toLowerCase().startsWith(needle)))
    .map((command) => ({ value: command.name, detail: command.description ?? "" }));
  return [...builtins, ...found, ...(commands.length === 0 ? [NO_TEMPLATES] : [])].slice(0, limit);
}

/** A sent text that is one of the chat's own commands (`/compact focus on tests` → compact, "focus on tests"). */
export function builtinCommand(text: string): { name: "compact" | "new" | "model"; rest: string } | undefined {
  const match = /^\/(compact|new|model)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { name: match[1] as "compact" | "new" | "model", rest: (match[2] ?? "").trim() };
}
