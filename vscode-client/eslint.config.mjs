// eslint (flat config): the recommended JavaScript and type-aware typescript-eslint rules for the
// extension, its webview and the tests; bundles and compiled tests are not linted.
import { builtinModules } from "node:module";
import js from "@eslint/js";
import tseslint from "typescript-eslint";

// The boundary is the folders: src/host/ runs in the extension host (vscode, vscode-languageclient,
// Node), src/webview/ in a browser, src/shared/ in both. The browser side (webview/ and shared/) never
// imports the editor's API or Node; webview/ imports only shared/ and itself; shared/ only itself;
// host/ never imports webview/. The tsconfigs of shared/ and webview/ (DOM, no Node types) check the
// same line from the other side.
const BROWSER = "src/webview/ runs in a browser: no vscode, no vscode-languageclient, no Node.";
const NO_EDITOR_NO_NODE = {
  paths: ["vscode", ...builtinModules].map((name) => ({ name, message: BROWSER })),
  patterns: [{ group: ["vscode-languageclient", "vscode-languageclient/*", "node:*"], message: BROWSER }],
};
const webviewRules = (...patterns) => ({
  "no-restricted-imports": ["error", { paths: NO_EDITOR_NO_NODE.paths, patterns: [...NO_EDITOR_NO_NODE.patterns, ...patterns] }],
});

export default tseslint.config(
  { ignores: ["out/", "out-test/", "out-e2e/", "bench/out/", "e2e/.tools/", "e2e/run/", "e2e/screenshots/", "e2e/run-rewind/", "e2e/screenshots-rewind/", "node_modules/", "**/*.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: "./tsconfig.json", tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      eqeqeq: ["error", "always"],
    },
  },
  {
    // Method names come from src/shared/protocol.ts (generated from pi_lsp/protocol), never string literals.
    files: ["src/**/*.ts"],
    ignores: ["src/shared/protocol.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "Literal[value=/^pi\\//]", message: "Use Methods / Notifications from src/shared/protocol.ts, not a \"pi/…\" literal." },
        { selector: "TemplateElement[value.raw=/^pi\\//]", message: "Use Methods / Notifications from src/shared/protocol.ts, not a \"pi/…\" literal." },
      ],
    },
  },
  {
    files: ["src/webview/**/*.ts"],
    rules: webviewRules({
      regex: "^\\.\\./(?!shared/)",
      message: "src/webview/ may import only src/shared/ and itself: anything else in src/ is the host's. Make what it needs pure and move it to src/shared/ first.",
    }),
  },
  {
    files: ["src/shared/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "^(?!\\./)", message: "src/shared/ imports only src/shared/ (./…): no vscode, no Node, no package; the host and the webview both run it." }] },
      ],
    },
  },
  {
    files: ["src/host/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ regex: "^\\.\\./webview(/|$)", message: "src/host/ never imports the webview (a browser page): share through src/shared/." }] }],
    },
  },
  {
    // node:test's test() returns a promise the runner itself awaits.
    files: ["test/**/*.ts", "e2e/**/*.test.ts"],
    rules: { "@typescript-eslint/no-floating-promises": "off" },
  },
);
