import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import { patchProblem } from "../../src/datasets/predictions.js";
import { killAt, pausedAt, runCli, startCli } from "../helpers/cli.js";
import { writeDataset } from "../helpers/datasets.js";
import { describeDocker, dockerFixture, swerunContainers, TEST_RUN_ARGS } from "../helpers/docker.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

const IDS = ["test__calc-1", "test__calc-2", "test__calc-3"];
const DEMO_IDS = ["swerun-demo__calc-1", "swerun-demo__count-3", "swerun-demo__greet-2"];

/**
 * A Docker batch killed (SIGKILL) at the moments where a crash used to lose or leak something, each
 * resumed by the next run; SWERUN_CHAOS_PAUSE (src/util/chaos.ts) stops the process exactly there.
 */
await describeDocker("swerun swebench in Docker, SIGKILLed at chosen points and resumed", () => {
  let docker: Docker;

  beforeAll(async () => {
    ({ docker } = await dockerFixture());
  });

  it("ends with each instance exactly once in preds.json, no containers and no temp files", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, IDS.length);
    const out = join(dir, "out");
    const args = [
      ...["swebench", "--subset", dataset, "--environment-class", "docker", "-w", "1", "-o", out],
      ...[
        "-c",
        "swebench",
        "-c",
        "swebench-demo",
        "-c",
        `environment.run_args=${JSON.stringify(TEST_RUN_ARGS)}`,
      ],
      ...["-c", "environment.exec_mode=exec"],
    ];
    const runIds: string[] = [];
    const runId = () => String(readJson(join(out, "run.json")).run_id);

    // 1. Between container create and start: the container stays `Created`, which --rm never removes.
    await killAt("container-created", args);
    runIds.push(runId());
    const created = await swerunContainers(docker, runIds[0]);
    expect(created.map((container) => container.State)).toEqual(["created"]);

    // 2. Mid-step, a command about to run in the (running) container.
    const midStep = await killAt("action-start", args);
    expect(midStep.stderr).toMatch(
      new RegExp(
        `Removed 1 Docker container\\(s\\) left by the earlier run ${runIds[0]}:\\n {2}removed swerun-test__calc-1-`,
      ),
    );
    // A resumed batch keeps its run id: the container left now is the mid-step one, not the created one.
    runIds.push(runId());
    const running = await swerunContainers(docker, runIds[1]);
    expect(running.map((container) => container.Id)).not.toContain(created[0]?.Id);
    expect(running).toHaveLength(1);

    // 3. After test__calc-1's trajectory is renamed into place, before preds.json is rewritten.
    await killAt("trajectory-renamed", args);
    runIds.push(runId());
    const trajectory = join(out, "test__calc-1", "test__calc-1.traj.json");
    expect(readJson(trajectory).info.exit_status).toBe("Submitted");
    const mtime = statSync(trajectory).mtimeMs;
    expect(existsSync(join(out, "preds.json")) ? readJson(join(out, "preds.json")) : {}).toEqual({});

    // 4. While restoring that entry: preds.json's temp file is written, not renamed yet.
    await killAt("atomic-rename", args);
    expect(runId()).toBe(runIds[2]);
    expect(readdirSync(out).filter((name) => name.endsWith(".tmp"))).toHaveLength(1);

    // 5. Unhindered to the end.
    const last = await runCli(args);
    expect(last.code).toBe(0);
    runIds.push(runId());
    expect(last.stderr).toMatch(
      /Removed 1 temp file\(s\) of interrupted writes: \.preds\.json\.\d+\.\d+\.tmp/,
    );
    expect(last.stderr).toContain("preds.json: restored 1 entry from finished trajectories");
    expect(last.stderr).toContain("2 instances to run, 1 already finished");

    const preds = readJson(join(out, "preds.json"));
    expect(Object.keys(preds)).toEqual(IDS);
    for (const id of IDS) {
      const info = readJson(join(out, id, `${id}.traj.json`)).info;
      expect(info.exit_status).toBe("Submitted");
      expect(preds[id].model_patch).toBe(info.submission);
      expect(patchProblem(preds[id].model_patch)).toBeUndefined();
    }
    expect(statSync(trajectory).mtimeMs).toBe(mtime);
    expect(new Set(runIds).size).toBe(1);
    for (const id of runIds) expect(await swerunContainers(docker, id)).toEqual([]);
    const leftovers = readdirSync(out, { recursive: true }).filter((name) =>
      /\.tmp$|\.partial$|\.undo$|\.swerun\.lock$/.test(String(name)),
    );
    expect(leftovers).toEqual([]);
  });
  it("with --eval --events: every submission graded once, verdicts equal report.json, no container or temp file left", async () => {
    const dir = tempDir();
    const out = join(dir, "out");
    const events = join(dir, "events.jsonl");
    const args = ["swebench", "--subset", "demo", "--eval", "--events", events, "-w", "1", "-o", out];
    const runId = () => String(readJson(join(out, "run.json")).run_id);

    // 0. The first atomic write (the eval's run.json next to the logs) written, not renamed: its temp file
    // is removed by the resume.
    await killAt("atomic-rename", args);

    // 1. A grading's tests about to run: its container (labelled with the run id) is left, no report.json.
    await killAt("grading-tests", args);
    const id = runId();
    const graders = await swerunContainers(docker, id);
    expect(graders.some((container) => container.Names.some((name) => name.includes("-eval-")))).toBe(true);

    // 2. A report.json written, its verdict not in run.json yet.
    const second = await killAt("grading-ended", args);
    expect(second.stderr).toMatch(/Removed \d+ Docker container\(s\) left by the earlier run/);

    // 3. A clean SIGTERM as a grading's tests start (the process is continued to take it): the grading is
    // stopped, recorded as interrupted (not a verdict), and its container removed.
    const term = startCli(args, { env: { SWERUN_CHAOS_PAUSE: "grading-tests" } });
    await pausedAt(term, "grading-tests");
    term.child.kill("SIGTERM");
    term.child.kill("SIGCONT");
    const termed = await term.done;
    expect(termed.signal).toBeNull();
    const interrupted = Object.values(readJson(join(out, "run.json")).eval.instances).filter(
      (verdict) => (verdict as { infra_failure?: string }).infra_failure === "interrupted",
    );
    expect(interrupted.length).toBeGreaterThan(0);
    expect(await swerunContainers(docker, id)).toEqual([]);

    // 4. Unhindered to the end: the interrupted gradings are done, the verdicts on disk merged.
    const last = await runCli(args);
    expect(last.code, last.stderr).toBe(0);
    expect(runId()).toBe(id);
    expect(last.stdout).toContain("resolved: 3/3 (3 graded, 0 empty, 0 errors)");
    const preds = readJson(join(out, "preds.json"));
    expect(Object.keys(preds).sort()).toEqual(DEMO_IDS);
    const run = readJson(join(out, "run.json"));
    expect(Object.keys(run.eval.instances).sort()).toEqual(DEMO_IDS);
    const logs = join(out, "eval", "logs", "run_evaluation", "out", "deterministic__demo");
    for (const instance of DEMO_IDS) {
      const report = readJson(join(logs, instance, "report.json"))[instance];
      // The verdict, plus what the instance's row says of its tests (parser, language) when it says it.
      expect(run.eval.instances[instance]).toMatchObject({
        resolved: report.resolved,
        status: report.resolved ? "resolved" : "unresolved",
      });
      expect(
        Object.keys(run.eval.instances[instance])
          .filter((key) => !["log_parser", "language"].includes(key))
          .sort(),
      ).toEqual(["resolved", "status"]);
      expect(run.cases[instance].resolved).toBe(report.resolved);
    }
    expect(await swerunContainers(docker, id)).toEqual([]);
    const leftovers = readdirSync(out, { recursive: true }).filter((name) =>
      /\.tmp$|\.partial$|\.undo$|\.swerun\.lock$/.test(String(name)),
    );
    expect(leftovers).toEqual([]);
    for (const line of readFileSync(events, "utf8").trimEnd().split("\n"))
      expect(() => JSON.parse(line)).not.toThrow();
  }, 240_000);
});
