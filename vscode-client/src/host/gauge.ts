/** The status-bar context gauge, always shown: `pi NN%`, warning colours near the threshold, click → Compact…. */
import * as vscode from "vscode";
import { ContextUsage, gaugeView } from "./gaugeModel";

export class ContextGauge implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);

  constructor() {
    this.item.command = "pi.compact";
    this.item.name = "pi context";
  }

  /** Show the usage of the open session; `undefined`: no session (the gauge stays, offering to open one). */
  show(usage: ContextUsage | undefined, estimateAfterCompaction?: number): void {
    if (usage === undefined) {
      this.item.text = "pi —";
      this.item.tooltip = "No pi session open. Click to open one.";
      this.item.command = "pi.openSession";
      this.item.backgroundColor = undefined;
      this.item.show();
      return;
    }
    this.item.command = "pi.compact";
    const reserve = vscode.workspace.getConfiguration("pi").get<number>("compaction.reserveTokens", 16384);
    const view = gaugeView(usage, reserve, estimateAfterCompaction);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor =
      view.level === "compact"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : view.level === "warning"
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
