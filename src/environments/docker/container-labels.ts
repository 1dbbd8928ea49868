// How swerun names and labels its containers (`swerun cleanup` and the batch's hosts find them by their labels).
import { randomBytes } from "node:crypto";
import type { EnvironmentContext } from "../environment.js";

/** Every container swerun creates is named `swerun-...`. */
export const CONTAINER_PREFIX = "swerun-";

/** Labels on swerun's containers; `swerun cleanup` finds leftovers by them. */
export const CONTAINER_LABELS = {
  runId: "swerun.run_id",
  instanceId: "swerun.instance_id",
  /** The process and machine that created the container, to tell a crashed run from a live one. */
  pid: "swerun.pid",
  host: "swerun.host",
  keep: "swerun.keep",
} as const;

/** A new container's name: `swerun-`, the instance (or run) id made a name, and a random suffix. */
export function containerName(context: EnvironmentContext): string {
  const slug = (context.instanceId || context.runId || "run")
    .replace(/[^a-zA-Z0-9_.-]+/g, "-")
    .replace(/^[^a-zA-Z0-9]+/, "")
    .slice(0, 48);
  return `${CONTAINER_PREFIX}${slug ? `${slug}-` : ""}${randomBytes(4).toString("hex")}`;
}
