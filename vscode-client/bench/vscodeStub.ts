/**
 * The few `vscode` APIs the chat view's host code touches while streaming, for the benchmark
 * (bundled in place of the editor's module; nothing here is timed).
 */
import * as path from "node:path";
import { pathToFileURL } from "node:url";

export class Uri {
  private constructor(readonly fsPath: string) {}
  static file(fsPath: string): Uri {
    return new Uri(fsPath);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(path.join(base.fsPath, ...parts));
  }
  toString(): string {
    return pathToFileURL(this.fsPath).toString();
  }
}

export const window = {
  // The chat notifies when a run ends in an unfocused window (chatAttention.ts): this one is focused.
  state: { focused: true },
  showInputBox: () => Promise.resolve(undefined),
  showInformationMessage: () => Promise.resolve(undefined),
  showErrorMessage: () => Promise.resolve(undefined),
};

export class EventEmitter<T> {
  private listeners: ((value: T) => void)[] = [];
  readonly event = (listener: (value: T) => void) => {
    this.listeners.push(listener);
    return { dispose: () => undefined };
  };
  fire(value: T): void {
    for (const listener of this.listeners) listener(value);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class ThemeIcon {
  constructor(readonly id: string) {}
}

export const ViewColumn = { Beside: -2, Active: -1, One: 1 };
export const commands = { executeCommand: () => Promise.resolve(undefined) };
export const workspace = { getConfiguration: () => ({ get: () => undefined }) };
export const ProgressLocation = { Notification: 15, Window: 10 };
