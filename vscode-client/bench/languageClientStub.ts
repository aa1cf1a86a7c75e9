/**
 * The parts of `vscode-languageclient` the chat's host code reaches while streaming, for the
 * benchmark: the real package extends `vscode` classes (CompletionItem …) that the benchmark's
 * `vscode` stand-in does not have, and no request goes through a language client there.
 */
export const WorkDoneProgress = { type: { method: "$/progress" } };

export class LanguageClient {}
