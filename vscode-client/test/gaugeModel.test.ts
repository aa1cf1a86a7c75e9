import assert from "node:assert/strict";
import { test } from "node:test";
import { formatTokens, gaugeView } from "../src/host/gaugeModel";

const usage = (tokens: number | null, shouldCompact = false) => ({
  tokens,
  contextWindow: 200000,
  percent: tokens === null ? null : (tokens / 200000) * 100,
  shouldCompact,
});

test("the text starts with `pi ` and shows the rounded percentage", () => {
  const view = gaugeView(usage(50000), 16384);
  assert.equal(view.text, "pi 25%");
  assert.equal(view.level, "normal");
  assert.match(view.tooltip, /50k of 200k/);
});

test("within 10% of the compaction threshold is a warning; past it asks to compact", () => {
  // threshold = (200000 - 16384) / 200000 = 91.8%
  assert.equal(gaugeView(usage(160000), 16384).level, "normal"); // 80%
  assert.equal(gaugeView(usage(170000), 16384).level, "warning"); // 85%
  assert.equal(gaugeView(usage(184000), 16384).level, "compact"); // 92%
  assert.equal(gaugeView(usage(1000, true), 16384).level, "compact");
});

test("unknown size right after a compaction shows `pi ?%`", () => {
  const view = gaugeView(usage(null), 16384);
  assert.equal(view.text, "pi ?%");
  assert.equal(view.level, "normal");
});

test("after a compaction the gauge shows the compaction's estimate, marked as one", () => {
  const view = gaugeView(usage(null), 16384, 12_000);
  assert.equal(view.text, "pi ~6%");
  assert.match(view.tooltip, /about 12k of 200k tokens after the compaction \(an estimate until the next reply\)/);
  assert.equal(gaugeView(usage(50000), 16384, 12_000).text, "pi 25%", "a known size wins over the estimate");
});

test("token counts are short", () => {
  assert.equal(formatTokens(999), "999");
  assert.equal(formatTokens(1234), "1.2k");
  assert.equal(formatTokens(2000), "2k");
  assert.equal(formatTokens(183616), "184k");
});
