/** Wires the pi extension: server client, session, tree view, gauge and commands. */
import * as vscode from "vscode";
import { LanguageClient, State } from "vscode-languageclient/node";
import { ApiKeys } from "./apiKey";
import { ApprovalRequest } from "../shared/approvalModel";
import { ChangesViewProvider } from "./changesView";
import { ChatViewProvider } from "./chatView";
import { createClient, currentPiSettings, resolveRoute, ServerRoute, type SwitchHooks } from "./client";
import { DiffDocuments } from "./diffView";
import { ContextGauge } from "./gauge";
import { PiSession } from "./session";
import { registerRewindCommands } from "./rewindCommands";
import { registerSessionDocuments } from "./sessionDocuments";
import { SessionTreeProvider } from "./sessionTree";
import { ServerNotFoundError } from "./serverCommand";
import { connectionLost } from "./connectionLost";
import { registerTreeCommands } from "./treeCommands";
import { Notifications, ServerRequestMethods, type CompactionEnded, type CompactionStarted, type PiEventParams, type SessionChanged } from "../shared/protocol";

let client: LanguageClient | undefined;
/** The server this window runs on: the user's shared one (pi.server.shared) or its own. */
let route: ServerRoute | undefined;

let log: vscode.OutputChannel | undefined;

function reportError(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  if (connectionLost(error)) {
    // The server went away under the request: the window restarts or reconnects and redraws.
    log?.appendLine(`a request was lost with its connection: ${message}`);
    return;
  }
  void vscode.window.showErrorMessage(`pi: ${message}`);
}

/** Run a command's work, turning failures into an error message rather than a silent reject. */
function guarded(work: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await work();
    } catch (error) {
      reportError(error);
    }
  };
}

