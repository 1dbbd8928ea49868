import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { step } from "../helpers/datasets.js";
import { describeDocker, dockerFixture, REQUIRE_DOCKER } from "../helpers/docker.js";
import {
  type LocalRegistry,
  type PushedImage,
  pushRandomImages,
  registryProblem,
  startRegistry,
} from "../helpers/local-registry.js";
import { tempDir } from "../helpers/tmp.js";

const DOCKER = [
  "-c",
  "swebench",
  "-c",
  "swebench-demo",
  "--environment-class",
  "docker",
  "-c",
  'environment.run_args=["--rm","--network","none"]',
  "-q",
];

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** A dataset whose instance i runs in `images[i]`: a scripted agent that runs `before`, then submits "fix-i". */
function writeImageDataset(dir: string, images: PushedImage[], before = "true"): string {
  const instances = images.map((pushed, i) => ({
    instance_id: `images__case-${i + 1}`,
    problem_statement: "print a fix",
    repo: "test/images",
    image_name: pushed.image,
    swerun_scripted_outputs: [
      step(before),
      step(`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo fix-${i + 1}`),
    ],
  }));
  const path = join(dir, "dataset.json");
  writeFileSync(path, JSON.stringify(instances, null, 2));
  return path;
}

/** Pulls an image the test itself needs on the daemon (as a user would have before a batch). */
async function pullImage(docker: Docker, image: string): Promise<void> {
  const stream = await docker.pull(image);
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(stream, (error: Error | null) => (error ? reject(error) : resolve())),
  );
}

const problem = registryProblem();

await describeDocker("swebench images: pull ahead, a disk budget, cleanup (a real local registry)", () => {
  let docker: Docker;
  let registry: LocalRegistry | undefined;
  let images: PushedImage[] = [];
  const repo = `swerun-i21-${randomBytes(4).toString("hex")}`;
  /** Every image of this test run on the main daemon, with its size. */
  const ours = async () =>
    (await docker.listImages())
      .flatMap((image) => (image.RepoTags ?? []).map((tag) => ({ tag, size: image.Size })))
      .filter(({ tag }) => tag.includes(`/${repo}-`));

  beforeAll(async () => {
    if (problem) {
      if (REQUIRE_DOCKER) throw new Error(`SWERUN_REQUIRE_DOCKER=1 but ${problem}`);
      return;
    }
    ({ docker } = await dockerFixture());
    registry = await startRegistry();
    images = await pushRandomImages(docker, registry, repo, 6, 12);
  }, 120_000);

  afterAll(async () => {
    for (const { tag } of docker ? await ours() : [])
      await docker
        .getImage(tag)
        .remove({ force: true })
        .catch(() => {});
    await registry?.stop();
  });

  /** Polls the images of this test run the batch pulled (not `present`) every 25 ms; returns the largest total seen. */
  function sampleDisk(present: Set<string>) {
    let peak = 0;
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        const total = (await ours())
          .filter(({ tag }) => !present.has(tag))
          .reduce((sum, { size }) => sum + size, 0);
        peak = Math.max(peak, total);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    return async () => {
      stopped = true;
      await loop;
      return peak;
    };
  }

  it.skipIf(problem !== undefined && !REQUIRE_DOCKER)(
    "a batch over images 3x its budget ends with the same preds.json as without one, within the budget; images there before stay; cleanup --images removes what a run pulled",
    async () => {
      const dir = tempDir();
      const stateDir = join(dir, "state");
      const env = { SWERUN_STATE_DIR: stateDir };
      const dataset = writeImageDataset(dir, images);
      // The first instance's image is on the daemon before either batch: it is never removed.
      const [first] = images;
      if (!first) throw new Error("no images");
      await pullImage(docker, first.image);
      const before = new Set((await ours()).map(({ tag }) => tag));
      expect([...before]).toEqual([first.image]);

      const plain = join(dir, "plain");
      const one = await runCli(["swebench", "--subset", dataset, ...DOCKER, "-w", "2", "-o", plain], { env });
      expect(one.stderr).toBe("");
      expect(one.code).toBe(0);
      expect((await ours()).length).toBe(6);
      const plainRun = readJson(join(plain, "run.json"));
      expect(plainRun.images.budget_bytes).toBeNull();
      expect(plainRun.images.pulled.map((entry: { image: string }) => entry.image).sort()).toEqual(
        images.slice(1).map((pushed) => pushed.image),
      );
      expect(plainRun.images.removed).toEqual([]);

      // cleanup --images: the five images that run pulled, listed, and not the one there before.
      const cleanup = await runCli(["cleanup", "--images", "--run-id", plainRun.run_id], { env });
      expect(cleanup.code).toBe(0);
      const removedLines = cleanup.stdout.split("\n").filter((line) => line.startsWith("removed "));
      expect(removedLines).toHaveLength(5);
      expect(cleanup.stdout).toContain("5 removed, 0 left.");
      expect((await ours()).map(({ tag }) => tag)).toEqual([first.image]);

      const total = images.reduce((sum, pushed) => sum + pushed.bytes, 0);
      const budget = Math.floor(total / 3);
      const out = join(dir, "budget");
      const stop = sampleDisk(before);
      const two = await runCli(
        ["swebench", "--subset", dataset, ...DOCKER, "-w", "2", "--image-budget", String(budget), "-o", out],
        { env },
      );
      const peak = await stop();
      expect(two.stderr).toBe("");
      expect(two.code).toBe(0);
      expect(readJson(join(out, "preds.json"))).toEqual(readJson(join(plain, "preds.json")));
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(budget);
      const run = readJson(join(out, "run.json"));
      expect(run.images.budget_bytes).toBe(budget);
      expect(run.images.pulled).toHaveLength(5);
      expect(run.images.removed.length).toBeGreaterThanOrEqual(3);
      expect(run.images.peak_bytes).toBeLessThanOrEqual(budget);
      expect(run.images.waited.length).toBeGreaterThan(0);
      // The image that was there before is still there; what the batch left is within the budget.
      const after = await ours();
      expect(after.map(({ tag }) => tag)).toContain(first.image);
      expect(
        after.filter(({ tag }) => tag !== first.image).reduce((sum, { size }) => sum + size, 0),
      ).toBeLessThanOrEqual(budget);
    },
    240_000,
  );
});
