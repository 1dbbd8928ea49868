import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const DEMO_LOCAL = ["--subset", "demo", "--environment-class", "local", "-q", "--slice", "0:1"];
const ESC = "\u001b";

describe("labels and names never reach paths or terminals raw", () => {
  it("a label with / and .. names a folder inside runs/, nothing outside the working folder", async () => {
    const root = tempDir();
    const cwd = join(root, "work");
    mkdirSync(cwd);
    const result = await runCli(["swebench", ...DEMO_LOCAL, "--label", "x/../../../escaped"], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(readdirSync(root)).toEqual(["work"]);
    const [folder] = readdirSync(join(cwd, "runs"));
    expect(folder).toMatch(/^\d{8}-\d{6}.*-x_\.\._\.\._\.\._escaped$/);
    const listed = await runCli(["runs", "list", "--dir", join(cwd, "runs"), "--json"]);
    expect(JSON.parse(listed.stdout)[0].label).toBe("x/../../../escaped");
  });

  it("a label with a newline or a control character is refused: one line, exit 2", async () => {
    const dir = tempDir();
    for (const label of ["two\nlines", `red${ESC}[31m`]) {
      for (const args of [
        ["swebench", ...DEMO_LOCAL],
        ["swebench-single", "--subset", "demo", "--environment-class", "local", "-i", "0", "--yolo"],
      ]) {
        const result = await runCli([...args, "--label", label, "-o", join(dir, "out")]);
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toMatch(
          /^swerun: --label "[^\n]*": a label is one line without control characters\n$/,
        );
        expect(result.stderr).not.toContain(ESC);
      }
    }
  });

  it("a label holding a secret (from the environment or the config) is refused before any folder is made", async () => {
    const root = tempDir();
    const key = "sk-label-secret-0123456789abcdef";
    const configKey = "cfg-label-secret-9876543210";
    const refusal =
      /^swerun: --label: the label holds a secret \(an API key or credential swerun redacts\); it would go into folder names: choose another label\n$/;
    for (const [label, extra] of [
      [`run-${key}`, []],
      [`x-${configKey}-y`, ["-c", `model.model_kwargs.api_key=${configKey}`]],
    ] as Array<[string, string[]]>) {
      for (const command of [
        ["swebench", ...DEMO_LOCAL],
        ["swebench-single", "--subset", "demo", "--environment-class", "local", "-i", "0", "--yolo"],
      ]) {
        const result = await runCli([...command, ...extra, "--label", label], {
          cwd: root,
          env: { OPENAI_API_KEY: key },
        });
        // A key of the config is known once the config is read (after the dataset's "Loaded" line).
        expect(result.stderr.replace(/^Loaded \d+ instances from \S+\n/, "")).toMatch(refusal);
        expect(result.code).toBe(2);
        expect(result.stdout + result.stderr).not.toContain(key.slice(3));
        expect(readdirSync(root)).toEqual([]);
      }
    }
    // The eval run id names its log folder: one holding a secret is refused the same way.
    writeFileSync(join(root, "preds.json"), "[]");
    const evalRun = await runCli(
      ["eval", join(root, "preds.json"), "--run-id", `r-${key}`, "-o", join(root, "out")],
      {
        env: { OPENAI_API_KEY: key },
      },
    );
    expect(evalRun.code).toBe(2);
    expect(evalRun.stderr).toMatch(/^swerun: --run-id: the run id \(given\) holds a secret/);
    expect(readdirSync(root)).toEqual(["preds.json"]);
  });

  it("runs list/show escape what a corrupt or hand-edited run.json holds; runs label refuses control characters", async () => {
    const root = tempDir();
    const folder = join(root, "r1");
    mkdirSync(folder);
    writeFileSync(
      join(folder, "run.json"),
      JSON.stringify({
        run_id: "r1",
        label: `bad\nrow${ESC}[2J`,
        model_name: `m${ESC}]0;title\u0007`,
        cases: {},
      }),
    );
    const list = await runCli(["runs", "list", "--dir", root]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toContain(ESC);
    expect(list.stdout).not.toContain("\u0007");
    expect(list.stdout.split("\n").filter((line) => line.startsWith("row"))).toEqual([]);
    expect(list.stdout).toContain("bad\\nrow\\x1b[2J");
    const show = await runCli(["runs", "show", "r1", "--dir", root]);
    expect(show.stdout).not.toContain(ESC);
    expect(show.stdout).toContain("Label: bad\\nrow\\x1b[2J");
    const label = await runCli(["runs", "label", "r1", `x${ESC}[31m`, "--dir", root]);
    expect(label.code).toBe(2);
    expect(label.stderr).not.toContain(ESC);
  });

  it("an error message quoting a bad value shows its control characters escaped", async () => {
    const result = await runCli(["run", "-c", `no-such-config${ESC}[2J`, "-t", "x"]);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain(ESC);
    expect(result.stderr).toContain("no-such-config\\x1b[2J");
  });
});

describe("swerun runs: a run.json that cannot be read", () => {
  it("is said (one line on stderr naming it), and the run is not passed off as an imported folder", async () => {
    const root = tempDir();
    const folder = join(root, "cut");
    mkdirSync(folder);
    writeFileSync(join(folder, "run.json"), '{"run_id": "cut", "label": "x", "cases": {');
    const list = await runCli(["runs", "list", "--dir", root]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toMatch(
      new RegExp(
        `^swerun: ${join(folder, "run.json")} could not be read \\(.+\\); the run is shown from its trajectories\\n$`,
      ),
    );
    expect(list.stdout).toContain("(run.json unreadable)");
    expect(list.stdout).not.toContain("(imported)");
    const json = await runCli(["runs", "list", "--dir", root, "--json"]);
    expect(JSON.parse(json.stdout)[0].unreadable).toMatch(/JSON/);
  });
});
