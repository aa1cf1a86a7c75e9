/**
 * The chat's composer: the status line, the prompt box (its draft kept in the webview's state), `@` and
 * `/` completion, attached images, and Send / Stop. Enter sends (with a run active: steers), Alt+Enter
 * queues a follow-up, Shift+Enter is a new line.
 */
import type { HostToWebview, PromptImage, SendMode, WebviewToHost } from "../shared/chatProtocol";
import { applyCompletion, completionAt, type CompletionContext } from "./completion";
import { element } from "./dom";

/** Largest image accepted (pi sends at most about this much base64 per image to the model). */
export const MAX_IMAGE_BYTES = 3_300_000;
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export interface SavedState {
  draft?: string;
}

/** Where the draft is kept across hiding and reloads (the webview API's state). */
export interface DraftStore {
  getState(): SavedState | undefined;
  setState(state: SavedState): void;
}

export interface Composer {
  /** The parts to put in the page, in order: status, suggestions, attachments, label, box, buttons. */
  readonly elements: readonly HTMLElement[];
  /** The box's hint follows whether a run is active (Enter then steers). */
  showRunning(running: boolean): void;
  setStatus(text: string): void;
  /** Text and images given back (a failed prompt, Branch from here): put before what is typed. */
  restoreDraft(text: string, images: readonly PromptImage[]): void;
  focus(): void;
  /** The host's answer to a completion request: shown if it still answers what is typed. */
  showCompletions(message: Extract<HostToWebview, { type: "completions" }>): void;
}

