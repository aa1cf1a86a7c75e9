/**
 * Which session the Chat view shows, in its title bar: the session's name, else its first message,
 * and when it started ("Fix the parser · Today 14:02").
 */
import { Methods } from "../shared/protocol";
import { contentText } from "../shared/chatModel";
import type { Requester } from "../shared/messageActions";

const MAX_TITLE = 48;
/** Entries read from the start of the file to find the first user message. */
const FIRST_ENTRIES = 50;

/** "Today 14:02", "Yesterday 09:15", else "3 Dec 14:02" (another year: "3 Dec 2025"). */
export function whenStarted(at: Date, now: Date): string {
  const time = `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`;
  const day = (d: Date): number => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((day(now) - day(at)) / 86_400_000);
  if (days === 0) return `Today ${time}`;
  if (days === 1) return `Yesterday ${time}`;
  const date = at.toLocaleDateString("en-GB", { day: "numeric", month: "short", ...(at.getFullYear() === now.getFullYear() ? {} : { year: "numeric" }) });
  return at.getFullYear() === now.getFullYear() ? `${date} ${time}` : date;
}

/** The view's description: name (else first message, one line, shortened) and start time. */
export function sessionDescription(name: string | null, firstMessage: string | undefined, started: Date | undefined, now = new Date()): string {
  const line = (name ?? "").trim() || (firstMessage ?? "").replace(/\s+/g, " ").trim() || "New session";
  const title = line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1)}…` : line;
  return started === undefined || Number.isNaN(started.getTime()) ? title : `${title} · ${whenStarted(started, now)}`;
}

/** The first user message and the first entry's time of the open session (from the server). */
export async function sessionStart(request: Requester): Promise<{ firstMessage?: string; started?: Date }> {
  const { entries } = await request<{ entries: Record<string, unknown>[] }>(Methods.getEntries, { offset: 0, limit: FIRST_ENTRIES });
  const first = entries.find((entry) => entry.type === "message" && (entry.message as { role?: unknown } | undefined)?.role === "user");
  const stamp = entries[0]?.timestamp;
  return {
    ...(first ? { firstMessage: contentText((first.message as { content?: unknown }).content) } : {}),
    ...(typeof stamp === "string" ? { started: new Date(stamp) } : {}),
  };
}
