import assert from "node:assert/strict";
import { test } from "node:test";
import { Coalesced } from "../src/host/coalesced";

test("the first ask runs at once; asks during a run become exactly one more run, started after them", async () => {
  const started: number[] = [];
  const finish: (() => void)[] = [];
  let asks = 0;
  const refetch = new Coalesced(
    () => {
      started.push(asks);
      return new Promise<void>((resolve) => finish.push(resolve));
    },
    (error) => assert.fail(String(error)),
  );
  asks = 1;
  refetch.ask();
  assert.deepEqual(started, [1], "no delay: the fetch goes out with the change");
  for (asks = 2; asks <= 5; asks += 1) refetch.ask();
  assert.deepEqual(started, [1]);
  finish.shift()?.();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(started, [1, 6], "one more run, after the last ask");
  finish.shift()?.();
  await refetch.settled();
  assert.deepEqual(started, [1, 6]);
  refetch.ask();
  assert.equal(started.length, 3);
  finish.shift()?.();
  await refetch.settled();
});

test("a failed run is reported and does not stop later ones", async () => {
  const errors: unknown[] = [];
  let runs = 0;
  const refetch = new Coalesced(
    () => {
      runs += 1;
      return runs === 1 ? Promise.reject(new Error("server gone")) : Promise.resolve();
    },
    (error) => errors.push(error),
  );
  refetch.ask();
  await refetch.settled();
  refetch.ask();
  await refetch.settled();
  assert.equal(runs, 2);
  assert.deepEqual(errors.map(String), ["Error: server gone"]);
});
