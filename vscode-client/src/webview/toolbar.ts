/**
 * The chat's toolbar: the model and thinking-level pickers. The host orders the models and says which
 * is current; a change is posted as `setModel` and the host answers with the models drawn again.
 */
import { THINKING_LEVELS, type ModelChoice, type WebviewToHost } from "../shared/chatProtocol";
import { element } from "./dom";

export interface Toolbar {
  readonly element: HTMLElement;
  /** Draws the models (the current one selected) and the thinking levels the current model allows. */
  showModels(models: readonly ModelChoice[], modelId: string, thinkingLevel: string): void;
}

export function createToolbar(doc: Document, post: (message: WebviewToHost) => void): Toolbar {
  const modelSelect = element(doc, "select", { "aria-label": "Model" });
  const thinkingSelect = element(doc, "select", { "aria-label": "Thinking level" });
  const toolbar = element(doc, "header", { class: "toolbar" });
  toolbar.append(modelSelect, thinkingSelect);
  modelSelect.addEventListener("change", () => post({ type: "setModel", modelId: modelSelect.value }));
  thinkingSelect.addEventListener("change", () => post({ type: "setModel", thinkingLevel: thinkingSelect.value }));

  function showModels(models: readonly ModelChoice[], modelId: string, thinkingLevel: string): void {
    // The host orders them: the current model on top, then each family together (an optgroup).
    const entries: HTMLElement[] = [];
    let group: HTMLOptGroupElement | undefined;
    models.forEach((model, index) => {
      const option = element(doc, "option", { value: model.id }, model.name);
      option.selected = model.id === modelId;
      if ((index === 0 && model.id === modelId) || model.family === undefined) {
        entries.push(option);
        group = undefined;
        return;
      }
      if (group?.label !== model.family) {
        group = element(doc, "optgroup", { label: model.family });
        entries.push(group);
      }
      group.append(option);
    });
    modelSelect.replaceChildren(...entries);
    const reasoning = models.find((model) => model.id === modelId)?.reasoning ?? true;
    const levels = reasoning ? THINKING_LEVELS : (["off"] as const);
    thinkingSelect.replaceChildren(
      ...levels.map((level) => {
        const option = element(doc, "option", { value: level }, `thinking: ${level}`);
        option.selected = level === thinkingLevel;
        return option;
      }),
    );
  }

  return { element: toolbar, showModels };
}
