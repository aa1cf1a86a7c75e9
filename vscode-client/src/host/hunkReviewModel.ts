/**
 * Reviewing a proposed edit/write hunk by hunk before it is written (contract v3), pure: which hunks
 * are accepted, the proposed file they make (what the diff editor shows), where each hunk is in it
 * (for its CodeLens), what the card says ("2 of 3 changes accepted") and the answer that writes
 * exactly what the user saw: all hunks → a plain allow, some → `hunks`, text edited by hand → `content`.
 */
import type { ApprovalAnswer, ApprovalRequest } from "../shared/approvalModel";
import { composeHunks, DiffMismatch, parseHunks, type Composed, type ParsedHunk } from "./unifiedDiff";

export interface ReviewHunk {
  index: number;
  header: string;
  accepted: boolean;
}

export class HunkReview {
  private readonly parsed: ParsedHunk[];
  private readonly headers: string[];
  private readonly accepted: Set<number>;
  private current: Composed;

  /**
   * `before`: the file as it is now ("" when there is none). Throws DiffMismatch when the request's
   * hunks do not fit it (the file changed since the preview): review the whole change instead.
   */
  constructor(
    readonly request: ApprovalRequest,
    readonly before: string,
  ) {
    const hunks = request.preview?.hunks ?? [];
    if (hunks.length === 0) throw new DiffMismatch("the approval carries no hunks");
    this.parsed = hunks.map((hunk) => {
      const [one] = parseHunks(hunk.diff);
      if (!one) throw new DiffMismatch(`hunk ${hunk.index} has no header`);
      return one;
    });
    this.headers = hunks.map((hunk) => hunk.header);
    this.accepted = new Set(this.parsed.map((_hunk, index) => index));
    this.current = composeHunks(before, this.parsed, this.accepted);
    const proposed = request.preview?.newContent;
    if (proposed !== undefined && this.current.text !== proposed) throw new DiffMismatch("the hunks do not make the proposed file");
  }

  /** The hunks requests could carry one: only for an edit/write whose preview has hunks. */
  static applies(request: ApprovalRequest): boolean {
    return (request.toolName === "edit" || request.toolName === "write") && (request.preview?.hunks?.length ?? 0) > 0;
  }

  get count(): number {
    return this.parsed.length;
  }

  /** The proposed file as the accepted hunks make it. */
  get text(): string {
    return this.current.text;
  }

  get placements(): Composed["placements"] {
    return this.current.placements;
  }

  isAccepted(index: number): boolean {
    return this.accepted.has(index);
  }

  /** Accept or reject one hunk (toggle when `accept` is not given); the proposed text is made again. */
  set(index: number, accept?: boolean): void {
    if (index < 0 || index >= this.parsed.length) return;
    const next = accept ?? !this.accepted.has(index);
    if (next) this.accepted.add(index);
    else this.accepted.delete(index);
    this.current = composeHunks(this.before, this.parsed, this.accepted);
  }

  hunks(): ReviewHunk[] {
    return this.headers.map((header, index) => ({ index, header, accepted: this.accepted.has(index) }));
  }

  /** "2 of 3 changes accepted", or that the proposed text was edited by hand. */
  summary(edited = false): string {
    if (edited) return "The proposed text was edited: your version will be written.";
    const total = this.parsed.length;
    return `${this.accepted.size} of ${total} change${total === 1 ? "" : "s"} accepted`;
  }

  /**
   * The answer for `decision` given the text the user sees in the proposed editor: a text that
   * differs from what the accepted hunks make is sent whole (`content`); otherwise the accepted
   * hunks, or nothing extra when all are accepted. A deny stays a deny.
   */
  answer(decision: ApprovalAnswer["decision"], shown: string | undefined, reason?: string): ApprovalAnswer {
    const base: ApprovalAnswer = { decision, ...(reason ? { reason } : {}) };
    if (decision === "deny") return base;
    if (shown !== undefined && shown !== this.current.text) return { decision: "allow", content: shown };
    if (this.accepted.size === this.parsed.length) return base;
    return { decision: "allow", hunks: [...this.accepted].sort((a, b) => a - b) };
  }
}
