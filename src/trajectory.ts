import { readFileSync } from "node:fs";
import type { Message } from "./messages.js";
import { writeFileAtomic, writeFileAtomicAsync } from "./util/atomic-write.js";
import { swerunVersion } from "./util/package-root.js";
import { redact } from "./util/secrets.js";

export const TRAJECTORY_FORMAT = "mini-swe-agent-1.1";

/** `info` of a `.traj.json`, with exactly mini-swe-agent's keys (plus any extras the caller adds). */
export interface TrajectoryInfo {
  model_stats: { instance_cost: number; api_calls: number };
  config: {
    agent: Record<string, unknown>;
    agent_type: string;
    model: Record<string, unknown>;
    model_type: string;
    environment: Record<string, unknown>;
    environment_type: string;
  };
  mini_version: string;
  exit_status: string;
  submission: string;
  [key: string]: unknown;
}

/** A whole trajectory file. Top-level extras (e.g. `instance_id`) go after `trajectory_format`. */
export interface Trajectory {
  info: TrajectoryInfo;
  messages: Message[];
  trajectory_format: typeof TRAJECTORY_FORMAT;
  [key: string]: unknown;
}

/** `info.config.agent_type` of every swerun trajectory: there is one agent class. */
export const AGENT_TYPE = "swerun.agent.Agent";

/**
 * The one builder of a trajectory's `info.config`: the agent's config and what the model and the environment
 * say about themselves (their `serialize()`; a run that failed before they existed passes what their configs
 * say, see `serializeModelConfig` and `serializeEnvironmentConfig`).
 */
export function trajectoryConfig(
  agent: Record<string, unknown>,
  model: { model: Record<string, unknown>; model_type: string },
  environment: { environment: Record<string, unknown>; environment_type: string },
): TrajectoryInfo["config"] {
  return {
    agent: { ...agent },
    agent_type: AGENT_TYPE,
    model: model.model,
    model_type: model.model_type,
    environment: environment.environment,
    environment_type: environment.environment_type,
  };
}

/** The one builder of a trajectory's `info`: usage, config, version, and how the run ended (its exit message). */
export function trajectoryInfo(
  config: TrajectoryInfo["config"],
  usage: { cost: number; apiCalls: number },
  exit: Message | undefined,
  extra: Record<string, unknown> = {},
): TrajectoryInfo {
  const ended = exit?.role === "exit" ? (exit.extra ?? {}) : {};
  return {
    model_stats: { instance_cost: usage.cost, api_calls: usage.apiCalls },
    config,
    mini_version: swerunVersion(),
    exit_status: String(ended.exit_status ?? ""),
    submission: String(ended.submission ?? ""),
    ...extra,
  };
}

/**
 * Adds keys to the `info` of a trajectory file already written (after its run ended: e.g. the batch's timing of
 * the instance), atomically, in the writer's layout. Keys already there are replaced.
 */
export function addTrajectoryInfo(path: string, extra: Record<string, unknown>): void {
  const trajectory = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const info = trajectory.info;
  if (typeof info !== "object" || info === null || Array.isArray(info)) return;
  Object.assign(info, extra);
  writeFileAtomic(path, [redact(`${JSON.stringify(trajectory, null, 2)}\n`)]);
}

const indent = (json: string, pad: string) => json.replaceAll("\n", `\n${pad}`);

/**
 * Writes a trajectory after every step, atomically (temp file + rename), so the file on disk is always
 * a complete trajectory. Messages are append-only, so each is serialized (and redacted) once. The write
 * itself runs in the thread pool while the next step goes on; saves that arrive while one is being
 * written coalesce into one write of the latest state. `flush` waits until the latest state is on disk.
 * With a `fallback` path, a write that fails (disk full, folder removed) is retried there and every later
 * save goes there too: `path` is then the fallback and `failure` says what went wrong with the first path.
 */
export class TrajectoryWriter {
  #path: string;
  readonly #fallback: string | undefined;
  /** The first path and why writing it failed, once the writer has moved to its fallback. */
  failure: { path: string; error: unknown } | undefined;
  readonly #encoded: Buffer[] = [];
  /** `info.config` does not change during a run: its encoding is kept for as long as the object is the same. */
  #config: { value: unknown; json: string } | undefined;
  #next: Buffer[] | undefined;
  #writing: Promise<void> | undefined;
  #error: unknown;

  constructor(path: string, options: { fallback?: string } = {}) {
    this.#path = path;
    this.#fallback = options.fallback;
  }

  /** Where the trajectory is written (the fallback after a failed write). */
  get path(): string {
    return this.#path;
  }

  save(info: TrajectoryInfo, messages: Message[], extras: Record<string, unknown> = {}): void {
    if (messages.length < this.#encoded.length) this.#encoded.length = 0;
    for (let index = this.#encoded.length; index < messages.length; index++) {
      const json = `${index === 0 ? "" : ",\n"}    ${indent(JSON.stringify(messages[index], null, 2), "    ")}`;
      this.#encoded.push(Buffer.from(redact(json), "utf8"));
    }
    const fields = Object.entries(info).map(
      ([key, value]) => `    ${JSON.stringify(key)}: ${this.#encodeInfoField(key, value)}`,
    );
    const head = `{\n  "info": {\n${fields.join(",\n")}\n  },\n  "messages": [\n`;
    let tail = `\n  ],\n  "trajectory_format": "${TRAJECTORY_FORMAT}"`;
    for (const [key, value] of Object.entries(extras)) {
      tail += `,\n  ${JSON.stringify(key)}: ${redact(indent(JSON.stringify(value, null, 2), "  "))}`;
    }
    tail += "\n}\n";
    this.#next = [Buffer.from(head, "utf8"), ...this.#encoded, Buffer.from(tail, "utf8")];
    this.#writing ??= this.#drain();
  }

  #encodeInfoField(key: string, value: unknown): string {
    const cached = this.#config;
    if (key === "config" && cached && cached.value === value) return cached.json;
    const json = redact(indent(JSON.stringify(value, null, 2), "    "));
    if (key === "config") this.#config = { value, json };
    return json;
  }

  /** Resolves once everything saved so far is on disk; rejects if a write failed. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
    if (this.#error !== undefined) {
      const error = this.#error;
      this.#error = undefined;
      throw error;
    }
  }

  async #drain(): Promise<void> {
    try {
      while (this.#next) {
        const buffers = this.#next;
        this.#next = undefined;
        try {
          await writeFileAtomicAsync(this.#path, buffers);
        } catch (error) {
          if (this.#fallback === undefined || this.failure) throw error;
          this.failure = { path: this.#path, error };
          this.#path = this.#fallback;
          await writeFileAtomicAsync(this.#path, buffers);
        }
      }
    } catch (error) {
      this.#error = error;
    } finally {
      this.#writing = undefined;
    }
  }
}
