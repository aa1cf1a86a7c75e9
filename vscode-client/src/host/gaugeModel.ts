/** What the status-bar context gauge shows for a ContextUsage (pure, so it is testable). */

export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
  shouldCompact: boolean;
}

export type GaugeLevel = "normal" | "warning" | "compact";

export interface GaugeView {
  text: string;
  tooltip: string;
  level: GaugeLevel;
}

/** Percent of the window at which the gauge turns to the warning colour before the threshold. */
export const WARNING_MARGIN_PERCENT = 10;

/**
 * The gauge for a session's usage. `reserveTokens` is the compaction setting: the threshold is
 * `contextWindow - reserveTokens`, as the server decides `shouldCompact`. Right after a compaction
 * the server (as pi) reports the size unknown until the next reply; `estimateAfterCompaction` (the
 * compaction's `tokensAfter`, counted locally) is then shown as an estimate, `pi ~NN%`.
 */
export function gaugeView(usage: ContextUsage, reserveTokens: number, estimateAfterCompaction?: number): GaugeView {
  const window = usage.contextWindow;
  if ((usage.percent === null || usage.tokens === null) && estimateAfterCompaction !== undefined && window > 0) {
    return {
      text: `pi ~${Math.round((estimateAfterCompaction / window) * 100)}%`,
      tooltip: `Context: about ${formatTokens(estimateAfterCompaction)} of ${formatTokens(window)} tokens after the compaction (an estimate until the next reply). Click to compact.`,
      level: "normal",
    };
  }
  if (usage.percent === null || usage.tokens === null) {
    return {
      text: "pi ?%",
      tooltip: `Context size unknown until the next reply (window ${formatTokens(window)}). Click to compact.`,
      level: "normal",
    };
  }
  const thresholdPercent = window > 0 ? ((window - reserveTokens) / window) * 100 : 100;
  let level: GaugeLevel = "normal";
  if (usage.shouldCompact || usage.percent >= thresholdPercent) level = "compact";
  else if (usage.percent >= thresholdPercent - WARNING_MARGIN_PERCENT) level = "warning";
  return {
    text: `pi ${Math.round(usage.percent)}%`,
    tooltip: `Context: ${formatTokens(usage.tokens)} of ${formatTokens(window)} tokens. Click to compact.`,
    level,
  };
}

/** 1234 → "1.2k", 200000 → "200k". */
export function formatTokens(count: number): string {
  if (count < 1000) return String(count);
  const thousands = count / 1000;
  return `${thousands >= 100 ? Math.round(thousands) : thousands.toFixed(1).replace(/\.0$/, "")}k`;
}
