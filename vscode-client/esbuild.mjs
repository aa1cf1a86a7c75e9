// Bundles the extension host code into out/extension.js (vscode is provided by the editor).
import { build } from "esbuild";

await build({
  entryPoints: ["src/extension.ts"],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
  outfile: "out/extension.js",
  sourcemap: true,
  logLevel: "warning",
});
