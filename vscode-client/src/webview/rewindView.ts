/**
 * The chat's parts for rewind and review (contract v3): the *Rewind code to here* icon button on
 * messages that have a workspace state, the line saying what a restore did (with *Undo restore*), and
 * the per-hunk checkboxes of an approval card with "2 of 3 changes accepted". Each is added to (or
 * updated in) the DOM the rest of the chat draws, so cached messages and cards stay as they are.
 */
import type { ApprovalCard } from "../shared/approvalModel";
import type { RestoreNotice } from "../shared/rewindModel";
import { actionButton } from "./messageView";

const REWIND_CLASS = "rewind-code";
/** Whether each drawn article has the button, so the draw of every streamed delta touches no DOM here. */
const offered = new WeakMap<HTMLElement, boolean>();

/** Adds or removes the message's Rewind code to here button (in its actions bar, made when missing). */
export function syncRewindButton(doc: Document, article: HTMLElement, enabled: boolean, onRewind: () => void): void {
  if (offered.get(article) === enabled) return;
  offered.set(article, enabled);
  const existing = article.querySelector<HTMLButtonElement>(`:scope > .actions > button.${REWIND_CLASS}`);
  if (!enabled) {
    existing?.remove();
    return;
  }
  if (existing) return;
  let bar = article.querySelector<HTMLElement>(":scope > .actions");
  if (!bar) {
    bar = doc.createElement("div");
    bar.className = "actions";
    bar.setAttribute("role", "group");
    bar.setAttribute("aria-label", "message actions");
    article.append(bar);
  }
  const button = actionButton(doc, "rewindCode");
  button.classList.add(REWIND_CLASS);
  button.addEventListener("click", onRewind);
  bar.append(button);
}

/** What the last restore did, and Undo restore while it can be undone. */
export function restoreBlock(doc: Document, notice: RestoreNotice, onUndo: (undoId: string) => void): HTMLElement {
  const block = doc.createElement("section");
  block.className = "notice restore-notice";
  block.setAttribute("role", "status");
  block.setAttribute("aria-label", "restore result");
  const text = doc.createElement("p");
  text.textContent = notice.text;
  block.append(text);
  const undoId = notice.undoId;
  if (undoId !== undefined) {
    const undo = doc.createElement("button");
    undo.type = "button";
    undo.textContent = "Undo restore";
    undo.addEventListener("click", () => onUndo(undoId));
    block.append(undo);
  }
  return block;
}

/**
 * The approval card's per-hunk review: a checkbox per change ("Accept change 2: @@ -9,7 +9,7 @@")
 * and the count line; updated in place so the card (and a reason being typed) stays.
 */
export function syncReview(
  doc: Document,
  block: HTMLElement,
  review: ApprovalCard["review"],
  onToggle: (index: number, accepted: boolean) => void,
): void {
  let part = block.querySelector<HTMLElement>(":scope > .hunk-review");
  if (!review) {
    part?.remove();
    return;
  }
  if (!part) {
    part = doc.createElement("fieldset");
    part.className = "hunk-review";
    const legend = doc.createElement("legend");
    legend.textContent = "Changes to write";
    const summary = doc.createElement("div");
    summary.className = "hunk-summary";
    summary.setAttribute("aria-live", "polite");
    part.append(legend, summary);
    for (const hunk of review.hunks) {
      const label = doc.createElement("label");
      label.className = "hunk";
      const box = doc.createElement("input");
      box.type = "checkbox";
      box.dataset.index = String(hunk.index);
      box.addEventListener("change", () => onToggle(hunk.index, box.checked));
      label.append(box, doc.createTextNode(` Accept change ${hunk.index + 1}: ${hunk.header}`));
      part.append(label);
    }
    const actions = block.querySelector(":scope > .actions");
    block.insertBefore(part, actions);
  }
  const summary = part.querySelector(".hunk-summary");
  if (summary) summary.textContent = review.summary;
  for (const hunk of review.hunks) {
    const box = part.querySelector<HTMLInputElement>(`input[data-index="${hunk.index}"]`);
    if (box) {
      box.checked = hunk.accepted;
      box.disabled = review.edited;
    }
  }
}
