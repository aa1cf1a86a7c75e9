// Builds the pi-lsp wheel the extension ships (server/pi_lsp-<version>-py3-none-any.whl), from
// the repository root, for the private environment the extension creates when no pi-lsp is
// installed (src/host/serverEnvironment.ts). Run by `npm run wheel` and before packaging the .vsix.
// Python: $PYTHON, else python3 (it needs pip; setuptools comes through pip's build isolation).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const client = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const root = path.dirname(client);
const out = path.join(client, "server");
const python = process.env.PYTHON || (process.platform === "win32" ? "python" : "python3");

fs.mkdirSync(out, { recursive: true });
for (const name of fs.readdirSync(out)) {
  if (name.endsWith(".whl")) fs.rmSync(path.join(out, name));
}
const result = spawnSync(
  python,
  ["-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "--quiet", "--wheel-dir", out, root],
  { stdio: "inherit" },
);
if (result.status !== 0) {
  console.error(`building the pi-lsp wheel with ${python} failed (${result.error?.message ?? `exit ${result.status}`})`);
  process.exit(1);
}
const wheels = fs.readdirSync(out).filter((name) => /^pi_lsp-.*\.whl$/.test(name));
if (wheels.length !== 1) {
  console.error(`expected one pi_lsp wheel in ${out}, found ${wheels.join(", ") || "none"}`);
  process.exit(1);
}
console.log(`server/${wheels[0]}`);
