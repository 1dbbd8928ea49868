import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import { runCli, startCli, waitFor } from "../helpers/cli.js";
import { describeDocker, dockerFixture, swerunContainers } from "../helpers/docker.js";
import { EVAL_FIXTURES, ensureEvalImage } from "../helpers/eval-images.js";
import { tempDir } from "../helpers/tmp.js";

const id = (name: string) => `swerun-test__mathx-${name}`;
const read = (path: string) => readFileSync(path, "utf8");
const RESOLVED = { resolved: true, status: "resolved" };
const readJson = (path: string) => JSON.parse(read(path));

/** Gradings that fail for swerun's or the environment's reasons: no verdict replaced, graded again next time. */
await describeDocker("swerun eval: gradings that could not be done", () => {
  let docker: Docker;
  let image: string;

  beforeAll(async () => {
    ({ docker } = await dockerFixture());
    image = await ensureEvalImage(docker);
  });

  /** A run folder with the gold and the hanging predictions, graded as `eval-<unique>`. */
  function runFolder(): { folder: string; runId: string; logs: string } {
    const dir = tempDir();
    const runId = `faults-${basename(dir)}`;
    const folder = join(dir, runId);
    mkdirSync(folder);
    const predictions = readJson(join(EVAL_FIXTURES, "preds.json"));
    const keep = [id("gold"), id("hang")];
    writeFileSync(
      join(folder, "preds.json"),
      JSON.stringify(Object.fromEntries(keep.map((key) => [key, predictions[key]]))),
    );
    const dataset = join(dir, "dataset.json");
    writeFileSync(dataset, read(join(EVAL_FIXTURES, "dataset.json")).replaceAll("{image}", image));
    writeFileSync(
      join(folder, "run.json"),
      JSON.stringify({ run_id: "r1", subset: dataset, split: "test", cases: { [id("gold")]: {} } }),
    );
    const logs = join(folder, "eval", "logs", "run_evaluation", runId, "test__model");
    return { folder, runId, logs };
  }

  it("a bad -o is refused before any grading, and a grading whose container could not start keeps the verdict", async () => {
    const { folder, logs } = runFolder();
    const first = await runCli(["eval", folder, "-i", id("gold"), "--network", "none"]);
    expect(first.code, first.stderr).toBe(0);
    const graded = read(join(folder, "run.json"));
    expect(JSON.parse(graded).eval.instances[id("gold")]).toEqual({
      ...RESOLVED,
      log_parser: "parse_log_pytest",
      language: "Python",
    });

    const bad = await runCli(["eval", folder, "-i", id("gold"), "--redo", "-o", "/etc/passwd/x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^swerun: -o \/etc\/passwd\/x: [^\n]+\n$/);
    expect(read(join(folder, "run.json"))).toBe(graded);

    // The daemon refuses the container (no such network): an error with a reason, the verdict stays.
    const refused = await runCli([
      "eval",
      folder,
      "-i",
      id("gold"),
      "--redo",
      "--network",
      "swerun-test-no-such-network",
    ]);
    expect(refused.code, refused.stderr).toBe(0);
    const after = readJson(join(folder, "run.json"));
    expect(after.eval.instances[id("gold")]).toEqual({
      ...RESOLVED,
      log_parser: "parse_log_pytest",
      language: "Python",
    });
    expect(after.cases[id("gold")].resolved).toBe(true);
    expect(existsSync(join(logs, id("gold"), "report.json"))).toBe(true);
  }, 120_000);

  it("a grading container killed from outside mid-test is an infra error without report.json, graded again next time", async () => {
    const { folder, runId, logs } = runFolder();
    const cli = startCli(["eval", folder, "-i", id("hang"), "--network", "none", "--timeout", "600"]);
    const log = join(logs, id("hang"), "run_instance.log");
    await waitFor(() => existsSync(log) && read(log).includes("Eval script"), 60_000, cli.child);
    const [container] = await swerunContainers(docker, runId);
    expect(container).toBeDefined();
    await docker.getContainer(container?.Id as string).kill();
    const guard = setTimeout(() => cli.child.kill("SIGKILL"), 60_000);
    const ended = await cli.done;
    clearTimeout(guard);
    expect(ended.code, ended.stderr).toBe(0);
    const verdict = readJson(join(folder, "run.json")).eval.instances[id("hang")];
    expect(verdict).toMatchObject({
      resolved: false,
      status: "error",
      infra_failure: "container_unavailable",
    });
    expect(verdict.error).toMatch(/^container_unavailable: ./);
    expect(existsSync(join(logs, id("hang"), "report.json"))).toBe(false);
    expect(await swerunContainers(docker, runId)).toEqual([]);

    const again = await runCli(["eval", folder, "-i", id("hang"), "--network", "none", "--timeout", "1"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/^1 instances to grade$/m);
    const final = readJson(join(folder, "run.json")).eval.instances[id("hang")];
    expect(final).toMatchObject({ status: "error", error: "Test timed out after 1 seconds." });
    expect(final.infra_failure).toBeUndefined();
  }, 180_000);

  it("a model name holding a key puts no key into the eval's file names; the path printed exists", async () => {
    const dir = tempDir();
    const key = `sk-swerun-test-${basename(dir)}-secret`;
    const preds = join(dir, "preds.json");
    const instance = "swerun-demo__calc-1";
    writeFileSync(
      preds,
      JSON.stringify({
        [instance]: { model_name_or_path: `openai/${key}`, instance_id: instance, model_patch: "" },
      }),
    );
    const out = join(dir, "out");
    const result = await runCli(["eval", preds, "--subset", "demo", "-o", out], {
      env: { OPENAI_API_KEY: key },
    });
    expect(result.code, result.stderr).toBe(0);
    const printed = /report: (.+)\n/.exec(result.stdout)?.[1] ?? "";
    expect(existsSync(printed)).toBe(true);
    const { readdirSync } = await import("node:fs");
    const names = readdirSync(out, { recursive: true }).map(String);
    expect(names.some((name) => name.includes(key))).toBe(false);
    expect(`${result.stdout}${result.stderr}`).not.toContain(key);
  });
});
