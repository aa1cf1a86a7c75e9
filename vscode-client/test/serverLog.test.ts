/** Following the shared server's log file: appended text only, across moves, truncation and split characters. */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { LogTail } from "../src/host/serverLog";

test("only what is appended after start is passed on, in order, split characters joined", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-log-"));
  const file = path.join(dir, "pi-lsp.log");
  const seen: string[] = [];
  const tail = new LogTail(file, (text) => seen.push(text));
  try {
    tail.start(60_000); // polled by hand below
    tail.poll();
    assert.deepEqual(seen, []); // no file yet
    fs.writeFileSync(file, "written before\n");
    tail.poll();
    assert.deepEqual(seen, ["written before\n"]); // a file that appears later is read from its start

    tail.skipToEnd();
    fs.appendFileSync(file, "one\n");
    tail.poll();
    tail.poll();
    assert.deepEqual(seen.slice(1), ["one\n"]);

    const euro = Buffer.from("€\n"); // three bytes, then a newline
    fs.appendFileSync(file, euro.subarray(0, 2));
    tail.poll();
    fs.appendFileSync(file, euro.subarray(2));
    tail.poll();
    assert.equal(seen.slice(2).join(""), "€\n");

    // Moved aside and started again (a new server): the new file from its start.
    fs.renameSync(file, `${file}.1`);
    fs.writeFileSync(file, "fresh\n");
    tail.poll();
    assert.equal(seen.at(-1), "fresh\n");

    // Truncated in place (and shorter than what was read of it).
    fs.writeFileSync(file, "");
    fs.appendFileSync(file, "ok\n");
    tail.poll();
    assert.equal(seen.at(-1), "ok\n");
  } finally {
    tail.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
