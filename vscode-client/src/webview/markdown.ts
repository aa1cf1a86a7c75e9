/**
 * Markdown for the chat webview: marked renders, DOMPurify sanitises, and the result is a DOM
 * fragment. A reply is untrusted text, so raw HTML in it is shown as text (never parsed), links and
 * images keep only http(s)/mailto/#fragment addresses, and nothing executable survives.
 * Takes the window to work in, so the same code runs in the webview and in Node tests (jsdom).
 */
import createDOMPurify from "dompurify";
import { Marked } from "marked";
import { decorateCodeBlocks } from "./codeBlocks";
import { highlightCode } from "./highlight";

/** Addresses a rendered link or image may keep; anything else (javascript:, vbscript:, data:, …) is dropped. */
const SAFE_URL = /^(?:https?:|mailto:|#)/i;
const URL_ATTRIBUTES = ["href", "src", "xlink:href", "action", "formaction", "srcset"];

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Rendered blocks kept for reuse (a long reply has a few hundred). */
const BLOCK_CACHE_SIZE = 2000;

export type MarkdownRenderer = (markdown: string) => DocumentFragment;

/** A streamed reply drawn into one element, redrawing only what the newest text changed. */
export interface MarkdownStream {
  readonly element: HTMLElement;
  /** Draws `text`; when it extends the text drawn before, only the reply's last block is redrawn. */
  update(text: string): void;
}

/** A markdown renderer bound to one window: whole texts, and streams that grow at the end. */
export interface Markdown {
  render: MarkdownRenderer;
  stream: (element: HTMLElement) => MarkdownStream;
}

/**
 * A renderer bound to `win` (the webview's window, or a jsdom window in tests). `byBlock: false`
 * renders every text whole (the reference the block-by-block rendering is tested against).
 */
export function createMarkdownRenderer(win: Window, { byBlock = true }: { byBlock?: boolean } = {}): MarkdownRenderer {
  const markdown = createMarkdown(win);
  return byBlock ? markdown.render : (text) => markdown.whole(text);
}

/** The renderer and the streams of `win`, sharing one parser, sanitiser and block cache. */
export function createMarkdown(win: Window): Markdown & { whole: MarkdownRenderer } {
  const marked = new Marked({
    gfm: true,
    async: false,
    renderer: {
      // Raw HTML in the markdown (block or inline) is shown as the text it is.
      html: ({ text }) => escapeHtml(text),
      // Fenced code in a known language is highlighted (highlight.js escapes the code itself).
      code: ({ text, lang }) => {
        const highlighted = highlightCode(text, lang);
        if (highlighted === undefined) return false;
        const language = escapeHtml(lang?.trim().split(/\s+/)[0] ?? "");
        return `<pre><code class="hljs language-${language}">${highlighted}\n</code></pre>\n`;
      },
    },
  });
  const purify = createDOMPurify(win as unknown as Parameters<typeof createDOMPurify>[0]);
  purify.addHook("afterSanitizeAttributes", (node) => {
    for (const name of URL_ATTRIBUTES) {
      const value = node.getAttribute(name);
      if (value !== null && !SAFE_URL.test(value.trim())) node.removeAttribute(name);
    }
    if (node.tagName === "A" && node.hasAttribute("href")) node.setAttribute("rel", "noopener noreferrer");
  });
  const sanitize = (html: string): DocumentFragment => {
    const fragment = purify.sanitize(html, {
      USE_PROFILES: { html: true },
      FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed", "svg", "math"],
      FORBID_ATTR: ["style"],
      RETURN_DOM_FRAGMENT: true,
    });
    // Our own controls, added after sanitising (the reply's markup can never make one).
    decorateCodeBlocks(fragment, win.document);
    return fragment;
  };
  type Tokens = ReturnType<typeof marked.lexer>;
  const block = (token: Tokens[number], links: Tokens["links"]): DocumentFragment =>
    sanitize(marked.parser(Object.assign([token], { links })));
  const whole: MarkdownRenderer = (text) => sanitize(marked.parse(text) as string);
  // A streamed reply is drawn again after every delta, but only its last block changes: the
  // blocks before it are rendered (highlighted, sanitised) once and cloned from here after.
  const blocks = new Map<string, DocumentFragment>();
  const remember = (raw: string, fragment: DocumentFragment): void => {
    blocks.set(raw, fragment);
    if (blocks.size > BLOCK_CACHE_SIZE) blocks.delete(blocks.keys().next().value as string);
  };
  const render: MarkdownRenderer = (markdown) => {
    const tokens = marked.lexer(markdown);
    // Reference links tie blocks together; such a reply is rendered whole.
    if (Object.keys(tokens.links).length > 0) return sanitize(marked.parser(tokens));
    const out = win.document.createDocumentFragment();
    tokens.forEach((token, index) => {
      const open = index === tokens.length - 1; // may still grow
      const cached = open ? undefined : blocks.get(token.raw);
      if (cached) {
        out.append(cached.cloneNode(true));
        return;
      }
      const fragment = block(token, tokens.links);
      if (!open) remember(token.raw, fragment.cloneNode(true) as DocumentFragment);
      out.append(fragment);
    });
    return out;
  };
  const stream = (element: HTMLElement): MarkdownStream => {
    let drawn = "";
    /** Characters of `drawn` covered by blocks that can no longer change (a later block follows them). */
    let closedLength = 0;
    /** The last block's nodes: the only ones a longer text can change. */
    let openNodes: ChildNode[] = [];
    /** Set once blocks depend on each other (reference links) or the lexer rewrites the text. */
    let drawWhole = false;
    const redrawWhole = (text: string): void => {
      element.replaceChildren(render(text));
      drawn = text;
    };
    return {
      element,
      update(text: string): void {
        if (text === drawn) return;
        if (drawWhole) return redrawWhole(text);
        if (!text.startsWith(drawn) || text.includes("\r")) {
          // Not text added at the end (a redraw, an edit): start again. Carriage returns are
          // rewritten by the lexer, so its blocks no longer measure the text: drawn whole.
          element.replaceChildren();
          drawn = "";
          closedLength = 0;
          openNodes = [];
          if (text.includes("\r")) {
            drawWhole = true;
            return redrawWhole(text);
          }
        }
        const tokens = marked.lexer(text.slice(closedLength));
        // Reference links tie blocks together: from now on the reply is drawn whole.
        if (Object.keys(tokens.links).length > 0) {
          drawWhole = true;
          return redrawWhole(text);
        }
        // The last two blocks (blank lines aside) stay open: text added at the end may continue
        // the last one (an indented line continues a list after blank lines) or join it to the one
        // before ("2" becomes "2)", the next item of the list above it).
        let firstOpen = tokens.length - 1;
        for (let blocks = 0; firstOpen > 0; firstOpen--) {
          if (tokens[firstOpen].type !== "space" && ++blocks === 2) break;
        }
        for (const node of openNodes) node.remove();
        openNodes = [];
        tokens.forEach((token, index) => {
          const fragment = block(token, tokens.links);
          if (index < firstOpen) closedLength += token.raw.length;
          else openNodes.push(...fragment.childNodes);
          element.append(fragment);
        });
        drawn = text;
      },
    };
  };
  return { render, stream, whole };
}
