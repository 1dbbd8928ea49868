import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** A config whose scripted model would leave a mark: no mark means no model call happened. */
function markingConfig(dir: string): string {
  const command = `touch ${join(dir, "model-was-called")} && echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`;
  const path = join(dir, "c.json");
  writeFileSync(
    path,
    JSON.stringify({
      model: {
        model_class: "deterministic",
        outputs: [{ role: "assistant", content: command, extra: { actions: [{ command }] } }],
      },
      environment: { cwd: dir },
    }),
  );
  return path;
}

describe("swerun run: output paths and template errors are bad input", () => {
  it("refuses -o under a file, under /proc and an existing folder before the first model call: exit 2, one line", async () => {
    const dir = tempDir();
    const config = markingConfig(dir);
    writeFileSync(join(dir, "a-file"), "");
    const cases: Array<[string, RegExp]> = [
      [join(dir, "a-file", "x.traj.json"), /a part of the path is a file, not a folder/],
      ["/proc/swerun-test/x.traj.json", /cannot (create its folder|write in)/],
      [dir, /is a directory/],
    ];
    for (const [output, why] of cases) {
      const result = await runCli(["run", "-c", "default", "-c", config, "-t", "t", "-o", output]);
      expect(result.code, output).toBe(2);
      expect(result.stdout).toBe("");
      const lines = result.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^swerun: -o ${output.replaceAll("/", "\\/")}.*`));
      expect(lines[0]).toMatch(why);
    }
    expect(existsSync(join(dir, "model-was-called"))).toBe(false);
  });

  it("a template error exits 2 with one line naming the template, line and variable; the trajectory named exists", async () => {
    const dir = tempDir();
    const out = join(dir, "t.traj.json");
    const result = await runCli([
      "run",
      "-c",
      "default",
      "-c",
      markingConfig(dir),
      "-c",
      "agent.system_template=You work on {{ undefined_thing }}.",
      "-t",
      "t",
      "-o",
      out,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "swerun: template \"system_template\" at line 1: 'undefined_thing' is undefined\n",
    );
    expect(result.stdout).toContain(`trajectory: ${out}`);
    expect(readJson(out).info.exit_status).toBe("TemplateError");
    expect(existsSync(join(dir, "model-was-called"))).toBe(false);
  });
});
