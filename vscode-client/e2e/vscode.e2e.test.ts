/**
 * The extension in a real VS Code (code-server) in a real browser (headless Chromium), installed
 * from its packaged .vsix, talking to the real pi-lsp, which talks to the scripted loopback model
 * (e2e/fake_model.py). One conversation, step by step, a screenshot after each (e2e/screenshots/).
 *
 * Needs `e2e/setup.sh` (code-server, Chromium) and the .vsix (`npm run package`); `make vscode-e2e`
 * does all of it.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test, TestContext } from "node:test";
import { Browser } from "playwright-core";
import { eventually, seeCount, seeNoText, seeText, seeValue, seeVisible } from "./expect";
import { CodeServer, FakeModel, machineSettings, openBrowser, openWorkbench, REPO_DIR, RunDir, SCREENSHOTS_DIR } from "./harness";
import { controlStyles, switchTheme, THEMES } from "./theme";
import { Workbench } from "./workbench";

const VSIX = process.env.PI_E2E_VSIX ?? path.join(REPO_DIR, "vscode-client", "pi-lsp-vscode.vsix");
const NOTES = "first line\nsecond line\nthird line\n";

test("pi in a real VS Code: chat, approval with diff, stop, compact, edit & resend, reopen mid-run, reload mid-run and mid-approval", { timeout: 480_000 }, async (t: TestContext) => {
  fs.rmSync(SCREENSHOTS_DIR, { recursive: true, force: true });
  const run = new RunDir(path.join(REPO_DIR, "vscode-client", "e2e", "run"));
  fs.writeFileSync(path.join(run.workspace, "notes.txt"), NOTES);

  const model = await FakeModel.start(run);
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let failed = false;
  let bench: Workbench | undefined;
  const started = Date.now();
  const timings: string[] = [];

  /** One step: timed, a screenshot on failure, and no later step after a failure. */
  const step = async (name: string, work: (wb: Workbench) => Promise<void>): Promise<void> => {
    await t.test(name, async (st) => {
      if (failed || bench === undefined) {
        st.skip("an earlier step failed");
        return;
      }
      const at = Date.now();
      try {
        await work(bench);
        timings.push(`${name}: ${((Date.now() - at) / 1000).toFixed(1)} s`);
      } catch (error) {
        failed = true;
        throw new Error(`${String(error)}\n${await bench.failedStep(name)}\n${run.describe()}`, { cause: error });
      }
    });
  };

  try {
    // ask: every edit waits for the user's approval, so the diff can be seen before it happens. Set
    // in the User settings, as a user does (an application setting: code-server is a remote setup).
    // Retries fast (and the SDK's own off), so a rate-limit series is one status row, then one error card.
    server = await CodeServer.start(run, model, VSIX, {
      "pi.compaction.keepRecentTokens": 50,
      "pi.approval": "ask",
      "pi.retry.maxRetries": 2,
      "pi.retry.baseDelayMs": 1500,
      "pi.retry.provider.maxRetries": 0,
    });
    browser = await openBrowser();
    bench = new Workbench(await openWorkbench(browser, server, run));
    timings.push(`code-server up, workbench loaded: ${((Date.now() - started) / 1000).toFixed(1)} s`);

    await step("open the pi sidebar", async (wb) => {
      await wb.openSidebar();
      await seeVisible(wb.chatButton("Send"));
      await seeVisible(wb.chatButton("Stop"));
      // What to do in an empty chat, and the Chat view's own actions in its title bar.
      await seeText(wb.chat.getByRole("region", { name: "getting started" }), "Type your request in the box");
      for (const action of ["New Session", "Open Session…", "Compact…"]) await seeVisible(wb.chatHeader.getByRole("button", { name: action }));
      // pi: Focus Chat Prompt (Ctrl+Alt+P) from anywhere in the workbench.
      await wb.page.locator(".part.editor").click();
      await wb.page.keyboard.press("Control+Alt+p");
      await eventually("the prompt box to have the focus", () => wb.promptBox.evaluate((box) => box.ownerDocument.activeElement === box && box.ownerDocument.hasFocus()), (focused) => focused, 15_000);
      await wb.screenshot("sidebar-open");
    });

    await step("send a prompt and see the reply stream", async (wb) => {
      await wb.send("Say hello");
      await seeText(wb.last("user message"), "Say hello");
      const reply = wb.last("assistant message");
      // The reply is an article while it streams: seen with its beginning but not yet its end.
      await eventually(
        "the reply part-way through its stream",
        () => reply.innerText({ timeout: 1_000 }),
        (text) => text.includes("Hello from the") && !text.includes("small pieces."),
        30_000,
      );
      await wb.screenshot("reply-streaming");
      await seeText(reply, "this reply streamed in twelve small pieces.", 30_000);
      await seeText(reply.locator("strong"), "fake model"); // markdown drawn
      await wb.runEnded();
      await seeText(wb.gauge, /^pi \d+%/, 15_000);
      // The Chat view names the open session: its first message and when it started.
      await seeText(wb.chatHeader, /Say hello · Today \d\d:\d\d/, 15_000);
      await wb.screenshot("reply-done");
    });

    await step("approve an edit after seeing its diff", async (wb) => {
      await wb.send("Edit notes.txt, please");
      const card = wb.approvalCard;
      await seeVisible(card, 30_000);
      // The diff is on screen before anything is written: in the card, and in VS Code's diff editor.
      await seeText(card, "+second line, edited");
      await card.getByRole("button", { name: "Open diff", exact: true }).click();
      const diffEditor = wb.page.locator(".monaco-diff-editor");
      await seeVisible(diffEditor, 15_000);
      await seeText(diffEditor.locator(".modified-in-monaco-diff-editor"), "second line, edited");
      // No editor was open: the diff takes the empty editor group instead of opening a second one.
      await seeCount(wb.page.locator(".editor-group-container"), 1);
      assert.equal(fs.readFileSync(path.join(run.workspace, "notes.txt"), "utf8"), NOTES);
      await wb.screenshot("approval-with-diff");
      // The three theme kinds: every control wears the theme's variable for its kind (never the
      // browser's default white in a dark theme), Allow looks primary and Deny secondary, icons load.
      for (const theme of THEMES) {
        await switchTheme(wb, theme);
        const { styles, codiconLoaded } = await controlStyles(wb);
        assert.ok(codiconLoaded, `the codicon font loaded in ${theme.label}`);
        for (const style of styles) assert.equal(style.actual, style.expected, `${theme.label}: ${style.control} ${style.property}`);
        const background = (control: string): string => styles.find((s) => s.control === control && s.property === "background-color")?.actual ?? "";
        if (theme.kind !== "vscode-high-contrast") {
          assert.notEqual(background("primary button (Allow)"), background("secondary button (Deny)"), `${theme.label}: Allow and Deny look different`);
        }
        if (theme.kind === "vscode-dark") {
          for (const style of styles.filter((s) => s.property === "background-color")) {
            assert.ok(!/^rgb\((255, 255, 255|239, 239, 239|240, 240, 240)\)$/.test(style.actual), `${style.control} is browser-default white in ${theme.label}`);
          }
        }
        await wb.screenshot(`approval-theme-${theme.kind}`);
      }
      await card.getByRole("button", { name: "Allow", exact: true }).click();
      await seeText(wb.last("tool call"), "notes.txt", 30_000);
      await seeText(wb.last("assistant message"), "I replaced the second line of notes.txt.", 30_000);
      await seeCount(wb.approvalCard, 0);
      assert.equal(fs.readFileSync(path.join(run.workspace, "notes.txt"), "utf8"), "first line\nsecond line, edited\nthird line\n");
      await wb.runEnded();
      await wb.screenshot("edit-applied");
    });

    await step("Open diff of the applied edit shows the whole file, not only the changed line", async (wb) => {
      const card = wb.last("tool call");
      await card.getByRole("button", { name: "Open diff", exact: true }).click();
      const diffEditor = wb.page.locator(".monaco-diff-editor");
      await seeVisible(diffEditor, 15_000);
      const modified = diffEditor.locator(".modified-in-monaco-diff-editor");
      await seeText(modified, "second line, edited", 15_000);
      await seeText(modified, "first line");
      await seeText(modified, "third line");
      await seeText(diffEditor.locator(".original-in-monaco-diff-editor"), "first line");
      await seeText(wb.page.locator(".tab.active"), "notes.txt (edit)");
      await wb.screenshot("applied-edit-whole-file");
    });

    await step("stop a run", async (wb) => {
      await wb.send("Take your time with this one");
      const reply = wb.last("assistant message");
      await seeText(reply, "I will", 30_000);
      await wb.screenshot("run-before-stop");
      await wb.chatButton("Stop").click();
      await wb.runEnded();
      const assistants = run.sessionEntries().filter((e) => (e.message as { role?: string } | undefined)?.role === "assistant");
      const lastReply = assistants.at(-1)?.message as { stopReason?: string };
      assert.equal(lastReply.stopReason, "aborted");
      await wb.screenshot("run-stopped");
    });

    await step("compact from the gauge", async (wb) => {
      const before = await seeText(wb.gauge, /^pi \d+%/);
      await wb.gauge.click();
      // First what compaction would do (pi/prepareCompaction), then the user's go-ahead.
      await seeText(wb.dialog, /Compact this session \(\d+(\.\d)?k? tokens\)\?/, 15_000);
      await seeText(wb.dialog, "Summarised: ");
      await seeText(wb.dialog, "Kept as they are: ");
      await wb.screenshot("compact-plan");
      await wb.dialog.getByRole("button", { name: "Compact", exact: true }).click();
      await eventually("a compaction entry in the session file", () => run.sessionEntries().some((e) => e.type === "compaction"), (found) => found, 30_000);
      const compaction = run.sessionEntries().find((e) => e.type === "compaction") as { summary: string };
      assert.match(compaction.summary, /Try the pi extension end to end/);
      // Right after a compaction the server (as pi) knows no exact size until the next reply: the
      // gauge shows the compaction's own estimate, marked with "~".
      await seeText(wb.gauge, /^pi ~\d+%/, 15_000);
      assert.match(before, /^pi \d+%/);
      await seeText(wb.treeRows.filter({ hasText: /^compaction/ }), "compaction", 15_000);
      // The chat shows where the compaction happened: a collapsed card whose body is the summary.
      const card = wb.articles("compaction summary");
      await seeText(card, /Compacted — [\d,]+ tokens summarised/, 15_000);
      await card.locator("summary").click();
      await seeText(card, "Try the pi extension end to end");
      await wb.screenshot("compacted");
    });

    await step("edit and resend an earlier message in place; the tree gains a branch; ‹ 1/2 › flips between the versions", async (wb) => {
      const first = wb.articles("user message").filter({ hasText: "Say hello" }).first();
      await first.hover();
      await first.getByRole("button", { name: "Edit and resend", exact: true }).click();
      // The message itself becomes the editor (multi-line), with Send and Cancel: no input box at the top.
      const editor = first.getByRole("textbox", { name: "Edit message" });
      await seeValue(editor, "Say hello", 15_000);
      await seeCount(wb.quickInput.getByRole("textbox"), 0);
      await editor.fill("Say hello again");
      await editor.press("Shift+Enter");
      await editor.pressSequentially("please");
      await seeValue(editor, "Say hello again\nplease");
      await wb.screenshot("edit-in-place");
      await first.getByRole("button", { name: "Send", exact: true }).click();
      // notes.txt was edited since that message: asked whether to rewind the code too (no: later steps edit it further).
      await seeText(wb.dialog, "Rewind the code too?", 15_000);
      await wb.dialog.getByRole("button", { name: "Keep the code", exact: true }).click();
      await seeText(wb.last("assistant message"), "A second answer, on a new branch.", 30_000);
      await wb.runEnded();
      // Two branches under the same parent: the old one (folded, with its entries) and the new one.
      await seeText(wb.treeRows.filter({ hasText: /user: Say hello\s*\d+ entries/ }), /\d+ entries/, 15_000);
      await seeText(wb.treeRows.filter({ hasText: /user: Say hello again/ }), "user: Say hello again", 15_000);
      await wb.screenshot("tree-with-branch");
      // The resent message is version 2 of 2; ‹ shows the first version's conversation, › comes back.
      const resent = wb.articles("user message").filter({ hasText: "Say hello again" });
      const versions = resent.getByRole("group", { name: "versions" });
      await seeText(versions, "2/2", 15_000);
      await wb.screenshot("resent-2-of-2");
      await versions.getByRole("button", { name: "Previous version", exact: true }).click();
      await seeText(wb.last("assistant message"), "I will", 30_000); // that branch's newest reply (the stopped one)
      await seeCount(wb.articles("user message").filter({ hasText: "Say hello again" }), 0);
      const original = wb.articles("user message").filter({ hasText: "Say hello", hasNotText: "again" });
      await seeText(original.getByRole("group", { name: "versions" }), "1/2", 15_000);
      await wb.screenshot("flipped-to-1-of-2");
      await original.getByRole("group", { name: "versions" }).getByRole("button", { name: "Next version", exact: true }).click();
      await seeText(wb.last("assistant message"), "A second answer, on a new branch.", 30_000);
      await seeText(wb.articles("user message").first(), "Say hello again");
      await seeText(wb.articles("user message").first().getByRole("group", { name: "versions" }), "2/2", 15_000);
    });

    await step("a rate limit lasting a whole series of retries: one status row, then an error card whose Retry works", async (wb) => {
      await wb.send("Rate limit me");
      const row = wb.chat.getByRole("status", { name: "retry status" });
      await seeText(row, /Rate limited — retrying (in \d+ s )?\([12]\/2\)/, 30_000);
      await wb.screenshot("rate-limited-retrying");
      const failed = wb.last("assistant message");
      const alert = failed.getByRole("alert");
      await seeText(alert, "Rate limited", 30_000);
      await seeText(alert, "429 rate_limit_error: Too many requests"); // the error body's message, not its JSON
      await wb.runEnded();
      await seeCount(row, 0);
      // One reply for the three attempts, not three.
      await seeCount(wb.articles("assistant message").filter({ has: wb.chat.getByRole("alert") }), 1);
      // Hovered (as when going for Retry), the message's actions show without covering the card's title.
      await failed.hover();
      const actions = failed.getByRole("group", { name: "message actions" });
      await eventually("the hovered message's actions drawn", () => actions.evaluate((bar) => getComputedStyle(bar).opacity), (opacity) => opacity === "1");
      const [bar, title] = await Promise.all([actions.boundingBox(), alert.locator(".error-title").boundingBox()]);
      assert.ok(bar && title, "the actions and the error title are on screen");
      const overlaps = bar.x < title.x + title.width && title.x < bar.x + bar.width && bar.y < title.y + title.height && title.y < bar.y + bar.height;
      assert.ok(!overlaps, `the actions (${JSON.stringify(bar)}) cover the error title (${JSON.stringify(title)})`);
      await wb.screenshot("rate-limited-error-card");
      await alert.getByRole("button", { name: "Retry", exact: true }).click();
      await seeText(wb.last("assistant message"), "Through at last, after the rate limit.", 30_000);
      await wb.runEnded();
      await seeCount(wb.articles("user message").filter({ hasText: "Rate limit me" }), 2);
      await wb.screenshot("rate-limit-retried");
    });

    await step("a stream cut twice mid-reply is drawn as one reply", async (wb) => {
      const before = await wb.articles("assistant message").count();
      await wb.send("Cut me off");
      const reply = wb.last("assistant message");
      await seeText(reply, "This reply came through whole on the third attempt.", 60_000);
      await wb.runEnded();
      await seeText(reply, "Answered after 3 attempts");
      assert.equal(await wb.articles("assistant message").count(), before + 1);
      const cut = run.sessionEntries().filter((e) => (e.message as { errorMessage?: string } | undefined)?.errorMessage === "terminated");
      assert.equal(cut.length, 2, "the session file holds the two cut attempts");
      await wb.screenshot("cut-stream-one-reply");
    });

    await step("close and reopen the chat mid-run; the run goes on in it", async (wb) => {
      await wb.send("Tell a long story");
      await seeText(wb.last("assistant message"), "word3", 30_000);
      await wb.screenshot("story-streaming");
      await wb.chatHeader.click(); // collapses the view: VS Code disposes the chat's webview
      await wb.promptBox.waitFor({ state: "detached", timeout: 15_000 });
      await wb.screenshot("chat-closed-mid-run");
      await wb.chatHeader.click();
      await wb.promptBox.waitFor({ timeout: 30_000 });
      await seeText(wb.last("assistant message"), "word", 15_000);
      await seeNoText(wb.last("assistant message"), "word80.");
      await wb.screenshot("chat-reopened-mid-run");
      await seeText(wb.last("assistant message"), "word80.", 30_000);
      await wb.runEnded();
      const replies = run.sessionEntries().filter((e) => (e.message as { role?: string } | undefined)?.role === "assistant");
      assert.equal((replies.at(-1)?.message as { stopReason?: string }).stopReason, "stop");
    });

    await step("reload the window mid-run; the run goes on in the reloaded chat", async (wb) => {
      await wb.send("Tell a longer story");
      await seeText(wb.last("assistant message"), "chapter3", 30_000);
      const servers = run.sharedServers();
      assert.equal(servers.length, 1, "one shared pi-lsp serves the window");
      await wb.screenshot("before-reload-mid-run");
      await wb.reloadWindow();
      // The reloaded window reattached to the same server, and the reply is drawn part-way and still growing.
      await seeText(wb.last("user message"), "Tell a longer story", 30_000);
      const reply = wb.last("assistant message");
      const partial = await seeText(reply, /chapter\d+/, 30_000);
      assert.ok(!partial.includes("chapter200."), `the reply had already ended when the reloaded chat showed it: ${partial.slice(-80)}`);
      await wb.screenshot("reloaded-mid-run");
      await eventually("the reply to keep growing after the reload", () => reply.innerText({ timeout: 1_000 }), (text) => text.length > partial.length, 15_000);
      await seeText(reply, "chapter200.", 90_000);
      await wb.runEnded();
      await wb.screenshot("reload-run-finished");
      assert.deepEqual(run.sharedServers().map((s) => s.pid), servers.map((s) => s.pid), "the same server before and after the reload");
      // The run was not started again after the reload: one model request, one complete reply.
      const asked = FakeModel.requests(run).filter((body) => JSON.stringify((body.messages as unknown[]).at(-1)).includes("Tell a longer story"));
      assert.equal(asked.length, 1);
      const replies = run.sessionEntries().filter((e) => (e.message as { role?: string } | undefined)?.role === "assistant");
      const last = replies.at(-1)?.message as { stopReason?: string; content?: { text?: string }[] };
      assert.equal(last.stopReason, "stop");
      assert.match(last.content?.[0]?.text ?? "", /^chapter1 chapter2 .* chapter200\.$/);
    });

    await step("reload the window while an approval waits; the card is there again and answers it", async (wb) => {
      await wb.send("Edit notes.txt, please");
      await seeVisible(wb.approvalCard, 30_000);
      await wb.screenshot("approval-before-reload");
      await wb.reloadWindow();
      // The server asks the reloaded window again (pi/requestApproval), which shows the card in the chat.
      await seeVisible(wb.approvalCard, 30_000);
      await seeText(wb.approvalCard, "+second line, edited, edited");
      await wb.screenshot("approval-after-reload");
      await wb.approvalCard.getByRole("button", { name: "Allow", exact: true }).click();
      await seeText(wb.last("assistant message"), "I replaced the second line of notes.txt.", 30_000);
      await seeCount(wb.approvalCard, 0);
      await wb.runEnded();
      assert.equal(fs.readFileSync(path.join(run.workspace, "notes.txt"), "utf8"), "first line\nsecond line, edited, edited\nthird line\n");
    });

    await step("the reloaded window goes on: the conversation drawn from the server, a new prompt answered", async (wb) => {
      await seeText(wb.articles("user message").first(), "Say hello again", 30_000);
      await seeText(wb.gauge, /^pi (~?\d+|\?)%/);
      await wb.send("Say hello");
      await seeText(wb.last("assistant message"), "this reply streamed in twelve small pieces.", 30_000);
      await wb.runEnded();
      await wb.screenshot("after-reload");
    });

    await step("the shared server dies; the window starts a new one and reopens the session", async (wb) => {
      const hellos = wb.articles("assistant message").filter({ hasText: "twelve small pieces." });
      const before = await hellos.count();
      const [dead] = run.sharedServers();
      process.kill(dead.pid, "SIGKILL"); // its state file stays behind, naming a dead process
      const [fresh] = await eventually("a new shared server", () => run.sharedServers(), (servers) => servers.length === 1 && servers[0].pid !== dead.pid, 30_000);
      assert.notEqual(fresh.pid, dead.pid);
      await seeText(wb.articles("user message").first(), "Say hello again", 30_000);
      await wb.send("Say hello");
      // Answered by the new server: the session was opened there again.
      await eventually("the reply from the new server", () => hellos.count(), (n) => n === before + 1, 30_000);
      await wb.runEnded();
      await wb.screenshot("after-server-restart");
      // A recovery the window made by itself is not reported as errors: the views waited for the
      // session to be open again, and requests lost with the dead server are only logged.
      const toasts = await wb.page.locator(".notifications-toasts .notification-list-item-message").allInnerTexts();
      assert.deepEqual(toasts.filter((text) => /no active session|Pending response rejected/.test(text)), []);
    });

    await step("pi.server.command changed in the remote settings: the window moves to that server and reopens its session", async (wb) => {
      const settingsFile = path.join(run.userData, "Machine", "settings.json");
      const movedLog = path.join(run.root, "pi-lsp-moved.log");
      const settings = machineSettings(movedLog);
      const before = run.sharedServers().map((server) => server.pid);
      // As a user does it: in VS Code's own editor of those settings (code-server does not pick up
      // a settings file written behind its back), pasted, not typed (the editor would close
      // brackets and indent lines as they are typed).
      await wb.page.keyboard.press("F1");
      const input = wb.quickInput.locator("input.input");
      await input.fill(">Preferences: Open Remote Settings (JSON)");
      await wb.quickInput.locator(".monaco-list-row").filter({ hasText: /^Preferences: Open Remote Settings \(JSON\)/ }).first().click({ timeout: 15_000 });
      await wb.page.locator(".monaco-editor .view-lines").filter({ hasText: "pi.server.command" }).first().waitFor({ timeout: 15_000 });
      await wb.page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
      await wb.page.evaluate((text) => navigator.clipboard.writeText(text), JSON.stringify(settings, null, 2));
      await wb.page.keyboard.press("Control+A");
      await wb.page.keyboard.press("Control+V");
      await wb.page.keyboard.press("Control+S");
      const saved = await eventually("the settings saved", () => fs.readFileSync(settingsFile, "utf8"), (text) => text.includes(movedLog), 15_000);
      assert.deepEqual(JSON.parse(saved), settings);
      await wb.page.keyboard.press("Control+W");
      const moved = await eventually(
        "a shared server for the new command",
        () => run.sharedServers().filter((server) => !before.includes(server.pid)),
        (servers) => servers.length === 1,
        60_000,
      );
      assert.equal(moved.length, 1);
      await seeText(wb.articles("user message").first(), "Say hello again", 30_000);
      const hellos = wb.articles("assistant message").filter({ hasText: "twelve small pieces." });
      const count = await hellos.count();
      await wb.send("Say hello");
      await eventually("the reply", () => hellos.count(), (n) => n === count + 1, 30_000);
      await wb.runEnded();
      // The prompt went to the server the settings name: its own log has it.
      assert.match(fs.readFileSync(movedLog, "utf8"), /Request 'pi\/prompt' received/);
      await wb.screenshot("server-moved");
    });
  } finally {
    if (failed || t.signal.aborted) process.stderr.write(`\n${run.describe()}\n`);
    process.stderr.write(`\ntimings:\n  ${timings.join("\n  ")}\n  total: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    await browser?.close();
    server?.stop();
    run.stopSharedServers();
    model.stop();
  }
});
