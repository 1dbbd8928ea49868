import { readFileSync, statSync } from "node:fs";
import { UserError } from "../errors.js";
import type { Message } from "../messages.js";
import { readJsonInParts } from "../util/json-parts.js";
import { isPlainObject } from "../util/plain-object.js";
import { TRAJECTORY_FORMAT } from "./format.js";
import { repairTrajectory } from "./journal.js";

/**
 * The trajectory shapes swerun replays: `mini-swe-agent-1.1` (swerun, mini-swe-agent 2.x; tool calls or
 * text actions), `mini-swe-agent-1` (mini-swe-agent 1.x, text actions) and a bare list of messages
 * (older mini-swe-agent, text actions).
 */
export type TrajectoryKind = typeof TRAJECTORY_FORMAT | "mini-swe-agent-1" | "message-list";

/** What a replay reads from a trajectory file. */
export interface LoadedTrajectory {
  path: string;
  kind: TrajectoryKind;
  /** The recorded `info` (config, model_stats, submission, ...); empty for a bare list. */
  info: Record<string, unknown>;
  messages: Message[];
  /** Top-level keys besides info, messages and trajectory_format (e.g. `instance_id`). */
  extras: Record<string, unknown>;
}

export const EXPECTED_TRAJECTORY =
  `a trajectory file: {"info", "messages", "trajectory_format": "${TRAJECTORY_FORMAT}"} (swerun, mini-swe-agent 2.x), ` +
  `"mini-swe-agent-1" (mini-swe-agent 1.x), or a bare list of messages (older mini-swe-agent)`;

const ROLES = new Set(["system", "user", "assistant", "tool", "exit"]);

function fail(path: string, problem: string): never {
  throw new UserError(`${path}: ${problem}; expected ${EXPECTED_TRAJECTORY}`);
}

/**
 * The role of a Responses API item as mini-swe-agent records it (without one): a response object is the
 * model's reply, a `function_call_output` answers a tool call; swerun's own records carry it already.
 */
function withRole(message: unknown): unknown {
  if (!isPlainObject(message) || typeof message.role === "string") return message;
  if (message.object === "response") return { ...message, role: "assistant" };
  if (message.type === "function_call_output") return { ...message, role: "tool" };
  return message;
}

/** An exit message records how the run ended as mini-swe-agent and swerun both write it: two strings. */
function isExitRecord(extra: unknown): boolean {
  return (
    isPlainObject(extra) && typeof extra.exit_status === "string" && typeof extra.submission === "string"
  );
}

/**
 * Checks what the typed readers of a message rely on: a known role, and an exit message's `exit_status` and
 * `submission`. The rest is as recorded; the replay and the facts read it field by field.
 */
function checkMessages(path: string, raw: unknown[], field: string): Message[] {
  if (raw.length === 0) throw new UserError(`${path}: the trajectory holds no messages: nothing to replay`);
  const list = raw.map(withRole);
  list.forEach((message, index) => {
    if (!isPlainObject(message) || typeof message.role !== "string" || !ROLES.has(message.role)) {
      fail(
        path,
        `${field}[${index}] is not a message (an object with role system, user, assistant, tool or exit)`,
      );
    }
    if (message.role === "exit" && !isExitRecord(message.extra)) {
      fail(
        path,
        `${field}[${index}] is an exit message without extra.exit_status and extra.submission (strings)`,
      );
    }
  });
  return list as Message[];
}

/** Reads a trajectory in any of the supported shapes; anything else is a UserError naming what was expected. */
export function loadTrajectory(path: string): LoadedTrajectory {
  const data = largeFile(path) ? readJsonInParts(path, MESSAGES) : undefined;
  return data ? checkedTrajectory(path, data) : loadWhole(path);
}

/** The key read element by element from a large trajectory (json-parts.ts). */
const MESSAGES: ReadonlySet<string> = new Set(["messages"]);

/** Past this size a trajectory is read in parts: never its whole text in memory beside what it holds. */
const LARGE_FILE = 1 << 20;

/** Whether the trajectory at `path` is large enough to be read in parts (over 1 MiB). */
export function largeFile(path: string): boolean {
  try {
    return statSync(path).size > LARGE_FILE;
  } catch {
    return false;
  }
}

function loadWhole(path: string): LoadedTrajectory {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : (error as Error).message;
    throw new UserError(`${path}: cannot read the trajectory: ${reason}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    // A run killed inside an in-place write: its undo journal gives back the file as its last save left it.
    if (!repairTrajectory(path)) fail(path, `not JSON (${(error as Error).message})`);
    data = JSON.parse(readFileSync(path, "utf8"));
  }
  if (Array.isArray(data)) {
    return {
      path,
      kind: "message-list",
      info: {},
      messages: checkMessages(path, data, "messages"),
      extras: {},
    };
  }
  if (!isPlainObject(data)) fail(path, `a JSON ${data === null ? "null" : typeof data}`);
  return checkedTrajectory(path, data);
}

/** A trajectory file's top-level object checked as one of the supported shapes. */
function checkedTrajectory(path: string, data: Record<string, unknown>): LoadedTrajectory {
  const { info, messages, trajectory_format: format, ...extras } = data;
  if (format !== TRAJECTORY_FORMAT && format !== "mini-swe-agent-1") {
    fail(
      path,
      format === undefined
        ? "no trajectory_format"
        : `trajectory_format ${JSON.stringify(format)} is not supported`,
    );
  }
  if (!Array.isArray(messages)) fail(path, `"messages" is not a list`);
  if (info !== undefined && !isPlainObject(info)) fail(path, `"info" is not an object`);
  return {
    path,
    kind: format,
    info: info ?? {},
    messages: checkMessages(path, messages, "messages"),
    extras,
  };
}

/**
 * A trajectory file's JSON as it is, unchecked and unrepaired, for readers of a few of its fields; a file that
 * cannot be read or is not JSON is a UserError naming it.
 */
export function readTrajectoryJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new UserError(`${path}: not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * The `info` a trajectory file records, read without checking its messages or repairing a torn file: for
 * readers that need only how an instance ended (its exit status, submission, cost, model). Undefined when the
 * file cannot be read or is not JSON (or is JSON null); `{}` when it records no `info` object (a bare list of
 * messages).
 */
export function readTrajectoryInfo(path: string): Record<string, unknown> | undefined {
  let data: unknown;
  try {
    data = readTrajectoryJson(path);
  } catch {
    return undefined;
  }
  if (data === null || data === undefined) return undefined;
  const info = (data as { info?: unknown }).info;
  return isPlainObject(info) ? info : {};
}
