import assert from "node:assert/strict";
import { test } from "node:test";
import { sessionDescription, whenStarted } from "../src/host/sessionTitle";

const now = new Date(2026, 11, 3, 22, 40);

test("the Chat view names its session: the name, else the first message, and when it started", () => {
  assert.equal(sessionDescription("Parser work", "ignored", new Date(2026, 11, 3, 14, 2), now), "Parser work · Today 14:02");
  assert.equal(sessionDescription(null, "  fix the\nlexer  ", new Date(2026, 11, 2, 9, 5), now), "fix the lexer · Yesterday 09:05");
  assert.equal(sessionDescription("", undefined, undefined, now), "New session");
  assert.equal(sessionDescription(null, "x".repeat(80), undefined, now), `${"x".repeat(47)}…`);
  assert.equal(whenStarted(new Date(2026, 10, 20, 8, 0), now), "20 Nov 08:00");
  assert.equal(whenStarted(new Date(2025, 10, 20, 8, 0), now), "20 Nov 2025");
});
