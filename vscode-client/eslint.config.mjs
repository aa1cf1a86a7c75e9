// eslint (flat config): the recommended JavaScript and type-aware typescript-eslint rules for the
// extension, its webview and the tests; bundles and compiled tests are not linted.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

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
    // node:test's test() returns a promise the runner itself awaits.
    files: ["test/**/*.ts", "e2e/**/*.test.ts"],
    rules: { "@typescript-eslint/no-floating-promises": "off" },
  },
);
