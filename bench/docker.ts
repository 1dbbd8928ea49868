/**
 * Docker step overhead, in one run: the median time per action of
 *   - a bare `docker exec` through the CLI (how mini-swe-agent runs each command),
 *   - a bare Engine API exec: create + start + read + inspect (the floor),
 *   - swerun's full step path: scripted model, Docker environment, observation template, trajectory saved.
 * All three run the same command with bash -lc in containers of the same offline-built test image.
 * Usage: node dist/bench/docker.js [steps per round, default 40]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type Docker from "dockerode";
import { Agent } from "../src/agent/agent.js";
import { EventBus } from "../src/agent/events.js";
import { loadConfig } from "../src/config/load.js";
import { DockerEnvironment } from "../src/environments/docker.js";
import { closeDockerClient, connectDocker } from "../src/environments/docker-client.js";
import { dockerEnvironmentSchema } from "../src/environments/docker-config.js";
import { DeterministicModel } from "../src/models/deterministic.js";
import { ensureTestImages } from "../test/helpers/docker-images.js";

const COMMAND = "cat /etc/passwd; echo done";
const ROUNDS = 3;
const STEPS = Number(process.argv[2] ?? 40);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** `docker exec -w / <container> bash -lc <command>`, stdout and stderr read, as mini-swe-agent's subprocess.run does. */
function cliExec(container: string): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn("docker", ["exec", "-w", "/", container, "bash", "-lc", COMMAND], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve(performance.now() - start) : reject(new Error(`docker exec exited with ${code}`)),
    );
  });
}

/** The floor: one exec create, start (reading the output), and inspect for the exit code. */
async function apiExec(container: Docker.Container): Promise<number> {
  const start = performance.now();
  const exec = await container.exec({
    Cmd: ["bash", "-lc", COMMAND],
    WorkingDir: "/",
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = (await exec.start({ hijack: false, stdin: false })) as Readable;
  stream.resume();
  await new Promise((resolve, reject) => {
    stream.once("end", resolve);
    stream.once("error", reject);
  });
  const info = await exec.inspect();
  if (info.ExitCode !== 0) throw new Error(`exec exited with ${info.ExitCode}`);
  return performance.now() - start;
}

/** Per-step times of a swerun run of `steps` actions: from one model call to the next. */
async function swerunSteps(image: string, steps: number): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-docker-"));
  const outputs = Array.from({ length: steps }, () => ({
    role: "assistant",
    content: `\`\`\`mswea_bash_command\n${COMMAND}\n\`\`\``,
    extra: { actions: [{ command: COMMAND }], cost: 0 },
  }));
  outputs.push({
    role: "assistant",
    content: "done",
    extra: { actions: [{ command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" }], cost: 0 },
  });
  const config = loadConfig(["demo", "agent.step_limit=0"]);
  config.agent.output_path = join(dir, "bench.traj.json");
  config.agent.instance_template = "{{task}}";
  config.model.outputs = outputs;
  const environment = dockerEnvironmentSchema.parse({
    environment_class: "docker",
    image,
    run_args: ["--rm", "--network", "none"],
  });
  const env = await DockerEnvironment.create(environment, { runId: "bench" });
  const bus = new EventBus();
  const starts: number[] = [];
  bus.subscribe((event) => {
    if (event.type === "model_call_start") starts.push(performance.now());
  });
  try {
    const agent = new Agent({ model: new DeterministicModel(config.model), env, config: config.agent, bus });
    const result = await agent.run("bench");
    if (result.exit_status !== "Submitted")
      throw new Error(`bench run ended with ${String(result.exit_status)}`);
  } finally {
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return starts.slice(1).map((time, index) => time - (starts[index] ?? time));
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
  const step: number[] = [];
  let cliError = "";
  try {
    await apiExec(container);
    await cliExec(container.id).catch((error: Error) => {
      cliError = error.message;
    });
    for (let round = 0; round < ROUNDS; round++) {
      if (!cliError) for (let i = 0; i < STEPS; i++) cli.push(await cliExec(container.id));
      for (let i = 0; i < STEPS; i++) api.push(await apiExec(container));
      step.push(...(await swerunSteps(images.base, STEPS)));
    }
  } finally {
    await container.remove({ force: true }).catch(() => {});
    closeDockerClient(docker);
  }
  const floor = median(api);
  const ours = median(step);
  const rows = [
    `Median time per action, ${ROUNDS} rounds of ${STEPS} actions each (\`bash -lc '${COMMAND}'\`):`,
    "",
    "| path | median ms/action | vs API floor |",
    "| :--- | ---: | ---: |",
    cliError
      ? `| docker exec via the CLI (mini-swe-agent's way) | n/a (${cliError}) | |`
      : `| docker exec via the CLI (mini-swe-agent's way) | ${median(cli).toFixed(1)} | ${(median(cli) / floor).toFixed(2)}x |`,
    `| bare Engine API exec (floor) | ${floor.toFixed(1)} | 1.00x |`,
    `| swerun step (scripted model, Docker env, trajectory saved) | ${ours.toFixed(1)} | ${(ours / floor).toFixed(2)}x |`,
    "",
    `swerun step / API floor: ${(ours / floor).toFixed(2)}x (target: at most 1.3x)`,
    cliError ? "" : `CLI exec / swerun step: ${(median(cli) / ours).toFixed(2)}x (target: at least 1.5x)`,
  ];
  process.stdout.write(`${rows.join("\n")}\n`);
}

await main();
