import assert from "node:assert/strict";
import { test } from "node:test";
import { actionsFor, branchFromHere, editAndResend, forkToNewSession, Requester } from "../src/shared/messageActions";

/** A requester that records each call and answers from a table (a call it has no answer for fails). */
function recorder(answers: Record<string, unknown> = {}): { calls: [string, object][]; request: Requester } {
  const calls: [string, object][] = [];
  const request = <T>(method: string, params: object): Promise<T> => {
    calls.push([method, params]);
    if (!(method in answers)) return Promise.reject(new Error(`unexpected ${method}`));
    return Promise.resolve(answers[method] as T);
  };
  return { calls, request };
}

test("edit and resend navigates to the user message, then prompts with the edited text", async () => {
  const { calls, request } = recorder({ "pi/navigate": { leafId: "p1", editorText: "old" }, "pi/prompt": {} });
  await editAndResend(request, "u1", "new text");
  assert.deepEqual(calls, [
    ["pi/navigate", { targetId: "u1" }],
    ["pi/prompt", { text: "new text" }],
  ]);
});

test("edit and resend sends nothing when navigating fails", async () => {
  const { calls, request } = recorder({ "pi/prompt": {} });
  await assert.rejects(editAndResend(request, "u1", "new text"), /unexpected pi\/navigate/);
  assert.deepEqual(calls.map(([method]) => method), ["pi/navigate"]);
});

test("branch from here navigates only and hands back pi's editor text", async () => {
  const { calls, request } = recorder({ "pi/navigate": { leafId: "p1", editorText: "hello" } });
  assert.equal(await branchFromHere(request, "u1"), "hello");
  assert.deepEqual(calls, [["pi/navigate", { targetId: "u1" }]]);
});

test("fork to new session asks pi/branchToNewSession for the entry", async () => {
  const adopted: [string, object][] = [];
  await forkToNewSession((method, params) => {
    adopted.push([method, params]);
    return Promise.resolve();
  }, "a7");
  assert.deepEqual(adopted, [["pi/branchToNewSession", { entryId: "a7" }]]);
});

test("user messages can be edited; replies branched or forked; tool cards offer nothing", () => {
  assert.deepEqual(actionsFor("user"), ["editAndResend", "branchFromHere", "forkToNewSession"]);
  assert.deepEqual(actionsFor("assistant"), ["branchFromHere", "forkToNewSession"]);
  assert.deepEqual(actionsFor("tool"), []);
});
