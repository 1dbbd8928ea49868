import { execFileSync } from "node:child_process";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { runCli, startCli } from "../helpers/cli.js";
import { describeDocker, dockerFixture, writeDockerRunConfig } from "../helpers/docker.js";
import { tempDir } from "../helpers/tmp.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
const readJson = (path: string): any => JSON.parse(readFileSync(path, "utf8"));
const SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff";
const FIX = "sed -i 's/sub) echo $(( $2 + $3 ))/sub) echo $(( $2 - $3 ))/' calc.sh && ./test.sh";

/** A scripted run in the SWE-bench-shaped test image: text actions, or tool calls (two calls in one step). */
function dockerRunConfig(dir: string, image: string, style: "text" | "toolcall"): string {
  const steps = [["./test.sh", "echo $GREETING from $(pwd)"], [FIX], [SUBMIT]];
  const outputs = steps.map((commands, index) =>
    style === "text"
      ? {
          role: "assistant",
          content: `step ${index}`,
          extra: { actions: [{ command: commands.join(" && ") }], cost: 0.1 },
        }
      : {
          role: "assistant",
          content: "",
          tool_calls: commands.map((command, i) => ({
            id: `call_${index}_${i}`,
            type: "function",
            function: { name: "bash", arguments: JSON.stringify({ command }) },
          })),
          extra: {
            actions: commands.map((command, i) => ({ command, tool_call_id: `call_${index}_${i}` })),
            cost: 0.1,
          },
        },
  );
  return writeDockerRunConfig(join(dir, `${style}.json`), image, outputs, { env: { GREETING: "hello" } });
}

