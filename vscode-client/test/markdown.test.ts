import assert from "node:assert/strict";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import { createMarkdownRenderer } from "../src/webview/markdown";

function render(markdown: string): HTMLElement {
  const dom = new JSDOM("<!DOCTYPE html><body></body>");
  const renderMarkdown = createMarkdownRenderer(dom.window as unknown as Window);
  const container = dom.window.document.createElement("div");
  container.append(renderMarkdown(markdown));
  return container;
}

/** Every element's attributes that could run code or load a script. */
function executableParts(container: HTMLElement): string[] {
  const found: string[] = [];
  for (const element of Array.from(container.querySelectorAll("*"))) {
    const tag = element.tagName.toLowerCase();
    if (["script", "iframe", "object", "embed", "style"].includes(tag)) found.push(`<${tag}>`);
    for (const attribute of Array.from(element.attributes)) {
      if (attribute.name.toLowerCase().startsWith("on")) found.push(`${tag}[${attribute.name}]`);
      if (/^\s*(javascript|vbscript|data):/i.test(attribute.value)) found.push(`${tag}[${attribute.name}=${attribute.value}]`);
    }
  }
  return found;
}

test("raw HTML in a reply is inert and shown as text", () => {
  const container = render('Look: <img src=x onerror=alert(1)>\n\n<script>alert(2)</script>\n\n<div onclick="alert(3)">hi</div>');
  assert.deepEqual(executableParts(container), []);
  assert.equal(container.querySelector("img"), null);
  assert.equal(container.querySelector("div"), null);
  assert.match(container.textContent ?? "", /<img src=x onerror=alert\(1\)>/);
  assert.match(container.textContent ?? "", /<script>alert\(2\)<\/script>/);
});

test("links and images with javascript:, vbscript: or data: addresses lose them", () => {
  const container = render(
    "[x](javascript:alert(1)) [y](vbscript:msgbox) [z](data:text/html,<script>alert(1)</script>) " +
      "[w](JaVaScRiPt:alert(1)) ![i](data:image/png;base64,AAAA) <javascript:alert(1)>",
  );
  assert.deepEqual(executableParts(container), []);
  for (const link of Array.from(container.querySelectorAll("a"))) assert.equal(link.hasAttribute("href"), false);
  for (const image of Array.from(container.querySelectorAll("img"))) assert.equal(image.hasAttribute("src"), false);
  assert.match(container.textContent ?? "", /x/);
});

test("ordinary markdown renders: headings, lists, code, emphasis, safe links", () => {
  const container = render(
    "# Title\n\nSome *emphasis* and `inline`.\n\n- one\n- two\n\n1. first\n\n```python\nprint('<b>')\n```\n\n[docs](https://example.com)",
  );
  assert.equal(container.querySelector("h1")?.textContent, "Title");
  assert.equal(container.querySelector("em")?.textContent, "emphasis");
  assert.deepEqual(Array.from(container.querySelectorAll("ul > li")).map((li) => li.textContent), ["one", "two"]);
  assert.equal(container.querySelectorAll("ol > li").length, 1);
  const code = container.querySelector("pre > code");
  assert.equal(code?.textContent, "print('<b>')\n");
  assert.equal(code?.querySelector("b"), null);
  const link = container.querySelector("a");
  assert.equal(link?.getAttribute("href"), "https://example.com");
  assert.equal(link?.getAttribute("rel"), "noopener noreferrer");
  assert.deepEqual(executableParts(container), []);
});

test("fenced code in a known language is highlighted and stays inert text", () => {
  const container = render("```python\ndef f():\n    return '<script>alert(1)</script>'\n```\n\n```nosuchlang\n<b>x</b>\n```");
  const [python, unknown] = Array.from(container.querySelectorAll("pre > code"));
  assert.equal(python.querySelector(".hljs-keyword")?.textContent, "def");
  assert.equal(python.textContent, "def f():\n    return '<script>alert(1)</script>'\n");
  assert.equal(unknown.textContent, "<b>x</b>\n");
  assert.deepEqual(executableParts(container), []);
});
