/**
 * The parts of VS Code's workbench and of the pi Chat webview the end-to-end test works with,
 * found by their accessible names (the ones the extension promises) wherever VS Code allows.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { FrameLocator, Locator, Page } from "playwright-core";
import { eventually } from "./expect";
import { SCREENSHOTS_DIR } from "./harness";

export class Workbench {
  private shots = 0;

  /** `shotsDir`: where screenshot() saves (each test file its own, as they may run at once). */
  constructor(
    public page: Page,
    private readonly shotsDir = SCREENSHOTS_DIR,
  ) {}

  /** The pi activity-bar container's button. */
  get piContainer(): Locator {
    return this.page.locator(".activitybar").getByRole("tab", { name: /^pi\b/ });
  }

  /** The Chat view's webview document (VS Code nests it in two iframes). */
  get chat(): FrameLocator {
    return this.page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
  }

  get promptBox(): Locator {
    return this.chat.getByRole("textbox", { name: "Message pi" });
  }

  chatButton(name: string): Locator {
    return this.chat.getByRole("button", { name, exact: true });
  }

  articles(kind: "user message" | "assistant message" | "tool call" | "compaction summary" | "branch summary"): Locator {
    return this.chat.getByRole("article", { name: kind, exact: true });
  }

  /** The Chat view's header (clicking it collapses or expands the view). */
  get chatHeader(): Locator {
    return this.page.locator(".pane-header").filter({ has: this.page.locator("h3.title", { hasText: /^Chat$/ }) });
  }

  /** The rows of the Session Tree view. */
  get treeRows(): Locator {
    return this.page.locator(".pane").filter({ has: this.page.locator(".pane-header", { hasText: "Session Tree" }) }).getByRole("treeitem");
  }

  /** The context gauge in the status bar (text starting with `pi `). */
  get gauge(): Locator {
    return this.page.locator(".statusbar-item").filter({ hasText: /^pi (~?\d+|\?)%/ });
  }

  /** The quick input (input boxes and quick picks). */
  get quickInput(): Locator {
    return this.page.locator(".quick-input-widget");
  }

  get dialog(): Locator {
    return this.page.locator(".monaco-dialog-box");
  }

  async openSidebar(): Promise<void> {
    await this.piContainer.click({ timeout: 60_000 });
    await this.promptBox.waitFor({ timeout: 60_000 });
  }

  async send(text: string): Promise<void> {
    await this.promptBox.fill(text);
    await this.promptBox.press("Enter");
  }

  /** Wait until the chat shows no run: its prompt box offers "Enter: send" again (not "steer"). */
  async runEnded(timeoutMs = 30_000): Promise<void> {
    await eventually(
      "the run to end (the prompt box offering Enter: send)",
      () => this.promptBox.getAttribute("placeholder", { timeout: 1_000 }),
      (placeholder) => placeholder?.startsWith("Enter: send") === true,
      timeoutMs,
    );
  }

  /**
   * Developer: Reload Window from the command palette, then wait for the new workbench and the
   * chat in it (the pi sidebar opened only when the reload did not restore it).
   */
  async reloadWindow(): Promise<void> {
    await this.page.evaluate(() => ((window as unknown as { piBeforeReload?: boolean }).piBeforeReload = true));
    await this.page.keyboard.press("F1");
    const input = this.quickInput.locator("input.input");
    await input.fill(">Developer: Reload Window");
    await this.quickInput.locator(".monaco-list-row").first().filter({ hasText: /^Developer: Reload Window/ }).waitFor({ timeout: 15_000 });
    await input.press("Enter");
    await eventually(
      "the window to reload",
      () => this.page.evaluate(() => (window as unknown as { piBeforeReload?: boolean }).piBeforeReload === undefined),
      (reloaded) => reloaded,
      60_000,
    );
    await this.page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    // VS Code restores the sidebar by itself, at its own pace; a click on the pi container while it
    // does so would close it again. So: wait, and click only when no pi sidebar came (and not twice in a row).
    const settled = Date.now() + 10_000;
    let clicked = 0;
    await eventually(
      "the chat after the reload",
      async () => {
        if (await this.promptBox.isVisible()) return true;
        if (Date.now() > settled && Date.now() > clicked + 10_000 && !(await this.chatHeader.isVisible())) {
          clicked = Date.now();
          await this.piContainer.click({ timeout: 5_000 });
        }
        return false;
      },
      (visible) => visible,
      90_000,
    );
  }

  /** The approval card in the chat. */
  get approvalCard(): Locator {
    return this.chat.getByRole("alertdialog", { name: "approval request" });
  }

  /** The last article of a kind (the newest message). */
  last(kind: "user message" | "assistant message" | "tool call"): Locator {
    return this.articles(kind).last();
  }

  /**
   * What a failed step leaves for its error: a screenshot (its path), and what the workbench shows
   * in words (notification toasts, editor tabs), so a CI log says what the screenshot would have.
   */
  async failedStep(name: string): Promise<string> {
    const shot = await this.screenshot(`FAILED-${name.replace(/\W+/g, "-")}`).catch(() => "(no screenshot)");
    const shown = await this.shownInWords().catch((reason: unknown) => `(the page could not be read: ${String(reason)})`);
    return `${shown}\nscreenshot: ${shot}`;
  }

  private async shownInWords(): Promise<string> {
    const texts = async (selector: string): Promise<string[]> =>
      (await this.page.locator(selector).allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim()).filter((text) => text !== "");
    const toasts = await texts(".notifications-toasts .notification-list-item-message");
    const tabs = await texts(".tabs-container .tab .label-name");
    return [`notifications: ${toasts.length ? toasts.join(" | ") : "(none)"}`, `editor tabs: ${tabs.length ? tabs.join(" | ") : "(none)"}`].join("\n");
  }

  /** Save a numbered screenshot of the whole window; returns its path. */
  async screenshot(name: string): Promise<string> {
    fs.mkdirSync(this.shotsDir, { recursive: true });
    this.shots += 1;
    const file = path.join(this.shotsDir, `${String(this.shots).padStart(2, "0")}-${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }
}
