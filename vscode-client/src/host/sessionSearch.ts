/**
 * Open Session…'s search: pi/listSessions with the typed words as `query`, only the latest answer
 * kept (an older, slower search never overwrites a newer one). Pure: the requester is passed in.
 */
import type { Requester } from "./treeModel";
import { Methods } from "../shared/protocol";

export interface SessionInfo {
  path: string;
  id: string;
  cwd?: string;
  name?: string;
  /** Set on a fork (Fork to new session, Branch to New Session): the session it was made from. */
  parentSessionPath?: string;
  modified: string;
  messageCount: number;
  firstMessage: string;
}

export interface SessionPickItem {
  label: string;
  description: string;
  detail: string;
  path: string;
}

function titleOf(info: SessionInfo): string {
  return (info.name ?? (info.firstMessage || info.id)).replace(/\s+/g, " ").trim();
}

const shorten = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * One quick-pick row: name (else first message, else id), message count, when and where. A fork
 * (which starts with its source's first message) is marked as one and names its source, found
 * among `listed` (else by file name).
 */
export function pickItem(info: SessionInfo, showCwd: boolean, listed: readonly SessionInfo[] = []): SessionPickItem {
  const title = titleOf(info);
  const when = info.modified.replace("T", " ").replace(/\.\d+Z?$/, "").replace(/Z$/, "");
  const parent = info.parentSessionPath;
  const source = parent === undefined ? undefined : listed.find((other) => other.path === parent);
  const forkOf = parent === undefined ? "" : `fork of “${shorten(source ? titleOf(source) : (parent.split(/[\\/]/).pop() ?? parent), 40)}” · `;
  return {
    label: `${parent === undefined ? "" : "$(repo-forked) "}${shorten(title, 100)}`,
    description: `${forkOf}${info.messageCount} messages · ${when}`,
    detail: showCwd && info.cwd ? `${info.cwd} — ${info.path}` : info.path,
    path: info.path,
  };
}

export class SessionSearch {
  private latest = 0;

  constructor(
    private readonly request: Requester,
    private readonly cwd: string | undefined,
    private readonly limit = 100,
  ) {}

  /**
   * The sessions matching `query` (all of this folder's for an empty one; every project's with
   * `all`), or `undefined` when a newer search was started meanwhile. Server errors (a bad
   * `re:` pattern) are thrown with the server's message.
   */
  async search(query: string, all = false): Promise<SessionInfo[] | undefined> {
    const ticket = ++this.latest;
    const params: Record<string, unknown> = { limit: this.limit };
    if (all) params.all = true;
    else if (this.cwd !== undefined) params.cwd = this.cwd;
    if (query.trim() !== "") params.query = query.trim();
    const { sessions } = await this.request<{ sessions: SessionInfo[] }>(Methods.listSessions, params);
    return ticket === this.latest ? sessions : undefined;
  }
}
