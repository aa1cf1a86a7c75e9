/**
 * Edit and resend in place: the user message becomes a multi-line editor where it is (Send,
 * Cancel; Enter sends, Shift+Enter a new line, Escape cancels), and a message that was resent offers
 * ‹ 1/2 › to flip between its versions (the sibling user messages under one parent in the tree).
 * Both are added to (or updated in) the article the chat drew, so a redraw keeps what is typed.
 */
import type { VersionPlace } from "../shared/messageVersions";
import { iconButton } from "./messageView";

const EDITOR_CLASS = "edit-box";

/** Opens the editor in a user message's article (focusing it again when already open). */
export function openEditor(doc: Document, article: HTMLElement, text: string, onSend: (text: string) => void): void {
  const open = article.querySelector<HTMLTextAreaElement>(`:scope > .${EDITOR_CLASS} textarea`);
  if (open) return open.focus();
  const box = doc.createElement("div");
  box.className = EDITOR_CLASS;
  const input = doc.createElement("textarea");
  input.setAttribute("aria-label", "Edit message");
  input.value = text;
  input.rows = Math.min(12, Math.max(2, text.split("\n").length + 1));
  const send = doc.createElement("button");
  send.type = "button";
  send.textContent = "Send";
  const cancel = doc.createElement("button");
  cancel.type = "button";
  cancel.className = "secondary";
  cancel.textContent = "Cancel";
  const buttons = doc.createElement("div");
  buttons.className = "buttons";
  buttons.append(send, cancel);
  box.append(input, buttons);

  const close = (): void => {
    box.remove();
    article.classList.remove("editing");
    article.focus();
  };
  const submit = (): void => {
    const edited = input.value.trim();
    if (edited === "") return;
    close();
    onSend(edited);
  };
  send.addEventListener("click", submit);
  cancel.addEventListener("click", close);
  input.addEventListener("keydown", (event) => {
    event.stopPropagation(); // the message list's arrow keys are the editor's here
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });
  article.classList.add("editing");
  article.append(box);
  input.focus();
  input.setSelectionRange(input.value.length, input.value.length);
}

/** What each drawn article shows of its versions, so an unchanged one is not touched again. */
const shown = new WeakMap<HTMLElement, string>();

/** Adds, updates or removes a user message's ‹ 1/2 › (`place` undefined: it has one version). */
export function syncVersions(doc: Document, article: HTMLElement, place: VersionPlace | undefined, onFlip: (step: -1 | 1) => void): void {
  const signature = place ? `${place.index}/${place.count}` : "";
  if ((shown.get(article) ?? "") === signature) return;
  shown.set(article, signature);
  article.querySelector(":scope > .versions")?.remove();
  if (!place) return;
  const group = doc.createElement("div");
  group.className = "versions";
  group.setAttribute("role", "group");
  group.setAttribute("aria-label", "versions");
  const previous = iconButton(doc, "chevron-left", "Previous version");
  previous.disabled = place.index <= 1;
  previous.addEventListener("click", () => onFlip(-1));
  const count = doc.createElement("span");
  count.className = "version-count";
  count.textContent = signature;
  count.setAttribute("aria-label", `version ${place.index} of ${place.count}`);
  const next = iconButton(doc, "chevron-right", "Next version");
  next.disabled = place.index >= place.count;
  next.addEventListener("click", () => onFlip(1));
  group.append(previous, count, next);
  const actions = article.querySelector(":scope > .actions");
  article.insertBefore(group, actions);
}
