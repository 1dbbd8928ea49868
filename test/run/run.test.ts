import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Agent } from "../../src/agent/agent.js";
import { loadConfig } from "../../src/config/load.js";
import type { LocalEnvironmentConfig } from "../../src/config/schema.js";
import { LocalEnvironment } from "../../src/environments/local.js";
import { OutputPathError, StartupCommandFailed } from "../../src/errors.js";
import type { AgentEvent } from "../../src/events.js";
import { runTask } from "../../src/run/run.js";
import type { RunResult } from "../../src/run/run-options.js";
import { TemplateError } from "../../src/templates/render.js";
import { act, SUBMIT } from "../helpers/agent.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** A resolved config: the scripted model with these outputs, the local environment in `dir`. */
function scripted(dir: string, outputs: Array<Record<string, unknown>>, more: string[] = []) {
  const path = join(dir, "config.json");
  writeFileSync(path, JSON.stringify({ model: { model_class: "deterministic", outputs } }));
  return loadConfig(["default", path, `environment.cwd=${dir}`, "agent.mode=yolo", ...more]);
}

/** The real local environment, counting how often the run closes it. */
class CountedEnvironment extends LocalEnvironment {
  closed = 0;
  override async close(): Promise<void> {
    this.closed += 1;
    await super.close();
  }
}

function hooksRecorder() {
  const agents: Array<Agent | undefined> = [];
  const ends: RunResult[] = [];
  const events: AgentEvent[] = [];
  return {
    agents,
    ends,
    events,
    options: {
      subscribers: [(event: AgentEvent) => void events.push(event)],
      hooks: {
        onAgent: (agent: Agent | undefined) => void agents.push(agent),
        onEnd: (r: RunResult) => void ends.push(r),
      },
    },
  };
}

describe("runTask (the run pipeline)", () => {
  it("builds model, environment and agent, feeds the subscribers, calls the hooks, closes the environment", async () => {
    const dir = tempDir();
    const config = scripted(dir, [act("echo hello"), SUBMIT]);
    const env = new CountedEnvironment(config.environment as LocalEnvironmentConfig);
    const output = join(dir, "out", "run.traj.json");
    const recorder = hooksRecorder();
    const result = await runTask("say hello", { config, output, environment: env, ...recorder.options });
    expect(result).toMatchObject({ exit_status: "Submitted", submission: "the-patch\n", api_calls: 2 });
    expect(result.cost).toBe(1);
    expect(result.trajectory).toBe(output);
    expect(result.error).toBeUndefined();
    expect(readJson(output).info.exit_status).toBe("Submitted");
    expect(readJson(output).info.config.agent.output_path).toBe(output);
    expect(recorder.events[0]?.type).toBe("run_start");
    expect(recorder.events.at(-1)?.type).toBe("run_end");
    expect(recorder.ends).toEqual([result]);
    expect(recorder.agents).toHaveLength(2);
    expect(recorder.agents[0]?.nCalls).toBe(2);
    expect(recorder.agents[1]).toBeUndefined();
    expect(env.closed).toBe(1);
  });

  it("records an error in the loop and a failed startup command, closing the environment each time", async () => {
    const dir = tempDir();
    // The script runs out after one step: the model throws, the agent records it.
    const config = scripted(dir, [act("echo one")]);
    const env = new CountedEnvironment(config.environment as LocalEnvironmentConfig);
    const output = join(dir, "error.traj.json");
    const result = await runTask("t", { config, output, environment: env });
    expect(result.error).toBeInstanceOf(Error);
    expect(readJson(output).info.exit_status).toBe(result.exit_status);
    expect(result.exit_status).not.toBe("");
    expect(env.closed).toBe(1);

    const failing = scripted(dir, [SUBMIT], ["run.env_startup_command=exit 4"]);
    const env2 = new CountedEnvironment(failing.environment as LocalEnvironmentConfig);
    const recorder = hooksRecorder();
    const startup = join(dir, "startup.traj.json");
    const failed = await runTask("t", {
      config: failing,
      output: startup,
      environment: env2,
      ...recorder.options,
    });
    expect(failed.error).toBeInstanceOf(StartupCommandFailed);
    expect(failed.exit_status).toBe("StartupCommandFailed");
    expect(failed.trajectory).toBe(startup);
    expect(readJson(startup).info.exit_status).toBe("StartupCommandFailed");
    expect(recorder.ends).toEqual([failed]);
    expect(recorder.agents).toEqual([]);
    expect(env2.closed).toBe(1);
  });

  it("a template error is recorded in a trajectory that exists (it used not to be written)", async () => {
    const dir = tempDir();
    const config = scripted(dir, [SUBMIT], ["agent.system_template=Hello {{ no_such_variable }}"]);
    const output = join(dir, "template.traj.json");
    const result = await runTask("t", { config, output });
    expect(result.error).toBeInstanceOf(TemplateError);
    expect((result.error as Error).message).toContain("system_template");
    expect((result.error as Error).message).toContain("no_such_variable");
    expect(result.api_calls).toBe(0);
    const trajectory = readJson(output);
    expect(trajectory.info.exit_status).toBe("TemplateError");
    expect(trajectory.messages.at(-1).role).toBe("exit");
  });

  it("refuses an output path it cannot write before anything runs: under a file, under /proc (at once)", async () => {
    const dir = tempDir();
    const config = scripted(dir, [act("touch ran.txt"), SUBMIT]);
    writeFileSync(join(dir, "a-file"), "");
    for (const output of [join(dir, "a-file", "x.traj.json"), "/proc/swerun-test/x.traj.json", dir]) {
      const recorder = hooksRecorder();
      await expect(runTask("t", { config, output, ...recorder.options })).rejects.toThrow(OutputPathError);
      expect(recorder.events).toEqual([]);
    }
    expect(existsSync(join(dir, "ran.txt"))).toBe(false);
  });

  it("saves to a fallback path in the temp folder when the trajectory's folder breaks mid-run, and says so", async () => {
    const dir = tempDir();
    const outDir = join(dir, "out");
    const config = scripted(dir, [act(`rm -rf ${outDir} && touch ${outDir}`), SUBMIT]);
    const output = join(outDir, "run.traj.json");
    const result = await runTask("t", { config, output });
    expect(result.exit_status).toBe("Submitted");
    expect(result.trajectoryFailure?.path).toBe(output);
    expect(result.trajectory).not.toBe(output);
    expect(result.trajectory?.startsWith(tmpdir())).toBe(true);
    const saved = readJson(result.trajectory as string);
    expect(saved.info.exit_status).toBe("Submitted");
    expect(saved.messages).toHaveLength(result.messages.length);
    rmSync(result.trajectory as string);
  });
});