/** A file's bytes as base64, without the data: prefix. */
function readBase64(win: Window, file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new (win as unknown as { FileReader: typeof FileReader }).FileReader();
    reader.onload = () => resolve(typeof reader.result === "string" ? reader.result.replace(/^data:[^,]*,/, "") : "");
    reader.onerror = () => reject(new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

/** `onSent`: the user sent a message (the transcript then follows to the bottom). */
export function createComposer(doc: Document, win: Window, drafts: DraftStore, post: (message: WebviewToHost) => void, onSent: () => void): Composer {
  const status = element(doc, "div", { id: "status", role: "status" });
  const suggestions = element(doc, "ul", { id: "suggestions", role: "listbox", "aria-label": "Suggestions" });
  suggestions.hidden = true;
  const input = element(doc, "textarea", { id: "prompt", rows: "3", "aria-label": "Message pi" });
  const label = element(doc, "label", { for: "prompt", class: "prompt-label" }, "Message pi");
  const send = element(doc, "button", { type: "button" }, "Send");
  const stop = element(doc, "button", { type: "button", class: "secondary" }, "Stop");
  const buttons = element(doc, "div", { class: "buttons" });
  buttons.append(send, stop);
  const attachmentList = element(doc, "div", { class: "attachments", role: "list", "aria-label": "Attached images" });

  const saveDraft = (): void => drafts.setState({ draft: input.value });
  input.value = drafts.getState()?.draft ?? "";

  // ---------------------------------------------------------------- images

  let images: (PromptImage & { name: string })[] = [];

  function drawAttachments(): void {
    attachmentList.replaceChildren(
      ...images.map((image, index) => {
        const item = element(doc, "span", { role: "listitem", class: "attachment" }, `${image.name} `);
        const remove = element(doc, "button", { type: "button", "aria-label": `Remove image ${image.name}` }, "×");
        remove.addEventListener("click", () => {
          images.splice(index, 1);
          drawAttachments();
        });
        item.append(remove);
        return item;
      }),
    );
  }

  /** Pasted or dropped files: images are attached to the next message, anything else is refused with a word. */
  async function attach(files: File[]): Promise<void> {
    for (const file of files) {
      if (!IMAGE_TYPES.has(file.type)) {
        status.textContent = `${file.name || "That file"} is not a PNG, JPEG, GIF or WebP image; mention files with @ instead.`;
        continue;
      }
      if (file.size > MAX_IMAGE_BYTES) {
        status.textContent = `${file.name || "The image"} is larger than ${MAX_IMAGE_BYTES / 1_000_000} MB; attach a smaller one.`;
        continue;
      }
      images.push({ name: file.name || `image ${images.length + 1}`, mimeType: file.type, data: await readBase64(win, file) });
      drawAttachments();
    }
  }

  const imageFiles = (list: FileList | null | undefined): File[] => Array.from(list ?? []);
  input.addEventListener("paste", (event: ClipboardEvent) => {
    const files = imageFiles(event.clipboardData?.files);
    if (files.length === 0) return;
    event.preventDefault();
    void attach(files);
  });
  doc.addEventListener("dragover", (event: DragEvent) => {
    if (event.dataTransfer?.types.includes("Files")) event.preventDefault();
  });
  doc.addEventListener("drop", (event: DragEvent) => {
    const files = imageFiles(event.dataTransfer?.files);
    if (files.length === 0) return;
    event.preventDefault();
    void attach(files);
  });

  // ---------------------------------------------------------------- sending

  function submit(mode: SendMode): void {
    const text = input.value.trim();
    if (text === "" && images.length === 0) return;
    const attached = images.map(({ data, mimeType }) => ({ data, mimeType }));
    post(attached.length > 0 ? { type: "send", text, mode, images: attached } : { type: "send", text, mode });
    onSent();
    input.value = "";
    images = [];
    drawAttachments();
    saveDraft();
    closeSuggestions();
  }

  // ---------------------------------------------------------------- completion

  let completion: CompletionContext | undefined;
  let items: { value: string; detail: string }[] = [];
  let selected = 0;

  function closeSuggestions(): void {
    completion = undefined;
    items = [];
    suggestions.hidden = true;
    suggestions.replaceChildren();
    input.removeAttribute("aria-activedescendant");
  }

  function drawSuggestions(): void {
    suggestions.hidden = items.length === 0;
    suggestions.replaceChildren(
      ...items.map((item, index) => {
        const option = element(doc, "li", { role: "option", id: `suggestion-${index}` });
        option.setAttribute("aria-selected", String(index === selected));
        if (item.value === "") option.setAttribute("aria-disabled", "true"); // a note ("no templates"), never inserted
        option.textContent = item.value === "" ? item.detail : item.detail ? `${item.value} — ${item.detail}` : item.value;
        option.addEventListener("mousedown", (event) => {
          event.preventDefault();
          accept(index);
        });
        return option;
      }),
    );
    if (items.length > 0) input.setAttribute("aria-activedescendant", `suggestion-${selected}`);
  }

  function accept(index: number): void {
    const item = items[index];
    if (!completion || !item) return;
    if (item.value === "") return closeSuggestions();
    const caret = input.selectionStart ?? input.value.length;
    const next = applyCompletion(input.value, caret, completion, item.value);
    input.value = next.text;
    input.setSelectionRange(next.caret, next.caret);
    saveDraft();
    closeSuggestions();
    input.focus();
  }

  input.addEventListener("input", () => {
    saveDraft();
    const context = completionAt(input.value, input.selectionStart ?? input.value.length);
    if (!context) {
      closeSuggestions();
      return;
    }
    completion = context;
    post({ type: "complete", kind: context.kind, query: context.query });
  });

  input.addEventListener("keydown", (event) => {
    if (!suggestions.hidden && items.length > 0) {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        selected = (selected + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
        drawSuggestions();
        return;
      }
      if (event.key === "Enter" || event.key === "Tab") {
        event.preventDefault();
        accept(selected);
        return;
      }
      if (event.key === "Escape") {
        event.preventDefault();
        closeSuggestions();
        return;
      }
    }
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit(event.altKey ? "followUp" : "steer");
    }
  });
  send.addEventListener("click", () => submit("steer"));
  stop.addEventListener("click", () => post({ type: "stop" }));

  return {
    elements: [status, suggestions, attachmentList, label, input, buttons],
    showRunning(running) {
      input.placeholder = running ? "Enter: steer the run · Alt+Enter: follow-up after it" : "Enter: send · Shift+Enter: new line";
    },
    setStatus(text) {
      status.textContent = text;
    },
    restoreDraft(text, restored) {
      input.value = input.value.trim() === "" ? text : `${text}\n${input.value}`;
      for (const image of restored) images.push({ ...image, name: `image ${images.length + 1}` });
      drawAttachments();
      saveDraft();
      input.focus();
    },
    focus() {
      input.focus();
    },
    showCompletions(message) {
      if (!completion || completion.kind !== message.kind || completion.query !== message.query) return;
      items = message.items;
      selected = 0;
      drawSuggestions();
    },
  };
}
