/**
 * Open Session…'s search: pi/listSessions with the typed words as `query`, only the latest answer
 * kept (an older, slower search never overwrites a newer one). Pure: the requester is passed in.
 */
import type { Requester } from "./treeModel";
import { Methods } from "./protocol";

export interface SessionInfo {
  path: string;
  id: string;
  cwd?: string;
  name?: string;
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

/** One quick-pick row: name (else first message, else id), message count, when and where. */
export function pickItem(info: SessionInfo, showCwd: boolean): SessionPickItem {
  const title = (info.name ?? (info.firstMessage || info.id)).replace(/\s+/g, " ").trim();
  const when = info.modified.replace("T", " ").replace(/\.\d+Z?$/, "").replace(/Z$/, "");
  return {
    label: title.length > 100 ? `${title.slice(0, 99)}…` : title,
    description: `${info.messageCount} messages · ${when}`,
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
