// Bundles the chat streaming benchmark (webviewBench.ts, with `vscode` replaced by vscodeStub.ts)
// and runs it: `node bench/run.mjs [--bytes=51200] [--delta-chars=20] [--interval-ms=10] [--profile]`.
// `--profile`: also a CPU profile of the webview while it streams, printed as self time by function.
// `--smoke` (make test): a 4,000-byte reply, only to check that it still runs; no results file.
// Needs `npm run build` first (out/webview.js), playwright-core and a Chromium ($CHROMIUM, else
// /usr/bin/chromium).
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const bench = path.dirname(fileURLToPath(import.meta.url));
await build({
  entryPoints: [path.join(bench, "webviewBench.ts")],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["playwright-core"],
  alias: {
    vscode: path.join(bench, "vscodeStub.ts"),
    "vscode-languageclient/node": path.join(bench, "languageClientStub.ts"),
    "vscode-languageclient": path.join(bench, "languageClientStub.ts"),
  },
  outfile: path.join(bench, "out", "webviewBench.js"),
  logLevel: "warning",
});
const result = spawnSync(process.execPath, [path.join(bench, "out", "webviewBench.js"), ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(result.status ?? 1);
