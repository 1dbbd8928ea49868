/**
 * Docker step overhead, in one run: the median time per action of
 *   - a bare `docker exec` through the CLI (how mini-swe-agent runs each command),
 *   - a bare Engine API exec: create + start + read + inspect (the floor),
 *   - a bare shell session: one exec whose shell reads the commands from stdin (the floor of swerun's default),
 *   - swerun's session alone: the Docker environment's execute, one action after another (no agent),
 *   - swerun's full step path: scripted model, Docker environment, observation template, trajectory saved,
 *     with exec_mode session (the default) and exec.
 * All three run the same command with bash -lc in containers of the same offline-built test image.
 * Each round measures the bare session just before and just after swerun's session step, so that a round's
 * ratio compares the two under the same conditions; the median of the rounds' ratios is printed beside the
 * ratio of the pooled medians.
 * Usage: node dist/bench/docker.js [steps per round, default 40] [rounds, default 3]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { Agent } from "../src/agent/agent.js";
import { dockerEnvironmentSchema } from "../src/config/docker.js";
import { loadConfig } from "../src/config/load.js";
import { closeDockerClient, connectDocker } from "../src/environments/docker/client.js";
import { DockerEnvironment } from "../src/environments/docker/environment.js";
import { EventBus } from "../src/events.js";
import { DeterministicModel } from "../src/models/deterministic.js";
import { TrajectoryWriter } from "../src/trajectory/writer.js";
import { ensureTestImages } from "../test/helpers/docker-images.js";
import { apiExec, bareSession, cliExec, median } from "./docker-floor.js";
import { scriptedOutputs } from "./scripted.js";

const COMMAND = "cat /etc/passwd; echo done";
const ARGV = ["bash", "-lc", COMMAND];
const STEPS = Number(process.argv[2] ?? 40);
const ROUNDS = Number(process.argv[3] ?? 3);

/** Per-step times of a swerun run of `steps` actions: from one model call to the next. */
async function swerunSteps(image: string, steps: number, execMode: "session" | "exec"): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-docker-"));
  const outputs = scriptedOutputs(COMMAND, steps);
  const config = loadConfig(["demo", "agent.step_limit=0"]);
  config.agent.output_path = join(dir, "bench.traj.json");
  config.agent.instance_template = "{{task}}";
  config.model.outputs = outputs;
  const environment = dockerEnvironmentSchema.parse({
    environment_class: "docker",
    image,
    run_args: ["--rm", "--network", "none"],
    exec_mode: execMode,
  });
  const env = await DockerEnvironment.create(environment, { runId: "bench" });
  const bus = new EventBus();
  const starts: number[] = [];
  bus.subscribe((event) => {
    if (event.type === "model_call_start") starts.push(performance.now());
  });
  try {
    // The trajectory saved after every step, as `swerun run` saves it (the exit's save held, then written).
    const writer = new TrajectoryWriter(config.agent.output_path as string, { holdLast: true });
    const agent = new Agent({
      model: new DeterministicModel(config.model),
      env,
      config: config.agent,
      bus,
      writer,
    });
    const result = await agent.run("bench");
    await writer.complete();
    if (result.exit_status !== "Submitted")
      throw new Error(`bench run ended with ${String(result.exit_status)}`);
    const saved = JSON.parse(readFileSync(config.agent.output_path as string, "utf8")) as {
      messages: unknown[];
    };
    if (saved.messages.length < steps * 2)
      throw new Error(`the trajectory holds ${saved.messages.length} messages`);
  } finally {
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return starts.slice(1).map((time, index) => time - (starts[index] ?? time));
}

/** Times of `steps` actions through the Docker environment alone (session mode): no model, no trajectory. */
async function environmentActions(image: string, steps: number): Promise<number[]> {
  const environment = dockerEnvironmentSchema.parse({
    environment_class: "docker",
    image,
    run_args: ["--rm", "--network", "none"],
  });
  const env = await DockerEnvironment.create(environment, { runId: "bench" });
  const times: number[] = [];
  try {
    await env.execute({ command: COMMAND });
    for (let i = 0; i < steps; i++) {
      const start = performance.now();
      await env.execute({ command: COMMAND });
      times.push(performance.now() - start);
    }
  } finally {
    await env.close();
  }
  return times;
}

/** Times of `count` actions of a bare shell session (the session floor). */
async function bareActions(container: Docker.Container, count: number): Promise<number[]> {
  const bare = await bareSession(container, ["bash", "-lc"]);
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) times.push(await bare.run(COMMAND));
  } finally {
    bare.close();
  }
  return times;
}

