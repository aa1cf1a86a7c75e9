import assert from "node:assert/strict";
import { test } from "node:test";
import { piSettings } from "../src/settings";

test("only settings the user set are sent, nested as the protocol expects", () => {
  const values: Record<string, unknown> = {
    "compaction.reserveTokens": 8000,
    "compaction.enabled": false,
    model: "claude-sonnet-4-5",
    thinkingLevel: "",
  };
  assert.deepEqual(piSettings((key) => values[key]), {
    compaction: { enabled: false, reserveTokens: 8000 },
    model: "claude-sonnet-4-5",
  });
});

test("nothing set sends an empty object; wrong types are dropped", () => {
  assert.deepEqual(piSettings(() => undefined), {});
  const wrong: Record<string, unknown> = { "compaction.keepRecentTokens": "lots", model: 5 };
  assert.deepEqual(piSettings((key) => wrong[key]), {});
});
