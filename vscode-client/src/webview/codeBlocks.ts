/**
 * Code blocks of a rendered reply: a header with the language and icon actions (Copy, Insert at
 * cursor, Save as new file). Added to the sanitised DOM (the markdown itself can never make a
 * button), as plain markup: rendered blocks are cached and cloned, so the buttons carry no listeners
 * and one delegated listener (codeActionAt) answers them all.
 */

export type CodeAction = "copy" | "insert" | "newFile";

const ACTIONS: [CodeAction, string, string][] = [
  ["copy", "copy", "Copy"],
  ["insert", "insert", "Insert at cursor"],
  ["newFile", "new-file", "Save as new file"],
];

/** The fence's language, from marked's `language-*` class on the code element ("" when none). */
function languageOf(code: Element): string {
  const found = Array.from(code.classList).find((name) => name.startsWith("language-"));
  return found === undefined ? "" : found.slice("language-".length);
}

/** Wraps every `pre > code` of `root` in a block with its header (language label and actions). */
export function decorateCodeBlocks(root: DocumentFragment | Element, doc: Document): void {
  for (const code of Array.from(root.querySelectorAll("pre > code"))) {
    const pre = code.parentElement as HTMLElement;
    if (pre.parentElement?.classList.contains("code-block")) continue;
    const block = doc.createElement("div");
    block.className = "code-block";
    const language = languageOf(code);
    if (language !== "") block.dataset.language = language;
    const header = doc.createElement("div");
    header.className = "code-header";
    const label = doc.createElement("span");
    label.className = "code-lang";
    label.textContent = language || "text";
    header.append(label);
    for (const [action, icon, name] of ACTIONS) {
      const button = doc.createElement("button");
      button.type = "button";
      button.className = "icon-button";
      button.dataset.codeAction = action;
      button.setAttribute("aria-label", name);
      button.title = name;
      const glyph = doc.createElement("span");
      glyph.className = `codicon codicon-${icon}`;
      glyph.setAttribute("aria-hidden", "true");
      button.append(glyph);
      header.append(button);
    }
    pre.replaceWith(block);
    block.append(header, pre);
  }
}

/** The code action a click on `target` asks for, with the block's code and language. */
export function codeActionAt(target: EventTarget | null): { action: CodeAction; code: string; language: string } | undefined {
  const button = (target as Element | null)?.closest?.("button[data-code-action]");
  const block = button?.closest(".code-block");
  const code = block?.querySelector("pre > code");
  if (!button || !block || !code) return undefined;
  return {
    action: (button as HTMLElement).dataset.codeAction as CodeAction,
    code: code.textContent ?? "",
    language: (block as HTMLElement).dataset.language ?? "",
  };
}
