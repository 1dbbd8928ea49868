import { readFileSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import { patchProblem } from "../../src/datasets/predictions.js";
import { runCli } from "../helpers/cli.js";
import { describeDocker, dockerFixture, swerunContainers } from "../helpers/docker.js";
import { tempDir } from "../helpers/tmp.js";

await describeDocker("swerun swebench in Docker", () => {
  let docker: Docker;

  beforeAll(async () => {
    ({ docker } = await dockerFixture());
  });

  it("runs the bundled demo with 2 workers in containers built offline, and removes them", async () => {
    const out = join(tempDir(), "demo");
    const result = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--environment-class",
      "docker",
      "-w",
      "2",
      "-o",
      out,
      "-c",
      'environment.run_args=["--rm","--network","none"]',
    ]);
    expect(result.code).toBe(0);
    const preds = JSON.parse(readFileSync(join(out, "preds.json"), "utf8"));
    expect(Object.keys(preds).sort()).toEqual([
      "swerun-demo__calc-1",
      "swerun-demo__count-3",
      "swerun-demo__greet-2",
    ]);
    for (const entry of Object.values(preds) as Array<{ model_patch: string }>) {
      expect(entry.model_patch).toMatch(/^diff --git a\//);
      expect(patchProblem(entry.model_patch)).toBeUndefined();
    }
    const run = JSON.parse(readFileSync(join(out, "run.json"), "utf8"));
    expect(run.config.environment.environment_class).toBe("docker");
    const trajectory = JSON.parse(
      readFileSync(join(out, "swerun-demo__calc-1", "swerun-demo__calc-1.traj.json"), "utf8"),
    );
    expect(trajectory.info.config.environment.image).toBe("swerun-demo/calc:latest");
    expect(trajectory.info.config.environment_type).toBe(
      "minisweagent.environments.docker.DockerEnvironment",
    );
    expect(await swerunContainers(docker, run.run_id)).toEqual([]);
  });
});
