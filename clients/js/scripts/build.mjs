// Builds dist/esm (ES modules) and dist/cjs (CommonJS), each with .d.ts.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
rmSync(path.join(root, "dist"), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", path.join(root, "tsconfig.json")], { stdio: "inherit" });
execFileSync(process.execPath, [tsc, "-p", path.join(root, "tsconfig.cjs.json")], { stdio: "inherit" });
// The package is "type": "module"; this marks the CommonJS half as such.
writeFileSync(path.join(root, "dist", "cjs", "package.json"), '{ "type": "commonjs" }\n');