await describeDocker("swerun replay in Docker (CLI, end to end)", () => {
  let docker: Docker;
  let images: { base: string; swebench: string };
  const containersOf = (pid: number | undefined) =>
    docker.listContainers({ all: true, filters: { label: [`swerun.pid=${pid}`] } });

  beforeAll(async () => {
    ({ docker, images } = await dockerFixture());
  });

  async function recordRun(style: "text" | "toolcall") {
    const dir = tempDir();
    const recorded = join(dir, `${style}.traj.json`);
    const run = await runCli([
      "run",
      "-c",
      dockerRunConfig(dir, images.swebench, style),
      "--yolo",
      "-o",
      recorded,
    ]);
    expect(run.code).toBe(0);
    expect(readJson(recorded).info.exit_status).toBe("Submitted");
    return { dir, recorded };
  }

  for (const style of ["text", "toolcall"] as const) {
    it(`replays its own ${style} trajectory in the recorded image: every step exact, the same submission`, async () => {
      const { dir, recorded } = await recordRun(style);
      const out = join(dir, "replay.traj.json");
      const replay = startCli(["replay", recorded, "-o", out, "--report", join(dir, "report.json")], {
        cwd: dir,
      });
      const result = await replay.done;
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`in docker \\(${images.swebench}, cwd /testbed\\)`));
      expect(result.stdout).toMatch(/replayed 3 of 3 recorded steps: 3 exact, 0 normalised, 0 different\n/);
      expect(result.stdout).toMatch(/submission: same\n/);
      expect(readJson(join(dir, "report.json"))).toMatchObject({
        divergent_steps: [],
        submission: { status: "same" },
      });
      expect(readJson(out).info).toMatchObject({ exit_status: "Submitted", model_stats: { api_calls: 3 } });
      expect(readJson(out).info.model_stats.instance_cost).toBeCloseTo(0.3, 10);
      expect(await containersOf(replay.child.pid)).toEqual([]);
    });
  }

  it("reports exactly the step an altered environment changes", async () => {
    const { dir, recorded } = await recordRun("toolcall");
    const reportPath = join(dir, "report.json");
    const args = [
      "replay",
      recorded,
      "-c",
      "environment.env.GREETING=bye",
      "-o",
      join(dir, "r.traj.json"),
      "--report",
      reportPath,
    ];
    const result = await runCli(args, { cwd: dir });
    expect(result.code).toBe(0);
    const report = readJson(reportPath);
    expect(report.divergent_steps).toEqual([1]);
    expect(report.steps[0].actions.map((a: { status: string }) => a.status)).toEqual(["exact", "DIFFERENT"]);
    expect(report.steps[0].actions[1].replayed.output).toBe("bye from /testbed\n");
    expect(result.stdout).toMatch(
      /^ {4} {2}DIFFERENT {3}0 {8}echo \$GREETING from \$\(pwd\)\n {6}│ @@ -1,1 \+1,1 @@\n {6}│ -hello from \/testbed\n {6}│ \+bye from \/testbed$/m,
    );
  });

  it("--until without --continue keeps the container and says how to enter it", async () => {
    const { dir, recorded } = await recordRun("text");
    const replay = startCli(["replay", recorded, "--until", "1", "-o", join(dir, "r.traj.json")], {
      cwd: dir,
    });
    const result = await replay.done;
    expect(result.code).toBe(0);
    const [kept] = await containersOf(replay.child.pid);
    try {
      expect(kept?.State).toBe("running");
      const name = kept?.Names[0]?.slice(1) ?? "";
      expect(result.stderr).toContain(`Enter it with: docker exec -it ${name} bash`);
      const container = docker.getContainer(kept?.Id ?? "");
      const exec = await container.exec({
        Cmd: ["cat", "/testbed/calc.sh"],
        AttachStdout: true,
        WorkingDir: "/testbed",
      });
      const stream = await exec.start({});
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      await new Promise((resolve) => stream.on("end", resolve));
      expect(Buffer.concat(chunks).toString("utf8")).toContain("sub) echo $(( $2 + $3 ))");
    } finally {
      if (kept) await docker.getContainer(kept.Id).remove({ force: true });
    }
  });

  it("replays a `swerun swebench --subset demo` trajectory in Docker and locally, and finds an altered step", async () => {
    const dir = tempDir();
    const sb = join(dir, "sb");
    const run = await runCli(
      ["swebench", "--subset", "demo", "--environment-class", "docker", "-o", sb, "-q"],
      { cwd: dir },
    );
    expect(run.code).toBe(0);
    for (const id of ["swerun-demo__calc-1", "swerun-demo__greet-2", "swerun-demo__count-3"]) {
      const recorded = join(sb, id, `${id}.traj.json`);
      const inDocker = await runCli(["replay", recorded, "-o", join(dir, `${id}.docker.traj.json`)], {
        cwd: dir,
      });
      expect(inDocker.code).toBe(0);
      expect(inDocker.stdout).toMatch(/replayed 4 of 4 recorded steps: 4 exact, 0 normalised, 0 different\n/);
      expect(inDocker.stdout).toMatch(/submission: same\n/);
      const fixture = readJson(join(packageRoot(), "config", "swebench-demo", "instances.json")).find(
        (instance: { instance_id: string }) => instance.instance_id === id,
      ).fixture;
      const checkout = join(dir, `${id}-checkout`);
      cpSync(join(packageRoot(), "config", "swebench-demo", fixture), checkout, { recursive: true });
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: checkout });
      git("init", "-q");
      git("add", "-A");
      git("commit", "-qm", "base");
      const local = await runCli(
        [
          "replay",
          recorded,
          "--environment-class",
          "local",
          "--cwd",
          checkout,
          "-o",
          join(dir, `${id}.local.traj.json`),
        ],
        { cwd: dir },
      );
      expect(local.code).toBe(0);
      expect(local.stdout).toMatch(/replayed 4 of 4 recorded steps: \d exact, \d normalised, 0 different\n/);
      expect(local.stdout).toMatch(/submission: same\n/);
    }
    const recorded = join(sb, "swerun-demo__calc-1", "swerun-demo__calc-1.traj.json");
    const reportPath = join(dir, "altered.json");
    const altered = await runCli(
      [
        "replay",
        recorded,
        "-c",
        "run.env_startup_command=mkdir /testbed/extra_dir",
        "-o",
        join(dir, "altered.traj.json"),
        "--report",
        reportPath,
      ],
      { cwd: dir },
    );
    expect(altered.code).toBe(0);
    expect(readJson(reportPath)).toMatchObject({ divergent_steps: [1], submission: { status: "same" } });
    expect(altered.stdout).toMatch(/^ {6}│ \+extra_dir$/m);
  });
});
