// eslint (flat config): the recommended JavaScript and type-aware typescript-eslint rules for the
// extension, its webview and the tests; bundles and compiled tests are not linted.
import { builtinModules } from "node:module";
import js from "@eslint/js";
import tseslint from "typescript-eslint";

// The chat webview runs in a browser, and so do the pure modules it imports (shared with the host).
// They may import each other and browser libraries, never the editor's API or Node: the webview's
// tsconfig (src/webview/tsconfig.json: DOM, no Node types) checks the same line from the other side.
const SHARED_MODULES = ["approvalModel", "chatModel", "chatProtocol", "messageActions", "messageVersions", "protocol", "rewindModel", "toolCards"];
const HOST_ONLY = {
  paths: ["vscode", ...builtinModules].map((name) => ({ name, message: "The webview and the modules it shares with the host run in a browser: no vscode, no Node." })),
  patterns: [
    { group: ["vscode-languageclient", "vscode-languageclient/*", "node:*"], message: "The webview and the modules it shares with the host run in a browser: no vscode, no Node." },
  ],
};
const onlyShared = (prefix) => ({
  group: [`${prefix}*`, ...SHARED_MODULES.map((name) => `!${prefix}${name}`)],
  message: `The webview may import only the shared modules (${SHARED_MODULES.join(", ")}): any other src/ module is the host's. Make what it needs pure first.`,
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
    // Method names come from src/protocol.ts (generated from pi_lsp/protocol), never string literals.
    files: ["src/**/*.ts"],
    ignores: ["src/protocol.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "Literal[value=/^pi\\//]", message: "Use Methods / Notifications from ./protocol, not a \"pi/…\" literal." },
        { selector: "TemplateElement[value.raw=/^pi\\//]", message: "Use Methods / Notifications from ./protocol, not a \"pi/…\" literal." },
      ],
    },
  },
  {
    files: ["src/webview/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { paths: HOST_ONLY.paths, patterns: [...HOST_ONLY.patterns, onlyShared("../")] }] },
  },
  {
    files: SHARED_MODULES.map((name) => `src/${name}.ts`),
    rules: { "no-restricted-imports": ["error", { paths: HOST_ONLY.paths, patterns: [...HOST_ONLY.patterns, onlyShared("./")] }] },
  },
  {
    // node:test's test() returns a promise the runner itself awaits.
    files: ["test/**/*.ts", "e2e/**/*.test.ts"],
    rules: { "@typescript-eslint/no-floating-promises": "off" },
  },
);
