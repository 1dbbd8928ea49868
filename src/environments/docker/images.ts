import { statfs } from "node:fs/promises";
import type Docker from "dockerode";
import type { DockerEndpoint } from "./client.js";
import { daemonMessage } from "./pull.js";

/**
 * An image reference as the daemon lists it (`RepoTags`): without a `docker.io/` or `library/` prefix,
 * with `:latest` when it names no tag or digest.
 */
export function normalizeImage(image: string): string {
  let name = image.trim();
  if (name.startsWith("docker.io/")) name = name.slice("docker.io/".length);
  if (name.startsWith("library/")) name = name.slice("library/".length);
  const last = name.slice(name.lastIndexOf("/") + 1);
  return last.includes(":") || last.includes("@") ? name : `${name}:latest`;
}

/** An image on a daemon: its id and its size on disk (bytes, its layers counted in full). */
export interface ImageOnDaemon {
  id: string;
  bytes: number;
}

/** The image's id and size, or undefined when the daemon does not have it. */
export async function inspectImage(docker: Docker, image: string): Promise<ImageOnDaemon | undefined> {
  try {
    const info = await docker.getImage(image).inspect();
    return { id: info.Id, bytes: info.Size };
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return undefined;
    throw error;
  }
}

/** Every tagged image on the daemon (normalized names), for telling what was there before a batch. */
export async function imageTags(docker: Docker): Promise<Set<string>> {
  const tags = new Set<string>();
  for (const image of await docker.listImages()) {
    for (const tag of image.RepoTags ?? []) if (tag !== "<none>:<none>") tags.add(normalizeImage(tag));
  }
  return tags;
}

/** How removing an image went: removed, left alone (in use by a container, or now another image), or gone already. */
export type RemoveOutcome = "removed" | "in use" | "changed" | "gone";

/**
 * Removes the image `image` when it is still the image `id` and no container (running or not) uses it;
 * never forced, so an image a container uses is left alone. Throws on other errors.
 */
export async function removeImage(docker: Docker, image: string, id?: string): Promise<RemoveOutcome> {
  const now = await inspectImage(docker, image);
  if (!now) return "gone";
  if (id && now.id !== id) return "changed";
  const users = await docker.listContainers({ all: true, filters: { ancestor: [now.id] } });
  if (users.length > 0) return "in use";
  try {
    await docker.getImage(image).remove({ force: false, noprune: false });
    return "removed";
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    if (status === 404) return "gone";
    if (status === 409) return "in use";
    throw new Error(`could not remove Docker image ${image}: ${daemonMessage(error)}`);
  }
}

/** Where the daemon keeps its images, and the free bytes there when this machine can see that folder. */
export interface DataRoot {
  path: string;
  free?: number;
}

/**
 * The daemon's data root (`docker info`'s DockerRootDir) and its free space, read with statfs when the
 * daemon is on this machine (a unix socket whose data root exists here); remote daemons give no free space.
 */
export async function dataRoot(docker: Docker, endpoint: DockerEndpoint): Promise<DataRoot> {
  const info = (await docker.info()) as { DockerRootDir?: string };
  const path = info.DockerRootDir ?? "/var/lib/docker";
  if (endpoint.kind !== "unix") return { path };
  try {
    const stats = await statfs(path);
    return { path, free: stats.bavail * stats.bsize };
  } catch {
    return { path };
  }
}
