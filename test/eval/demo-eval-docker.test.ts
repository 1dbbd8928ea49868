import { readFileSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { describeDocker, dockerFixture, swerunContainers } from "../helpers/docker.js";
import { tempDir } from "../helpers/tmp.js";

const IDS = ["swerun-demo__calc-1", "swerun-demo__count-3", "swerun-demo__greet-2"];

await describeDocker("swebench --subset demo --eval", () => {
  let docker: Docker;

  beforeAll(async () => {
    ({ docker } = await dockerFixture());
  });

  it("grades each demo instance as it ends, records the verdicts in run.json, and swerun eval resumes", async () => {
    const out = join(tempDir(), "demo");
    const result = await runCli(["swebench", "--subset", "demo", "--eval", "-w", "2", "-o", out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("resolved: 3/3 (3 graded, 0 empty, 0 errors)");
    for (const id of IDS) expect(result.stderr).toMatch(new RegExp(`eval \\[\\d/\\d\\] ${id}: resolved`));
    const run = JSON.parse(readFileSync(join(out, "run.json"), "utf8"));
    expect(run.exit_statuses).toEqual({ Submitted: 3 });
    expect(run.eval.resolved).toBe(3);
    expect(Object.keys(run.eval.instances).sort()).toEqual(IDS);
    for (const id of IDS) expect(run.cases[id].resolved).toBe(true);
    const listed = await runCli(["runs", "list", "--dir", join(out, ".."), "--json"]);
    expect(JSON.parse(listed.stdout)[0]).toMatchObject({ cases_finished: 3, submitted: 3, resolved: 3 });
    const report = JSON.parse(readFileSync(join(out, run.eval.report), "utf8"));
    expect(report.resolved_ids).toEqual(IDS);
    const entry = JSON.parse(
      readFileSync(
        join(
          out,
          "eval",
          "logs",
          "run_evaluation",
          "demo",
          "deterministic__demo",
          IDS[0] as string,
          "report.json",
        ),
        "utf8",
      ),
    );
    expect(entry[IDS[0] as string].tests_status.PASS_TO_PASS.success).toEqual(["test.sh::test_add_zero"]);
    expect(await swerunContainers(docker, "demo")).toEqual([]);

    const again = await runCli(["eval", out]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("0 instances to grade, 3 graded before (skipped)");
    expect(again.stdout).toContain("resolved: 3/3");
  });

  it("removes the grading containers started for instances that submit nothing (never run)", async () => {
    const out = join(tempDir(), "limited");
    const result = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--eval",
      "-w",
      "2",
      "-o",
      out,
      "-c",
      "agent.step_limit=1",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("resolved: 0/3 (0 graded, 3 empty, 0 errors)");
    expect(await swerunContainers(docker, "limited")).toEqual([]);
    // An empty patch gets the verdict swerun eval gives it (resolved false, empty_patch), so runs agrees.
    const verdicts = () => {
      const run = JSON.parse(readFileSync(join(out, "run.json"), "utf8"));
      return IDS.map((id) => [run.eval.instances[id], run.cases[id].resolved, run.cases[id].verdict]);
    };
    const expected = IDS.map(() => [{ resolved: false, status: "empty_patch" }, false, "empty_patch"]);
    expect(verdicts()).toEqual(expected);
    const listed = async () =>
      JSON.parse((await runCli(["runs", "list", "--dir", join(out, ".."), "--json"])).stdout)[0];
    expect(await listed()).toMatchObject({ resolved: 0 });
    expect((await runCli(["eval", out])).code).toBe(0);
    expect(verdicts()).toEqual(expected);
    expect(await listed()).toMatchObject({ resolved: 0 });
  });
});
