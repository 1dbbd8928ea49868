import type { Message } from "./messages.js";
import { writeFileAtomic } from "./util/atomic-write.js";
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

const indent = (json: string, pad: string) => json.replaceAll("\n", `\n${pad}`);

/**
 * Writes a trajectory after every step, atomically. Messages are append-only, so each one is
 * serialized (and redacted) once; a save re-encodes only `info` and the new messages.
 */
export class TrajectoryWriter {
  readonly path: string;
  readonly #encoded: Buffer[] = [];

  constructor(path: string) {
    this.path = path;
  }

  save(info: TrajectoryInfo, messages: Message[], extras: Record<string, unknown> = {}): void {
    if (messages.length < this.#encoded.length) this.#encoded.length = 0;
    for (let index = this.#encoded.length; index < messages.length; index++) {
      const json = `${index === 0 ? "" : ",\n"}    ${indent(JSON.stringify(messages[index], null, 2), "    ")}`;
      this.#encoded.push(Buffer.from(redact(json), "utf8"));
    }
    const head = `{\n  "info": ${redact(indent(JSON.stringify(info, null, 2), "  "))},\n  "messages": [\n`;
    let tail = `\n  ],\n  "trajectory_format": "${TRAJECTORY_FORMAT}"`;
    for (const [key, value] of Object.entries(extras)) {
      tail += `,\n  ${JSON.stringify(key)}: ${redact(indent(JSON.stringify(value, null, 2), "  "))}`;
    }
    tail += "\n}\n";
    writeFileAtomic(this.path, [head, ...this.#encoded, tail]);
  }
}
