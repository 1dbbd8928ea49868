import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { materializeFixture } from "../datasets/checkout.js";
import type { Instance } from "../datasets/dataset.js";
import { closeDockerClient, connectDocker, type DockerEndpoint } from "../environments/docker/client.js";
import { pathInside } from "../util/safe-path.js";
import { baseRootfs, importImage, sha } from "./rootfs.js";

/**
 * Bump when the way fixture images are made changes, so old images are rebuilt (2: the root filesystem
 * holds perl, for the Docker session's Perl loop; 3: only the modules that loop loads).
 */
const RECIPE = "swerun-fixture-image-3";
const CONTENT_LABEL = "swerun.content";
const building = new Map<string, Promise<void>>();

function fixtureHash(dir: string): string {
  const parts: string[] = [RECIPE];
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else parts.push(relative(dir, path), readFileSync(path, "latin1"));
    }
  };
  walk(dir);
  return sha(...parts);
}

/**
 * Makes the image of a bundled instance (one with a `fixture` folder) when it is missing or out of date:
 * this machine's bash, coreutils and git, plus the fixture committed as a git repository at /testbed.
 * Built offline in about a second, so the demo runs in Docker without a registry. `endpoint`: the daemon to
 * build it on (default: DOCKER_HOST's); each daemon of a host pool gets its own.
 */
export function ensureFixtureImage(
  image: string,
  instance: Instance,
  datasetDir: string,
  endpoint?: DockerEndpoint,
): Promise<void> {
  const key = `${endpoint?.host ?? ""} ${image}`;
  let pending = building.get(key);
  if (!pending) {
    pending = build(image, instance, datasetDir, endpoint);
    building.set(key, pending);
    pending.catch(() => building.delete(key));
  }
  return pending;
}

async function build(
  image: string,
  instance: Instance,
  datasetDir: string,
  endpoint: DockerEndpoint | undefined,
): Promise<void> {
  const hash = fixtureHash(resolve(pathInside(datasetDir, String(instance.fixture))));
  const docker = await connectDocker(endpoint);
  try {
    const existing = await docker
      .getImage(image)
      .inspect()
      .catch(() => undefined);
    if (existing?.Config?.Labels?.[CONTENT_LABEL] === hash) return;
    const colon = image.lastIndexOf(":");
    const [repo, tag] =
      colon > image.lastIndexOf("/") ? [image.slice(0, colon), image.slice(colon + 1)] : [image, "latest"];
    const checkout = materializeFixture(instance, datasetDir);
    try {
      const rootfs = baseRootfs();
      rootfs.addTree(checkout.dir, "testbed");
      await importImage(docker, rootfs.tar(), repo, tag, [`LABEL ${CONTENT_LABEL}=${hash}`]);
    } finally {
      checkout.remove();
    }
  } finally {
    closeDockerClient(docker);
  }
}
