/**
 * One tab stop for the whole message list (the roving tabindex pattern): the active message is the
 * only one Tab reaches, ↑/↓ (Home/End) move between messages, and the controls inside a message
 * (its actions, a tool card's disclosure, a code block's buttons) are reachable only while that
 * message is the active one, so a long chat is not a hundred tab stops.
 */

const FOCUSABLE = "button, summary, a[href], input, select, textarea";

export interface Roving {
  /** Applies the tab stops to the articles now in the list (call after each draw). */
  refresh(): void;
}

export function rovingArticles(list: HTMLElement): Roving {
  let active: HTMLElement | undefined;
  /** Whether each drawn article was last made reachable: an unchanged article is not walked again. */
  const applied = new WeakMap<HTMLElement, boolean>();

  const articles = (): HTMLElement[] => Array.from(list.querySelectorAll<HTMLElement>(":scope > article"));

  function setStops(article: HTMLElement, reachable: boolean): void {
    applied.set(article, reachable);
    article.tabIndex = reachable ? 0 : -1;
    for (const control of Array.from(article.querySelectorAll<HTMLElement>(FOCUSABLE))) {
      if (reachable) control.removeAttribute("tabindex");
      else control.tabIndex = -1;
    }
  }

  function activate(article: HTMLElement): void {
    if (active === article) return;
    if (active?.isConnected) setStops(active, false);
    active = article;
    setStops(article, true);
  }

  function refresh(): void {
    const all = articles();
    if (active === undefined || !active.isConnected) active = all.at(-1);
    const last = all.at(-1);
    // New articles, and the last one (a streamed reply grows controls in place), are walked.
    for (const article of all) {
      const reachable = article === active;
      if (applied.get(article) !== reachable || article === last) setStops(article, reachable);
    }
  }

  list.addEventListener("focusin", (event) => {
    const article = (event.target as HTMLElement).closest?.("article");
    if (article && article.parentElement === list) activate(article);
  });

  list.addEventListener("keydown", (event) => {
    const target = event.target as HTMLElement;
    if (target.tagName !== "ARTICLE" || target.parentElement !== list) return;
    const all = articles();
    const at = all.indexOf(target);
    const next =
      event.key === "ArrowDown" ? all[at + 1] : event.key === "ArrowUp" ? all[at - 1] : event.key === "Home" ? all[0] : event.key === "End" ? all.at(-1) : undefined;
    if (next === undefined) return;
    event.preventDefault();
    activate(next);
    next.focus();
    next.scrollIntoView?.({ block: "nearest" });
  });

  return { refresh };
}
