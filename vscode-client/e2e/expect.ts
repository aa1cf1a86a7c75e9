/**
 * Waiting assertions for the end-to-end test: the workbench and the webview update asynchronously,
 * so each check polls until it holds or its time runs out, then fails saying what it last saw.
 */
import { Locator } from "playwright-core";

const POLL_MS = 100;

/** Poll `probe` until `holds` accepts its value; the error names `what` and the last value. */
export async function eventually<T>(
  what: string,
  probe: () => T | Promise<T>,
  holds: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await probe();
      if (holds(last)) return last;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const seen = last === undefined ? `error: ${String(lastError)}` : JSON.stringify(last).slice(0, 500);
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${seen}`);
}

/** The text of a locator's first match ("" when there is none). */
async function textOf(locator: Locator): Promise<string> {
  return (await locator.count()) === 0 ? "" : locator.first().innerText({ timeout: 1_000 });
}

function matches(text: string, expected: string | RegExp): boolean {
  const flat = text.replace(/\s+/g, " ");
  return typeof expected === "string" ? flat.includes(expected) : expected.test(flat);
}

export async function seeVisible(locator: Locator, timeoutMs = 15_000): Promise<void> {
  await locator.first().waitFor({ state: "visible", timeout: timeoutMs });
}

/** Wait until the locator's (first match's) text contains a string or matches a pattern; returns it. */
export function seeText(locator: Locator, expected: string | RegExp, timeoutMs = 15_000): Promise<string> {
  return eventually(`${String(locator)} to show ${String(expected)}`, () => textOf(locator), (text) => matches(text, expected), timeoutMs);
}

export async function seeNoText(locator: Locator, unexpected: string): Promise<void> {
  const text = await textOf(locator);
  if (matches(text, unexpected)) throw new Error(`${String(locator)} already shows ${unexpected}: ${text.slice(0, 300)}`);
}

export async function seeCount(locator: Locator, count: number, timeoutMs = 15_000): Promise<void> {
  await eventually(`${count} of ${String(locator)}`, () => locator.count(), (n) => n === count, timeoutMs);
}

export async function seeValue(locator: Locator, value: string, timeoutMs = 15_000): Promise<void> {
  await eventually(`${String(locator)} to hold ${value}`, () => locator.inputValue({ timeout: 1_000 }), (v) => v === value, timeoutMs);
}
