/**
 * Rewind and review (contract v3) in a real VS Code (code-server) in headless Chromium, against the
 * real pi-lsp and the scripted model (e2e/fake_model.py): an edit reviewed hunk by hunk (only the
 * accepted hunk is written), the Changes view's diff and revert, a rewind across two branches
 * with its undo, Rewind code to here on a chat message (an icon button, in three themes), ‹ to an
 * older version taking its code along, and a proposed file edited by hand before Allow, each checked
 * on disk. Screenshots in e2e/screenshots-rewind/.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test, TestContext } from "node:test";
import { Browser, Locator } from "playwright-core";
import { eventually, seeCount, seeText, seeValue, seeVisible } from "./expect";
import { CodeServer, FakeModel, openBrowser, openWorkbench, REPO_DIR, RunDir } from "./harness";
import { switchTheme, THEMES } from "./theme";
import { Workbench } from "./workbench";

const VSIX = process.env.PI_E2E_VSIX ?? path.join(REPO_DIR, "vscode-client", "pi-lsp-vscode.vsix");
const E2E_DIR = path.join(REPO_DIR, "vscode-client", "e2e");
const LONG = Array.from({ length: 20 }, (_v, i) => `line ${i + 1}\n`).join("");

test("rewind and review in a real VS Code: per-hunk accept, the Changes view, a rewind across branches and its undo", { timeout: 420_000 }, async (t: TestContext) => {
  const shots = path.join(E2E_DIR, "screenshots-rewind");
  fs.rmSync(shots, { recursive: true, force: true });
  const run = new RunDir(path.join(E2E_DIR, "run-rewind"));
  const file = (name: string) => path.join(run.workspace, name);
  fs.writeFileSync(file("long.txt"), LONG);
  fs.writeFileSync(path.join(run.agentDir, "settings.json"), JSON.stringify({ approval: "ask" }));

  const model = await FakeModel.start(run);
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let failed = false;
  let bench: Workbench | undefined;

  const step = async (name: string, work: (wb: Workbench) => Promise<void>): Promise<void> => {
    await t.test(name, async (st) => {
      if (failed || bench === undefined) {
        st.skip("an earlier step failed");
        return;
      }
      try {
        await work(bench);
      } catch (error) {
        failed = true;
        throw new Error(`${String(error)}\n${await bench.failedStep(name)}\n${run.describe()}`, { cause: error });
      }
    });
  };
  /**
   * Allow the approval card waiting now (after checking what it is about). A card that is still
   * there a few seconds after the click is clicked again, as a user would: once so far (in about
   * fifteen CI-like runs) the first click, soon after VS Code's "Rewind the code too?" dialog
   * closed, never reached the chat (the server got no answer, the extension host logged nothing).
   * The second click is noted in the test's output, so it stays visible.
   */
  const allow = async (wb: Workbench, about: string): Promise<void> => {
    await seeText(wb.approvalCard, about, 30_000);
    const button = wb.approvalCard.getByRole("button", { name: "Allow", exact: true });
    await button.click();
    try {
      await seeCount(wb.approvalCard, 0, 5_000);
    } catch {
      t.diagnostic(`the approval card for ${about} was still there 5 s after Allow: clicked again`);
      await button.click();
      await seeCount(wb.approvalCard, 0);
    }
  };
  const changesRows = (wb: Workbench): Locator =>
    wb.page.locator(".pane").filter({ has: wb.page.locator(".pane-header", { hasText: /^\s*Changes/ }) }).getByRole("treeitem");
  /**
   * Right-click `row` and choose `item` until `done` holds. A menu ignores a click that comes right
   * after it opened, and a redraw of the tree (a run's last notifications) can close it: then it is
   * opened again, as a user would.
   */
  const fromMenu = async (
    wb: Workbench,
    row: Locator,
    item: string,
    done: () => Promise<boolean>,
    reveal: () => Promise<void> = async () => {},
  ): Promise<void> => {
    const entry = wb.page.locator(".context-view").getByRole("menuitem", { name: item });
    await eventually(
      `${item} chosen from the menu`,
      async () => {
        if (await done()) return true;
        if (await entry.isVisible()) {
          await entry.hover();
          await wb.page.keyboard.press("Enter");
        } else if (await row.isVisible()) {
          await row.click({ button: "right" });
        } else {
          await reveal(); // a late redraw folded its branch: opened again, as a user would
        }
        return done();
      },
      (shown) => shown,
      15_000,
    );
  };
  const modified = (wb: Workbench): Locator => wb.page.locator(".monaco-diff-editor .modified-in-monaco-diff-editor .view-lines");

  try {
    server = await CodeServer.start(run, model, VSIX, {});
    browser = await openBrowser();
    bench = new Workbench(await openWorkbench(browser, server, run), shots);

    await step("open the pi sidebar", async (wb) => {
      await wb.openSidebar();
      await wb.screenshot("sidebar");
    });

    await step("review an edit hunk by hunk: only the accepted change is written", async (wb) => {
      await wb.send("Make two changes to long.txt");
      const card = wb.approvalCard;
      await seeVisible(card, 30_000);
      await seeText(card, "2 of 2 changes accepted");
      await card.getByRole("button", { name: "Open diff", exact: true }).click();
      await seeText(modified(wb), "line eighteen", 15_000);
      await seeText(modified(wb), "line two");
      await wb.screenshot("review-all-accepted");
      await card.getByRole("checkbox", { name: /Accept change 2/ }).uncheck();
      await seeText(card, "1 of 2 changes accepted");
      // The proposed side follows: change 2 is gone from it, change 1 stays.
      // (Monaco draws spaces as no-break spaces: \s matches both.)
      const proposed = async () => (await modified(wb).innerText()).replace(/\s+/g, " ");
      await eventually("the proposed file without change 2", proposed, (text) => !text.includes("eighteen") && text.includes("line 18") && text.includes("line two"), 15_000);
      await wb.screenshot("review-one-rejected");
      assert.equal(fs.readFileSync(file("long.txt"), "utf8"), LONG, "nothing written before Allow");
      await card.getByRole("button", { name: "Allow", exact: true }).click();
      await seeCount(card, 0);
      await seeText(wb.last("assistant message"), "I replaced the second line", 30_000);
      await wb.runEnded();
      assert.equal(fs.readFileSync(file("long.txt"), "utf8"), LONG.replace("line 2\n", "line two\n"));
      // The review tab closed with the answer.
      await seeCount(wb.page.locator(".monaco-diff-editor"), 0);
      await wb.screenshot("review-written");
    });

    await step("the Changes view: the last run's file, its diff, and Revert", async (wb) => {
      const rows = changesRows(wb);
      await seeText(rows.filter({ hasText: "Last run" }), "1 file", 30_000);
      const long = rows.filter({ hasText: "long.txt" }).first();
      await long.click();
      await seeText(modified(wb), "line two", 15_000);
      await seeText(wb.page.locator(".monaco-diff-editor .original-in-monaco-diff-editor .view-lines"), "line 2");
      await wb.screenshot("changes-diff");
      await long.hover();
      await long.getByRole("button", { name: "Revert" }).click();
      await eventually("long.txt reverted", () => fs.readFileSync(file("long.txt"), "utf8"), (text) => text === LONG, 15_000);
      await seeVisible(wb.page.locator(".notifications-toasts").getByText(/Reverted 1 file: long\.txt/), 15_000);
      await wb.screenshot("changes-reverted");
    });

    await step("edit and resend on another branch, rewinding the code too", async (wb) => {
      await wb.send("Write alpha.txt");
      await allow(wb, "alpha.txt");
      await seeText(wb.last("assistant message"), "alpha.txt is written.", 30_000);
      await wb.runEnded();
      assert.equal(fs.readFileSync(file("alpha.txt"), "utf8"), "alpha\n");
      const alpha = wb.articles("user message").filter({ hasText: "Write alpha.txt" }).last();
      await alpha.hover();
      await alpha.getByRole("button", { name: "Edit and resend", exact: true }).click();
      const box = alpha.getByRole("textbox", { name: "Edit message" }); // edited in place, in the chat
      await seeValue(box, "Write alpha.txt", 15_000);
      await box.fill("Write beta.txt");
      await box.press("Enter");
      // The code was different before that message: asked whether to rewind it too.
      await seeText(wb.dialog, "Rewind the code too?", 15_000);
      await seeText(wb.dialog, "delete: alpha.txt");
      await wb.screenshot("resend-asks-rewind");
      await wb.dialog.getByRole("button", { name: "Rewind code too", exact: true }).click();
      await allow(wb, "beta.txt");
      await seeText(wb.last("assistant message"), "beta.txt is written.", 30_000);
      await wb.runEnded();
      assert.ok(!fs.existsSync(file("alpha.txt")), "alpha.txt went with the rewind");
      assert.equal(fs.readFileSync(file("beta.txt"), "utf8"), "beta\n");
      await wb.screenshot("branch-b-written");
    });

    await step("rewind the code to a point on the other branch (Session Tree), then undo it", async (wb) => {
      const branchA = wb.treeRows.filter({ hasText: /user: Write alpha\.txt/ }).first();
      await seeVisible(branchA, 15_000);
      const reply = wb.treeRows.filter({ hasText: "assistant: alpha.txt is written." }).first();
      // Expanded until its reply shows. The run's last refresh of the tree turns this branch from
      // the current one (open) to another (folded), and under load it can come after the user
      // opened it: then it is opened again.
      const expandBranchA = async (): Promise<void> => {
        if ((await branchA.getAttribute("aria-expanded")) === "false") await branchA.click();
      };
      await eventually(
        "the other branch expanded",
        async () => {
          if (await reply.isVisible()) return true;
          await expandBranchA();
          return false;
        },
        (shown) => shown,
        15_000,
      );
      await fromMenu(wb, reply, "Label…", () => wb.quickInput.getByRole("textbox").isVisible(), expandBranchA);
      // The branch the user opened stays open when the tree is redrawn (here by a label, which
      // appends an entry): the rows under the pointer do not move.
      await wb.quickInput.getByRole("textbox").fill("before beta");
      await wb.page.keyboard.press("Enter");
      await seeVisible(wb.treeRows.filter({ hasText: "[before beta]" }), 15_000);
      assert.equal(await branchA.getAttribute("aria-expanded"), "true", "the opened branch stayed open through the redraw");
      await fromMenu(wb, reply, "Rewind Code to Here", () => wb.dialog.isVisible());
      await seeText(wb.dialog, "Rewind code to here: create 1 file, delete 1 file?", 15_000);
      await seeText(wb.dialog, "To: assistant: alpha.txt is written."); // the row the menu was opened on
      await seeText(wb.dialog, "create: alpha.txt");
      await seeText(wb.dialog, "delete: beta.txt");
      await wb.screenshot("rewind-preview");
      await wb.dialog.getByRole("button", { name: "Restore files", exact: true }).click();
      await eventually("alpha.txt back and beta.txt gone", () => [fs.existsSync(file("alpha.txt")), fs.existsSync(file("beta.txt"))], ([a, b]) => a && !b, 15_000);
      assert.equal(fs.readFileSync(file("alpha.txt"), "utf8"), "alpha\n");
      const notice = wb.chat.getByRole("status", { name: "restore result" });
      await seeText(notice, "restored 2 files", 15_000);
      await wb.screenshot("rewound");
      await notice.getByRole("button", { name: "Undo restore", exact: true }).click();
      await eventually("the undo: beta.txt back, alpha.txt gone", () => [fs.existsSync(file("alpha.txt")), fs.existsSync(file("beta.txt"))], ([a, b]) => !a && b, 15_000);
      await seeText(wb.chat.getByRole("status", { name: "restore result" }), "Undo restore: put back 2 files", 15_000);
      await wb.screenshot("undone");
    });

    await step("Rewind code to here on a chat message", async (wb) => {
      const beta = wb.articles("user message").filter({ hasText: "Write beta.txt" }).last();
      const rewind = beta.getByRole("button", { name: "Rewind code to here", exact: true });
      // An icon button among the message's other actions (shown on hover), in every kind of theme.
      await seeCount(rewind.locator(".codicon-discard"), 1, 15_000);
      assert.equal((await rewind.textContent())?.trim(), "");
      assert.equal(await rewind.getAttribute("title"), "Rewind code to here");
      for (const theme of THEMES) {
        await switchTheme(wb, theme);
        await beta.hover();
        await wb.screenshot(`rewind-icon-${theme.kind}`);
      }
      await rewind.click();
      await seeText(wb.dialog, "Rewind code to here: delete 1 file?", 15_000);
      await seeText(wb.dialog, "To: user: Write beta.txt");
      await wb.dialog.getByRole("button", { name: "Restore files", exact: true }).click();
      await eventually("beta.txt gone", () => fs.existsSync(file("beta.txt")), (exists) => !exists, 15_000);
      await seeText(wb.chat.getByRole("status", { name: "restore result" }), "restored 1 file: beta.txt (deleted)", 15_000);
      await wb.screenshot("chat-rewind");
    });

    await step("‹ to the older version, whose code differs: asked first, and the code comes along", async (wb) => {
      const beta = wb.articles("user message").filter({ hasText: "Write beta.txt" }).last();
      const versions = beta.getByRole("group", { name: "versions" });
      await seeText(versions, "2/2", 15_000);
      await versions.getByRole("button", { name: "Previous version", exact: true }).click();
      // Version 1 wrote alpha.txt, which the files lack now: the same preview as a rewind, then the choice.
      await seeText(wb.dialog, "Previous version: the code was different at that point (1 file). Rewind the code too?", 15_000);
      await seeText(wb.dialog, "create: alpha.txt");
      await wb.screenshot("flip-asks-rewind");
      await wb.dialog.getByRole("button", { name: "Rewind code too", exact: true }).click();
      await eventually("alpha.txt back with version 1", () => fs.existsSync(file("alpha.txt")), (exists) => exists, 15_000);
      assert.equal(fs.readFileSync(file("alpha.txt"), "utf8"), "alpha\n");
      assert.ok(!fs.existsSync(file("beta.txt")));
      const alpha = wb.articles("user message").filter({ hasText: "Write alpha.txt" }).last();
      await seeText(alpha.getByRole("group", { name: "versions" }), "1/2", 15_000);
      await seeText(wb.chat.getByRole("status", { name: "restore result" }), "restored 1 file: alpha.txt", 15_000);
      await wb.screenshot("flipped-with-code");
    });
    await step("edit the proposed text by hand before Allow: that text is written", async (wb) => {
      // The earlier diffs closed, so the review is the only diff editor.
      await wb.page.keyboard.press("F1");
      await wb.quickInput.locator("input.input").fill(">View: Close All Editors");
      await wb.quickInput.locator(".monaco-list-row").first().filter({ hasText: /^View: Close All Editors/ }).waitFor({ timeout: 15_000 });
      await wb.quickInput.locator("input.input").press("Enter");
      await seeCount(wb.page.locator(".monaco-diff-editor"), 0, 15_000);
      await wb.send("Make two changes to long.txt");
      const card = wb.approvalCard;
      await seeText(card, "2 of 2 changes accepted", 30_000);
      await card.getByRole("button", { name: "Open diff", exact: true }).click();
      await seeText(modified(wb), "line eighteen", 15_000);
      await modified(wb).click();
      await wb.page.keyboard.press("Control+Home");
      await wb.page.keyboard.type("by hand: ");
      await seeText(card, "The proposed text was edited", 15_000);
      await wb.screenshot("review-edited-by-hand");
      await card.getByRole("button", { name: "Allow", exact: true }).click();
      await seeCount(card, 0);
      await wb.runEnded();
      const expected = LONG.replace("line 1\n", "by hand: line 1\n").replace("line 2\n", "line two\n").replace("line 18\n", "line eighteen\n");
      assert.equal(fs.readFileSync(file("long.txt"), "utf8"), expected);
      await seeCount(wb.page.locator(".monaco-diff-editor"), 0, 15_000);
      await wb.screenshot("review-edited-written");
    });
  } finally {
    if (failed || t.signal.aborted) process.stderr.write(`\n${run.describe()}\n`);
    await browser?.close();
    server?.stop();
    run.stopSharedServers();
    model.stop();
  }
});
