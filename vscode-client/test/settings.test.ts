import assert from "node:assert/strict";
import { test } from "node:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { effectiveValue, piSettings, SERVER_SETTINGS, USER_ONLY_SETTINGS } from "../src/host/settings";

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

test("nested keys of every depth, lists and objects are sent as the protocol nests them", () => {
  const values: Record<string, unknown> = {
    "retry.provider.timeoutMs": 1000,
    "retry.enabled": false,
    tools: ["read", "bash"],
    thinkingBudgets: { low: 1024 },
    "images.blockImages": true,
    approval: "ask",
    tokenizer: "estimate",
  };
  assert.deepEqual(piSettings((key) => values[key]), {
    retry: { enabled: false, provider: { timeoutMs: 1000 } },
    tools: ["read", "bash"],
    thinkingBudgets: { low: 1024 },
    images: { blockImages: true },
    approval: "ask",
    tokenizer: "estimate",
  });
  // An empty object and a list holding a non-string are not sent.
  assert.deepEqual(piSettings((key) => ({ thinkingBudgets: {}, tools: ["read", 1] })[key]), {});
});

test("a workspace cannot choose the server, the approval policy, tools, the shell or retry counts", () => {
  const fromRepository = { workspaceValue: "auto", workspaceFolderValue: "auto" };
  assert.equal(effectiveValue("approval", fromRepository), undefined);
  assert.equal(effectiveValue("approval", { ...fromRepository, globalValue: "ask" }), "ask");
  const userOnly = ["server.command", "server.python", "server.shared", "shellPath", "shellCommandPrefix", "tools"];
  for (const key of [...userOnly, "sessionDir", "retry.maxRetries", "retry.provider.maxRetries"]) {
    assert.equal(effectiveValue(key, { workspaceValue: ["evil"] }), undefined, key);
  }
  // Harmless settings follow the most specific scope.
  assert.equal(effectiveValue("model", { globalValue: "a", workspaceValue: "b", workspaceFolderValue: "c" }), "c");
  assert.equal(effectiveValue("model", { globalValue: "a", workspaceValue: "b" }), "b");
});

test("package.json declares exactly the mirrored settings, user-only ones with a scope no workspace can set", () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as {
    contributes: { configuration: { properties: Record<string, { scope?: string }> } };
  };
  const declared = manifest.contributes.configuration.properties;
  const keys = Object.keys(declared).map((key) => key.slice("pi.".length));
  assert.deepEqual(keys.filter((key) => !key.startsWith("server.")).sort(), Object.keys(SERVER_SETTINGS).sort());
  // application (guards: User settings, local and remote windows) or machine (paths of the server's machine): test/settingsScope.test.ts
  for (const key of USER_ONLY_SETTINGS) assert.ok(["application", "machine"].includes(declared[`pi.${key}`]?.scope ?? ""), key);
});
