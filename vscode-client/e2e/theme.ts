/**
 * The theme checks of the end-to-end run: switch VS Code's colour theme (from the command palette)
 * and read the computed styles of the chat's controls, each against the theme variable it must use
 * (resolved by the browser, so "#0078d4" and "rgb(0, 120, 212)" compare equal).
 */
import { eventually } from "./expect";
import { Workbench } from "./workbench";

export const THEMES = [
  { label: "Light Modern", kind: "vscode-light" },
  { label: "Dark High Contrast", kind: "vscode-high-contrast" },
  { label: "Dark Modern", kind: "vscode-dark" },
] as const;

/** Preferences: Color Theme, as a user picks one, then wait until the chat's webview wears it. */
export async function switchTheme(wb: Workbench, theme: (typeof THEMES)[number]): Promise<void> {
  await wb.page.keyboard.press("F1");
  const input = wb.quickInput.locator("input.input");
  await input.fill(">Preferences: Color Theme");
  const rows = wb.quickInput.locator(".monaco-list-row");
  await rows.filter({ hasText: /^Preferences: Color Theme(?!s)/ }).first().click({ timeout: 15_000 });
  await input.fill(theme.label);
  await rows.filter({ hasText: new RegExp(`^${theme.label}`) }).first().click({ timeout: 15_000 });
  await eventually(
    `the chat in ${theme.label}`,
    () => wb.chat.locator("body").getAttribute("class", { timeout: 1_000 }),
    (classes) => (classes ?? "").split(/\s+/).includes(theme.kind),
    30_000,
  );
}

export interface ControlStyle {
  control: string;
  property: string;
  actual: string;
  expected: string;
}

/**
 * Each control kind of the chat (with an approval card on screen) and the theme variable it must
 * use: primary and secondary buttons, the text input, the prompt box, the dropdowns, the focus
 * border; plus whether the codicon font loaded under the webview's CSP.
 */
export async function controlStyles(wb: Workbench): Promise<{ styles: ControlStyle[]; codiconLoaded: boolean }> {
  await wb.promptBox.focus();
  return wb.chat.locator("body").evaluate(async (body) => {
    const doc = body.ownerDocument;
    const win = doc.defaultView as Window;
    const resolve = (property: string, variable: string): string => {
      const probe = doc.createElement("div");
      probe.style.setProperty(property, `var(${variable})`);
      doc.body.append(probe);
      const value = win.getComputedStyle(probe).getPropertyValue(property);
      probe.remove();
      return value;
    };
    const button = (name: string): Element | undefined => Array.from(doc.querySelectorAll("button")).find((b) => b.textContent === name);
    const checks: [string, Element | null | undefined, string, string][] = [
      ["primary button (Allow)", button("Allow"), "background-color", "--vscode-button-background"],
      ["primary button (Allow)", button("Allow"), "color", "--vscode-button-foreground"],
      ["secondary button (Deny)", button("Deny"), "background-color", "--vscode-button-secondaryBackground"],
      ["secondary button (Deny)", button("Deny"), "color", "--vscode-button-secondaryForeground"],
      ["text input (deny reason)", doc.querySelector("input.deny-reason"), "background-color", "--vscode-input-background"],
      ["text input (deny reason)", doc.querySelector("input.deny-reason"), "color", "--vscode-input-foreground"],
      ["prompt box", doc.querySelector("textarea"), "background-color", "--vscode-input-background"],
      ["prompt box", doc.querySelector("textarea"), "color", "--vscode-input-foreground"],
      ["dropdown (model)", doc.querySelector("select"), "background-color", "--vscode-dropdown-background"],
      ["dropdown (model)", doc.querySelector("select"), "color", "--vscode-dropdown-foreground"],
      ["focus border (prompt box)", doc.querySelector("textarea"), "outline-color", "--vscode-focusBorder"],
    ];
    const styles = checks.map(([control, element, property, variable]) => ({
      control,
      property,
      actual: element ? win.getComputedStyle(element).getPropertyValue(property) : "(missing)",
      expected: resolve(property === "outline-color" ? "color" : property, variable),
    }));
    const loaded = await doc.fonts.load("16px codicon");
    return { styles, codiconLoaded: loaded.length > 0 };
  });
}
