import type { Readable } from "node:stream";
import type Docker from "dockerode";
import { CONTAINER_LABELS } from "../environments/docker/container-labels.js";

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
 * can go; returns the function that stops listening. A stream that ends (the daemon restarted, the
 * connection dropped) is opened again `retryMs` later, and `onEnd` called once then (containers may have
 * gone meanwhile). A daemon whose events cannot be read is tried again the same way (the pool also looks
 * again as instances end).
 */
export function watchContainerEnds(docker: Docker, onEnd: () => void, retryMs = 2000): () => void {
  let stream: Readable | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const again = () => {
    stream = undefined;
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      open(true);
    }, retryMs);
    timer.unref();
  };
  const open = (reopened: boolean) => {
    docker
      .getEvents({ filters: { type: ["container"], event: ["destroy"] } })
      .then((events) => {
        const opened = events as Readable;
        if (stopped) return opened.destroy();
        stream = opened;
        opened.on("data", () => onEnd());
        opened.on("error", () => {});
        opened.on("close", again);
        if (reopened) onEnd();
      })
      .catch(again);
  };
  open(false);
  return () => {
    stopped = true;
    clearTimeout(timer);
    stream?.destroy();
  };
}
