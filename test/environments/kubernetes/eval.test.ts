import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { expect, it } from "vitest";
import { demoCluster, runDemo } from "../../helpers/kubernetes-demo.js";
import { tempDir } from "../../helpers/tmp.js";
import { describeKubernetes, ON_NODE1 } from "./cluster.js";

const IDS = ["swerun-demo__calc-1", "swerun-demo__count-3", "swerun-demo__greet-2"];

/** An instance's report.json of a demo batch graded with --eval. */
function report(out: string, id: string): unknown {
  const path = join(
    out,
    "eval",
    "logs",
    "run_evaluation",
    basename(out),
    "deterministic__demo",
    id,
    "report.json",
  );
  return JSON.parse(readFileSync(path, "utf8"));
}

await describeKubernetes("swebench --eval in pods (test cluster)", () => {
  const theCluster = demoCluster();

  it("grades each instance in a fresh pod, with the same reports and verdicts as the grading in Docker", async () => {
    const dir = tempDir();
    const docker = await runDemo(join(dir, "docker"), ["--eval"]);
    expect(docker.code).toBe(0);
    const onNode1 = `environment.pod_template=${JSON.stringify(ON_NODE1)}`;
    const pods = await runDemo(join(dir, "pods"), ["--eval"], theCluster(), onNode1);
    expect(pods.code, pods.stderr).toBe(0);
    expect(pods.stdout).toContain("resolved: 3/3 (3 graded, 0 empty, 0 errors)");
    for (const id of IDS) expect(report(join(dir, "pods"), id)).toEqual(report(join(dir, "docker"), id));
    const verdicts = (name: string) =>
      JSON.parse(readFileSync(join(dir, name, "run.json"), "utf8")).eval.instances;
    expect(verdicts("pods")).toEqual(verdicts("docker"));
    const log = readFileSync(
      join(
        dir,
        "pods",
        "eval",
        "logs",
        "run_evaluation",
        "pods",
        "deterministic__demo",
        IDS[0] as string,
        "run_instance.log",
      ),
      "utf8",
    );
    expect(log).toMatch(/Container for swerun-demo__calc-1 created: swerun\/swerun-eval-swerun-demo-calc-1-/);
  });
});
