// The package as published: `npm pack`, installed into an empty project,
// used from import and from require, and type-checked from both module kinds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const base = process.env.MATCHPOINT_BASE_URL ?? "";
const key = process.env.MATCHPOINT_API_KEY ?? "";

test("npm pack installs into an empty project and works from import and require, with types", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "matchpoint-pack-"));
  try {
    const npm = (...args) => execFileSync("npm", args, { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_ignore_scripts: "true" } });
    const tgz = execFileSync("npm", ["pack", "--pack-destination", dir, "--silent"], { cwd: root, encoding: "utf8" }).trim().split("\n").pop();
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
    npm("install", "--no-audit", "--no-fund", "--offline", path.join(dir, tgz));
    const use = `
      const mp = new Matchpoint({ baseURL: ${JSON.stringify(base || "http://127.0.0.1:9")}, apiKey: ${JSON.stringify(key || "mpk_none")}, maxRetries: 0 });
      if (typeof mp.getMe !== "function" || typeof verifyWebhook !== "function" || !(new NotFoundError("x", 404) instanceof Error)) throw new Error("exports");
      if (Default !== Matchpoint) throw new Error("default export");
      const out = ${base ? "(await mp.getMe()).object" : '"user"'};
      console.log(out);`;
    writeFileSync(path.join(dir, "esm.mjs"), `import Default, { Matchpoint, NotFoundError, verifyWebhook } from "matchpoint";\n${use}`);
    writeFileSync(path.join(dir, "cjs.cjs"), `const { default: Default, Matchpoint, NotFoundError, verifyWebhook } = require("matchpoint");\n(async () => {${use}})().catch((e) => { console.error(e); process.exit(1); });`);
    assert.equal(execFileSync(process.execPath, ["esm.mjs"], { cwd: dir, encoding: "utf8" }).trim(), "user");
    assert.equal(execFileSync(process.execPath, ["cjs.cjs"], { cwd: dir, encoding: "utf8" }).trim(), "user");
    // Types: real ones (a wrong field is an error), from both module kinds.
    const typed = (imp) => `${imp}
      export async function f(mp: Matchpoint): Promise<string> {
        const me = await mp.getMe();
        const n: string = me.username;
        // @ts-expect-error: no such field
        me.no_such_field;
        // @ts-expect-error: status is an enum
        await mp.putRsvp("evt_1", { status: "perhaps" });
        const ev = await verifyWebhook("{}", {}, "whsec_x");
        if (ev.type === "match.accepted") { const id: string = ev.data.match.id; return id; }
        for await (const m of mp.listMatchesAutoPaging({ limit: 10 })) return m.id + n;
        try { await mp.getEvent("x"); } catch (e) { if (e instanceof NotFoundError) return e.code ?? ""; }
        return new Matchpoint({ baseURL: "x", apiKey: "y" }).baseURL;
      }`;
    writeFileSync(path.join(dir, "types.mts"), typed(`import { Matchpoint, NotFoundError, verifyWebhook } from "matchpoint";`));
    writeFileSync(path.join(dir, "types.cts"), typed(`import { Matchpoint, NotFoundError, verifyWebhook } from "matchpoint";`));
    writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", strict: true, noEmit: true, lib: ["ES2022", "DOM"], types: [] }, files: ["types.mts", "types.cts"] }));
    try {
      execFileSync(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", dir], { cwd: dir, encoding: "utf8" });
    } catch (e) {
      assert.fail(`tsc: ${e.stdout}${e.stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
