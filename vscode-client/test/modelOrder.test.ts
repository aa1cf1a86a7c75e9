import assert from "node:assert/strict";
import { test } from "node:test";
import { modelFamily, orderModels } from "../src/host/modelOrder";

const ids = [
  "claude-3-5-haiku-20241022",
  "claude-3-7-sonnet-20250219",
  "claude-haiku-4-5-20251001",
  "claude-opus-4-1-20250805",
  "claude-opus-4-20250514",
  "claude-opus-4-7",
  "claude-sonnet-4-5",
  "claude-sonnet-4-5-20250929",
  "claude-sonnet-4-6",
];
const models = ids.map((id) => ({ id, name: id, reasoning: true }));

test("the model picker: current on top, families together, the newest family and model first", () => {
  const ordered = orderModels(models, "claude-3-7-sonnet-20250219").map((m) => `${m.family} ${m.id}`);
  assert.deepEqual(ordered, [
    "Sonnet claude-3-7-sonnet-20250219",
    "Opus claude-opus-4-7",
    "Opus claude-opus-4-1-20250805",
    "Opus claude-opus-4-20250514",
    "Sonnet claude-sonnet-4-6",
    "Sonnet claude-sonnet-4-5",
    "Sonnet claude-sonnet-4-5-20250929",
    "Haiku claude-haiku-4-5-20251001",
    "Haiku claude-3-5-haiku-20241022",
  ]);
  assert.equal(modelFamily("gpt-x"), "Other");
  assert.deepEqual(orderModels([], "x"), []);
});
