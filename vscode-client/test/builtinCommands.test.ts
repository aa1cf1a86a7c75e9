import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import { builtinCommand, commandItems } from "../src/host/builtinCommands";
import type { WebviewToHost } from "../src/shared/chatProtocol";
import { startChat } from "../src/webview/chatApp";

test("/ lists the built-ins first, then templates and skills; with none of those it says so", () => {
  assert.deepEqual(
    commandItems("", []).map((item) => item.value || item.detail),
    ["compact", "new", "model", "No prompt templates or skills found for this session's folder"],
  );
  const found = commandItems("re", [{ name: "refactor", description: "Refactor" }, { name: "skill:review" }]);
  assert.deepEqual(found.map((item) => item.value), ["refactor", "skill:review"]);
  assert.deepEqual(commandItems("n", [{ name: "notes" }]).map((item) => item.value), ["new", "notes"]);
});

test("a sent /compact, /new or /model is the chat's own command; anything else goes to pi", () => {
  assert.deepEqual(builtinCommand("/compact focus on the tests\nplease"), { name: "compact", rest: "focus on the tests\nplease" });
  assert.deepEqual(builtinCommand(" /new "), { name: "new", rest: "" });
  assert.deepEqual(builtinCommand("/model"), { name: "model", rest: "" });
  assert.equal(builtinCommand("/newer idea"), undefined);
  assert.equal(builtinCommand("/skill:review a.py"), undefined);
  assert.equal(builtinCommand("please /compact"), undefined);
});

test("the note is drawn but never inserted", () => {
  const dom = new JSDOM("<!DOCTYPE html><body></body>");
  const doc = dom.window.document;
  const posted: WebviewToHost[] = [];
  const app = startChat(doc, dom.window as unknown as Window, { postMessage: (m) => posted.push(m), getState: () => undefined, setState: () => undefined });
  const input = doc.querySelector("textarea") as HTMLTextAreaElement;
  input.value = "/";
  input.setSelectionRange(1, 1);
  input.dispatchEvent(new dom.window.Event("input", { bubbles: true }));
  app.receive({ type: "completions", kind: "command", query: "", items: commandItems("", []) });
  const options = Array.from(doc.querySelectorAll("#suggestions li"));
  assert.equal(options.at(-1)?.textContent, "No prompt templates or skills found for this session's folder");
  assert.equal(options.at(-1)?.getAttribute("aria-disabled"), "true");
  options.at(-1)?.dispatchEvent(new dom.window.MouseEvent("mousedown", { bubbles: true, cancelable: true }));
  assert.equal(input.value, "/");
  assert.equal((doc.querySelector("#suggestions") as HTMLElement).hidden, true);
});