async function main(): Promise<void> {
  const docker = await connectDocker();
  const images = await ensureTestImages(docker, (line) => process.stderr.write(`${line}\n`));
  const container = await docker.createContainer({
    name: `swerun-bench-${process.pid}`,
    Image: images.base,
    Cmd: ["sleep", "1h"],
    Labels: { "swerun.run_id": "bench" },
    HostConfig: { AutoRemove: true, NetworkMode: "none" },
  });
  await container.start();
  const cli: number[] = [];
  const api: number[] = [];
  const shell: number[] = [];
  const step: number[] = [];
  /** Per round: the median of the bare session and of swerun's session step (for the minimum ratio). */
  const roundRatios: number[] = [];
  const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const loadBefore = loadAverage();
  const execStep: number[] = [];
  const alone: number[] = [];
  const guaranteed: number[] = [];
  let cliError = "";
  try {
    await apiExec(container, ARGV);
    await cliExec(container.id, ARGV).catch((error: Error) => {
      cliError = error.message;
    });
    for (let round = 0; round < ROUNDS; round++) {
      if (!cliError) for (let i = 0; i < STEPS; i++) cli.push(await cliExec(container.id, ARGV));
      for (let i = 0; i < STEPS; i++) api.push(await apiExec(container, ARGV));
      const guarded = await bareSession(container, ["bash", "-lc"], true);
      for (let i = 0; i < STEPS; i++) guaranteed.push(await guarded.run(COMMAND));
      guarded.close();
      alone.push(...(await environmentActions(images.base, STEPS)));
      // The bare session just before and just after swerun's step: the round's floor.
      const bareRound = await bareActions(container, STEPS / 2);
      const stepRound = await swerunSteps(images.base, STEPS, "session");
      bareRound.push(...(await bareActions(container, STEPS / 2)));
      shell.push(...bareRound);
      step.push(...stepRound);
      roundRatios.push(median(stepRound) / median(bareRound));
      execStep.push(...(await swerunSteps(images.base, STEPS, "exec")));
    }
  } finally {
    await container.remove({ force: true }).catch(() => {});
    closeDockerClient(docker);
  }
  const floor = median(api);
  const ours = median(step);
  const oursExec = median(execStep);
  const shellFloor = median(shell);
  const guaranteedFloor = median(guaranteed);
  const rows = [
    `Median time per action, ${ROUNDS} rounds of ${STEPS} actions each (\`bash -lc '${COMMAND}'\`):`,
    "",
    "| path | median ms/action | vs API floor |",
    "| :--- | ---: | ---: |",
    cliError
      ? `| docker exec via the CLI (mini-swe-agent's way) | n/a (${cliError}) | |`
      : `| docker exec via the CLI (mini-swe-agent's way) | ${median(cli).toFixed(1)} | ${(median(cli) / floor).toFixed(2)}x |`,
    `| bare Engine API exec (floor) | ${floor.toFixed(1)} | 1.00x |`,
    `| swerun step, exec_mode: exec (one exec per action) | ${oursExec.toFixed(1)} | ${(oursExec / floor).toFixed(2)}x |`,
    `| bare shell session: one exec reading commands from stdin (session floor) | ${shellFloor.toFixed(1)} | ${(shellFloor / floor).toFixed(2)}x |`,
    `| bare shell session + setsid + \`cat\` per command (an exec's guarantees, their floor) | ${guaranteedFloor.toFixed(1)} | ${(guaranteedFloor / floor).toFixed(2)}x |`,
    `| swerun's session alone: the environment's execute, no agent | ${median(alone).toFixed(1)} | ${(median(alone) / floor).toFixed(2)}x |`,
    `| swerun step, exec_mode: session (default) | ${ours.toFixed(1)} | ${(ours / floor).toFixed(2)}x |`,
    "",
    "A swerun step is the scripted model, the Docker environment, the observation template and the trajectory saved.",
    `swerun step / API floor: ${(ours / floor).toFixed(2)}x (target: at most 1.3x); exec mode: ${(oursExec / floor).toFixed(2)}x`,
    `swerun session step - bare session: ${(ours - shellFloor).toFixed(1)} ms of swerun per step (${(median(alone) - shellFloor).toFixed(1)} ms of it in the session alone)`,
    `swerun's session alone / bare session: ${(median(alone) / shellFloor).toFixed(2)}x`,
    `swerun session step / bare session: ${(ours / shellFloor).toFixed(2)}x over all rounds, ${median(roundRatios).toFixed(2)}x the median of the rounds' ratios (${roundRatios.map((ratio) => ratio.toFixed(2)).join(", ")}) (target: at most 1.3x)`,
    `swerun session step / bare session with setsid and \`cat\`: ${(ours / guaranteedFloor).toFixed(2)}x (that floor / bare session: ${(guaranteedFloor / shellFloor).toFixed(2)}x)`,
    `load average before: ${loadBefore}, after: ${loadAverage()}`,
    cliError
      ? ""
      : `CLI exec / swerun step: ${(median(cli) / ours).toFixed(2)}x (target: at least 1.5x); exec mode: ${(median(cli) / oursExec).toFixed(2)}x`,
  ];
  process.stdout.write(`${rows.join("\n")}\n`);
}

await main();
