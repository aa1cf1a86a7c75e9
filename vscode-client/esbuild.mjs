// Bundles the extension host (out/extension.js; vscode is provided by the editor) and, apart,
// the chat webview's script (out/webview.js, runs in the browser) and its stylesheet (out/webview.css,
// with the codicon font it imports copied beside it: the webview's CSP loads both from the extension).
import { build } from "esbuild";

await Promise.all([
  build({
    entryPoints: ["src/host/extension.ts"],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
    outfile: "out/extension.js",
    sourcemap: true,
    logLevel: "warning",
  }),
  build({
    entryPoints: ["src/webview/chat.ts"],
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2022",
    outfile: "out/webview.js",
    logLevel: "warning",
  }),
  build({
    entryPoints: ["src/webview/chat.css"],
    bundle: true,
    loader: { ".ttf": "file" },
    assetNames: "[name]",
    outfile: "out/webview.css",
    logLevel: "warning",
  }),
]);
