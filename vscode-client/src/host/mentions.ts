/** Ranking workspace files for an `@` mention (pure): the host lists files, this picks the best few. */

/** Best first: a file name starting with the query, then a name containing it, then a path containing it; shorter paths first. */
export function rankPaths(query: string, paths: readonly string[], limit = 30): string[] {
  const needle = query.toLowerCase();
  const scored: [number, string][] = [];
  for (const path of paths) {
    const lower = path.toLowerCase();
    const name = lower.slice(lower.lastIndexOf("/") + 1);
    let score: number;
    if (needle === "" || name.startsWith(needle)) score = 0;
    else if (name.includes(needle)) score = 1;
    else if (lower.includes(needle)) score = 2;
    else continue;
    scored.push([score, path]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1].length - b[1].length || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return scored.slice(0, limit).map(([, path]) => path);
}
