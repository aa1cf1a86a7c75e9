/**
 * What a tree view shows, remembered as JSON, so that a refresh which fetched the same data again
 * does not redraw it. A redraw folds rows the user opened and drops the rows' commands and menus,
 * so a click or a menu landing during one does nothing ("Actual command not found"). Pure: both
 * views (Changes, Session Tree) keep one.
 */
export class SameAsShown {
  private shown: string;

  /** `initial`: what the view shows before its first refresh. */
  constructor(initial: unknown) {
    this.shown = JSON.stringify(initial);
  }

  /** Whether `next` differs from what is shown; if so it is what is shown from now on. */
  changes(next: unknown): boolean {
    const json = JSON.stringify(next);
    if (json === this.shown) return false;
    this.shown = json;
    return true;
  }
}