/** No server could be found or set up: say why, once, with a way to the settings and to the log. */
async function reportNoServer(error: ServerNotFoundError, output: vscode.OutputChannel): Promise<void> {
  const text = error.message.startsWith("pi.") ? error.message : `pi: ${error.message}`;
  const choice = await vscode.window.showErrorMessage(text, "Open Settings", "Show Log");
  if (choice === "Open Settings") await vscode.commands.executeCommand("workbench.action.openSettings", "pi.server");
  if (choice === "Show Log") output.show();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("pi");
  log = output;
  const gauge = new ContextGauge();
  gauge.show(undefined);
  const running = (): LanguageClient => {
    if (!client) throw new Error("pi-lsp is not running.");
    return client;
  };
  // The views' requests wait while the session is being opened again (a restarted or new shared
  // server has none open until then: they would fail with "there is no active session").
  const request = async <T>(method: string, params: object): Promise<T> => {
    await session.ready();
    return running().sendRequest<T>(method, params);
  };
  const session = new PiSession(running, context.workspaceState);
  const tree = new SessionTreeProvider(() => session.tree(), request, (error) => output.appendLine(`tree refresh failed: ${String(error)}`));
  // Restored diff and System Prompt tabs wait in session.ready() for the server and the last session.
  const diffs = new DiffDocuments({ ready: (timeoutMs) => session.ready(timeoutMs), sessionId: () => session.current?.sessionId, request });
  const chat = new ChatViewProvider(context.extensionUri, running, session, diffs);
  context.subscriptions.push(vscode.window.registerWebviewViewProvider("pi.chat", chat), diffs.register(), chat.reviews.register());
  const apiKeys = new ApiKeys(context.secrets, request);
  const changes = new ChangesViewProvider({ request, cwd: () => session.current?.cwd, diffs, report: reportError });
  context.subscriptions.push(
    changes.register(),
    chat.rewinder.onDidRestore(() => changes.refreshSoon()),
    ...registerRewindCommands(tree, chat.rewinder, reportError),
  );
  context.subscriptions.push(output, gauge, tree.register());

  /** The last compaction's `tokensAfter` (from pi/compactionEnded): the gauge's estimate until the next reply. */
  let compacted: { sessionId: string; tokensAfter: number } | undefined;
  const refresh = async (): Promise<void> => {
    tree.refreshSoon();
    changes.refreshSoon();
    try {
      const usage = await session.usage();
      const estimate = compacted?.sessionId === session.current?.sessionId ? compacted?.tokensAfter : undefined;
      gauge.show(usage, estimate);
      await chat.redraw();
    } catch (error) {
      output.appendLine(`refresh failed: ${String(error)}`);
    }
  };
  const revealInChat = async (entryId: string): Promise<void> => {
    await vscode.commands.executeCommand("pi.chat.focus");
    await chat.redraw();
    await chat.reveal(entryId);
  };
  context.subscriptions.push(
    session.onDidChange(() => void refresh()),
    vscode.workspace.onDidChangeConfiguration((change) => {
      if (change.affectsConfiguration("pi") && client?.isRunning()) {
        void client.sendNotification("workspace/didChangeConfiguration", { settings: { pi: currentPiSettings() } });
      }
    }),
    vscode.commands.registerCommand("pi.newSession", guarded(() => session.newSession())),
    vscode.commands.registerCommand("pi.continueRecent", guarded(() => session.continueRecent())),
    vscode.commands.registerCommand("pi.openSession", guarded(() => session.pickAndOpen())),
    vscode.commands.registerCommand("pi.compact", guarded(() => session.compact())),
    ...registerTreeCommands({ request, session, tree, revealInChat, report: reportError }),
    vscode.commands.registerCommand("pi.tree.refresh", guarded(() => tree.refresh())),
    ...registerSessionDocuments(running, session),
    vscode.commands.registerCommand("pi.renameSession", guarded(() => session.rename())),
    vscode.commands.registerCommand("pi.showServerLog", () => output.show()),
    vscode.commands.registerCommand("pi.focusPrompt", guarded(() => chat.focusPrompt())),
    vscode.commands.registerCommand(
      "pi.setApiKey",
      guarded(async () => {
        if (await apiKeys.ask()) await chat.redraw();
      }),
    ),
    vscode.commands.registerCommand(
      "pi.restartServer",
      guarded(async () => {
        if (!client) return;
        session.expectReopen();
        await client.stop();
        // A shared server is stopped too (it may be the one misbehaving); every window reconnects to a new one.
        if (route?.shared && (await route.shared.stopServer())) output.appendLine("stopped the shared pi-lsp");
        await client.start();
        await session.reopen();
      }),
    ),
  );

  try {
    route = new ServerRoute(await resolveRoute(context, output));
  } catch (error) {
    if (error instanceof ServerNotFoundError) {
      output.appendLine(error.message);
      void reportNoServer(error, output);
      session.reopened();
      return;
    }
    throw error;
  }
  context.subscriptions.push(route);
  client = createClient(route, output, {
    lost: () => session.expectReopen(),
    restarted: () => void session.reopen().catch(reportError),
  });
  context.subscriptions.push(
    client.onNotification(Notifications.sessionChanged, (params: SessionChanged) => {
      if (params.sessionId === session.current?.sessionId) session.noteChanged(params.leafId);
    }),
    client.onNotification(Notifications.event, (params: PiEventParams) => {
      if (params.sessionId !== session.current?.sessionId) return;
      chat.onEvent(params.seq, params.event);
      if (params.event.type === "agent_end") void refresh();
    }),
    client.onNotification(Notifications.compactionStarted, (params: CompactionStarted) => {
      if (params.sessionId === session.current?.sessionId) chat.onCompactionNotice(true, params);
    }),
    client.onNotification(Notifications.compactionEnded, (params: CompactionEnded) => {
      if (params.sessionId !== session.current?.sessionId) return;
      chat.onCompactionNotice(false, params);
      if (typeof params.result?.tokensAfter === "number") {
        compacted = { sessionId: params.sessionId, tokensAfter: params.result.tokensAfter };
        void refresh();
      }
      // Automatic compactions would fail unseen while the chat is hidden; a manual one's failure is its request's error.
      if (params.error && params.reason !== "manual") void vscode.window.showWarningMessage(`pi: ${params.error}`);
    }),
    client.onRequest(ServerRequestMethods.requestApproval, (approval: ApprovalRequest) => chat.approve(approval)),
    client.onNotification(Notifications.systemPromptChanged, () => {
      void vscode.commands.executeCommand("pi.internal.systemPromptChanged");
    }),
  );
  // The stored key goes to every server this window connects to (a restarted or new shared one too).
  context.subscriptions.push(
    client.onDidChangeState((change) => {
      if (change.newState === State.Running) void apiKeys.handOver().then(() => chat.redraw(), (error: unknown) => output.appendLine(`could not hand over the API key: ${String(error)}`));
    }),
  );
  // A prompt sent before the last session is open again waits for it (PiSession starts pending).
  try {
    await client.start();
  } catch (error) {
    session.reopened();
    throw error;
  }
  // Settings that changed while the server was being chosen move it before anything is opened
  // there; later changes move it with the session.
  const [started, current] = [client, route];
  const followSettings = (hooks: SwitchHooks): Promise<void> =>
    current.followSettings(started, () => resolveRoute(context, output), hooks).catch(reportError);
  const note = (line: string): void => output.appendLine(line);
  await followSettings({ log: note, stopping: () => undefined, started: () => Promise.resolve() });
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((change) => {
      if (change.affectsConfiguration("pi.server")) {
        void followSettings({ log: note, stopping: () => session.expectReopen(), started: () => session.reopen() });
      }
    }),
  );
  // A reloaded window shows the session it had open (the chat, tree and gauge redraw from it).
  session.restore().catch((error: unknown) => output.appendLine(`could not reopen the last session: ${String(error)}`));
}

/** Closes this window's connection; a shared server and its runs go on (a reloaded window reattaches). */
export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
  route = undefined;
}
