/** What an empty chat says: what to type, what @, / and Alt+Enter do, and (with no key) where to add one. */

const TIPS: [string, string][] = [
  ["Enter", "sends; Shift+Enter starts a new line"],
  ["@", "mentions a file of the workspace"],
  ["/", "runs /compact, /new, /model, a prompt template or a skill"],
  ["Alt+Enter", "queues a follow-up while pi works"],
];

export function emptyState(doc: Document, noApiKey: boolean): HTMLElement {
  const block = doc.createElement("section");
  block.className = "empty-state";
  block.setAttribute("aria-label", "getting started");
  const title = doc.createElement("h2");
  title.textContent = "Ask pi to read, change or run something in this workspace";
  const lead = doc.createElement("p");
  lead.textContent = noApiKey
    ? "pi needs an Anthropic API key first: run “pi: Set API Key…” (see below), then type your request in the box at the bottom."
    : "Type your request in the box at the bottom. pi asks before it changes files or runs commands, as pi.approval says.";
  const list = doc.createElement("ul");
  for (const [key, what] of TIPS) {
    const item = doc.createElement("li");
    const kbd = doc.createElement("kbd");
    kbd.textContent = key;
    item.append(kbd, ` ${what}`);
    list.append(item);
  }
  block.append(title, lead, list);
  return block;
}
