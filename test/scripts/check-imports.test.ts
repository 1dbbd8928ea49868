import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { tempDir } from "../helpers/tmp.js";

const SCRIPT = join(packageRoot(), "scripts", "check-imports.mjs");
/** A fake src/ tree with these files. */
function tree(files: Record<string, string>): string {
  const src = join(tempDir(), "src");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  return src;
}

const check = (src: string) => spawnSync(process.execPath, [SCRIPT, src], { encoding: "utf8" });

describe("scripts/check-imports.mjs (part of npm run check)", () => {
  it("passes the real src/", () => {
    const result = check(join(packageRoot(), "src"));
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("refuses a folder importing a folder above it", () => {
    const src = tree({
      "models/x.ts": 'import { Agent } from "../agent/agent.js";\nimport { run } from "../run/run.js";\n',
      "agent/agent.ts": "export class Agent {}\n",
      "run/run.ts": "export const run = 1;\n",
    });
    const result = check(src);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("imports ../run/run.js (run is above models in the layering)");
    expect(result.stderr).not.toContain("../agent/agent.js");
  });

  it("refuses a cycle between files and between folders, type-only imports included for folders", () => {
    const src = tree({
      "util/a.ts": 'import { b } from "./b.js";\nexport const a = b;\n',
      "util/b.ts": 'import { a } from "./a.js";\nexport const b = a;\n',
      "agent/x.ts": 'import type { Y } from "../models/y.js";\nexport type X = Y;\n',
      "models/y.ts": 'import type { X } from "../agent/x.js";\nexport type Y = X;\n',
    });
    const result = check(src);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/import cycle: util\/(a|b)\.ts -> util\/(a|b)\.ts -> util\/(a|b)\.ts/);
    expect(result.stderr).toContain("folder cycle: agent -> models -> agent");
  });

  it("refuses a cycle through a dynamic import, and not one through type-only imports", () => {
    const src = tree({
      "commands/a.ts": 'export const a = async () => (await import("./b.js")).b;\n',
      "commands/b.ts": 'import { a } from "./a.js";\nexport const b = a;\n',
      "util/c.ts": 'import type { D } from "./d.js";\nexport type C = D;\n',
      "util/d.ts": 'import type { C } from "./c.js";\nexport type D = C;\n',
    });
    const result = check(src);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /import cycle: commands\/(a|b)\.ts -> commands\/(a|b)\.ts -> commands\/(a|b)\.ts/,
    );
    expect(result.stderr).not.toContain("util/c.ts");
  });

  it("keeps config at the bottom: a config file importing a model's file is refused", () => {
    const src = tree({
      "config/schema.ts":
        'import { modelSchema } from "../models/config.js";\nexport const s = modelSchema;\n',
      "models/config.ts": "export const modelSchema = 1;\n",
    });
    const result = check(src);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("imports ../models/config.js (models is above config in the layering)");
  });
});
