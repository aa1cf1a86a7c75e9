/** Open Session… names a fork apart from the session it was made from (against the real server). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pickItem, SessionSearch } from "../src/host/sessionSearch";
import { assistantEntry, needsServer, say, startServer } from "./realServer";

test("Open Session… marks a fork and names its source", { skip: needsServer }, async () => {
  const server = await startServer();
  try {
    await server.request("pi/newSession", { cwd: server.home });
    await server.request("pi/setSessionName", { name: "Parser work" });
    await say(server, "fix the lexer");
    // pi writes a session file from its first reply on: the fork holds the reply too.
    const { id: replyId } = await server.request<{ id: string }>("pi/appendEntry", { entry: assistantEntry([{ type: "text", text: "done" }]) });
    await server.request("pi/branchToNewSession", { entryId: replyId });
    const search = new SessionSearch((method, params) => server.request(method, params), server.home);
    const sessions = (await search.search("")) ?? [];
    assert.equal(sessions.length, 2);
    const items = sessions.map((info) => pickItem(info, false, sessions));
    const fork = items.find((item) => item.label.startsWith("$(repo-forked) "));
    const source = items.find((item) => !item.label.startsWith("$(repo-forked) "));
    assert.ok(fork && source, JSON.stringify(items));
    assert.equal(source.label, "Parser work");
    assert.match(fork.description, /^fork of “Parser work” · \d+ messages · /);
    // A source not listed (another folder): its file name.
    const alone = pickItem({ ...sessions.find((s) => s.parentSessionPath !== undefined)!, name: undefined }, false, []);
    assert.match(alone.description, /^fork of “[^/”]+” · /);
  } finally {
    server.close();
  }
});
