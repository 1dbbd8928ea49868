import type { Readable } from "node:stream";
import type Docker from "dockerode";
import { CONTAINER_LABELS } from "../environments/docker/environment.js";

/** The image ids containers on a daemon use (running or not): all of them, and those of one swerun run. */
export interface ImageUsers {
  all: Set<string>;
  /** Used by the run's own containers (its agents' and its grading containers). */
  run: Set<string>;
}

/** Which images the containers on `docker` use; nothing known (empty sets) when the daemon does not answer. */
export async function imageUsers(docker: Docker, runId: string): Promise<ImageUsers> {
  const users: ImageUsers = { all: new Set(), run: new Set() };
  const containers = await docker.listContainers({ all: true }).catch(() => []);
  for (const container of containers) {
    users.all.add(container.ImageID);
    if (container.Labels?.[CONTAINER_LABELS.runId] === runId) users.run.add(container.ImageID);
  }
  return users;
}

/**
 * Calls `onEnd` whenever a container on `docker` is removed (the daemon's event stream), so an image it used
 * can go; returns the function that stops listening. A daemon whose events cannot be read is not watched
 * (the pool then looks again as instances end).
 */
export function watchContainerEnds(docker: Docker, onEnd: () => void): () => void {
  let stream: Readable | undefined;
  let stopped = false;
  docker
    .getEvents({ filters: { type: ["container"], event: ["destroy"] } })
    .then((events) => {
      stream = events as Readable;
      if (stopped) return stream.destroy();
      stream.on("data", () => onEnd());
      stream.on("error", () => {});
    })
    .catch(() => {});
  return () => {
    stopped = true;
    stream?.destroy();
  };
}
