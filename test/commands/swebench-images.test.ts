import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { afterAll, beforeAll, expect, it } from "vitest";
import { killAt, runCli, startCli, waitFor } from "../helpers/cli.js";
import { SCRIPTED_IN_DOCKER as DOCKER, step, writeImageDataset } from "../helpers/datasets.js";
import { describeDocker, dockerFixture, REQUIRE_DOCKER } from "../helpers/docker.js";
import {
  type LocalRegistry,
  type PushedImage,
  pushRandomImages,
  registryProblem,
  startRegistry,
} from "../helpers/local-registry.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** A dataset whose instance i runs in `images[i]`: a scripted agent that runs `before`, then submits "fix-i". */
function writeImagesDataset(dir: string, images: PushedImage[], before = "true"): string {
  return writeImageDataset(dir, images, { prefix: "images", before, repo: "test/images" });
}

/**
 * A dataset whose instance i (`<prefix>__case-<i>`) runs in `images[i]`: its agent writes fix.txt and submits the
 * diff; its grading runs `wait` (a shell line), then passes where fix.txt is there.
 */
function writeGradedDataset(dir: string, images: PushedImage[], prefix: string, wait = "") {
  const instances = images.map((pushed, i) => ({
    instance_id: `${prefix}__case-${i + 1}`,
    problem_statement: "add a file",
    repo: "test/images",
    image_name: pushed.image,
    eval_script: `#!/bin/bash\nexec 2>&1\ncd /testbed\n: '>>>>> Start Test Output'\n${wait}test -f fix.txt && echo 'PASSED t.py::test_fix'\n: '>>>>> End Test Output'\n`,
    log_parser: "parse_log_pytest",
    FAIL_TO_PASS: '["t.py::test_fix"]',
    PASS_TO_PASS: "[]",
    swerun_scripted_outputs: [
      step(`cd /testbed && git init -q . && echo fix-${i + 1} > fix.txt && git add -A`),
      step("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cd /testbed && git diff --cached"),
    ],
  }));
  const dataset = join(dir, "dataset.json");
  writeFileSync(dataset, JSON.stringify(instances));
  return { dataset, instances };
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
      const dataset = writeImagesDataset(dir, images);
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

  it.skipIf(problem !== undefined && !REQUIRE_DOCKER)(
    "swebench --eval: an image a grading uses counts in the budget until the grading ends, then goes; the budget holds throughout and after",
    async () => {
      for (const { tag } of await ours()) await docker.getImage(tag).remove({ force: true });
      const dir = tempDir();
      // Each agent writes a new file and submits its diff; each grading takes 2 s in a container of the image.
      const { dataset } = writeGradedDataset(dir, images.slice(0, 4), "graded", "sleep 2\n");
      const imageBytes = images[0]?.bytes ?? 0;
      // Room for the two running instances' images and half of a third: a grading's image must go first.
      const budget = 2 * imageBytes + Math.floor(imageBytes / 2);
      const out = join(dir, "out");
      const stop = sampleDisk(new Set());
      const result = await runCli(
        [
          "swebench",
          "--subset",
          dataset,
          "--eval",
          ...DOCKER,
          "-w",
          "2",
          "--image-budget",
          String(budget),
          "-o",
          out,
        ],
        { env: { SWERUN_STATE_DIR: join(dir, "state") } },
      );
      const peak = await stop();
      expect(result.code).toBe(0);
      expect(result.stderr).not.toContain("pulling over it");
      expect(result.stdout).toContain("resolved: 4/4");
      const run = readJson(join(out, "run.json"));
      expect(run.images.pulled).toHaveLength(4);
      expect(peak).toBeGreaterThan(imageBytes);
      expect(peak).toBeLessThanOrEqual(budget);
      // The last gradings ended after the last instance: their images went then, and run.json says so.
      expect(run.images.removed.length).toBeGreaterThanOrEqual(2);
      expect((await ours()).reduce((sum, { size }) => sum + size, 0)).toBeLessThanOrEqual(budget);
    },
    240_000,
  );

  it.skipIf(problem !== undefined && !REQUIRE_DOCKER)(
    "a resumed swebench --eval grades the earlier submissions at its end with their images pulled through the budget: in run.json's images and the ledger, the budget held",
    async () => {
      for (const { tag } of await ours()) await docker.getImage(tag).remove({ force: true });
      const dir = tempDir();
      const env = { SWERUN_STATE_DIR: join(dir, "state") };
      const { dataset, instances } = writeGradedDataset(dir, images.slice(0, 3), "earlier");
      const imageBytes = images[0]?.bytes ?? 0;
      // Room for one image and a half: the batch without --eval removes all but the last image it used.
      const budget = imageBytes + Math.floor(imageBytes / 2);
      const out = join(dir, "out");
      const args = ["swebench", "--subset", dataset, ...DOCKER, "-w", "1", "--image-budget", String(budget)];
      const first = await runCli([...args, "-o", out], { env });
      expect(first.code).toBe(0);
      expect((await ours()).length).toBe(1);
      const stop = sampleDisk(new Set());
      const resumed = await runCli([...args, "--eval", "-o", out], { env });
      const peak = await stop();
      expect(resumed.stderr).not.toContain("pulling over it");
      expect(resumed.stderr).toMatch(/earlier__case-1: resolved/);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain("resolved: 3/3");
      const run = readJson(join(out, "run.json"));
      // Three pulls by the first batch, three by the gradings of the resumed one (one at a time: each removes the last).
      const pulled = run.images.pulled.map((entry: { image: string }) => entry.image);
      expect(pulled).toHaveLength(6);
      expect(pulled.slice(3).sort()).toEqual(instances.map((instance) => instance.image_name).sort());
      expect(peak).toBeLessThanOrEqual(budget);
      expect(run.images.peak_bytes).toBeLessThanOrEqual(budget);
      const left = (await ours()).map(({ tag }) => tag);
      expect(left).toHaveLength(1);
      const ledger = readJson(join(dir, "state", "images", `${run.run_id}.json`));
      expect(ledger.images.map((entry: { image: string }) => entry.image)).toEqual(left);
    },
    240_000,
  );

  /** Removes this test run's images from the daemon, then pulls `image` (there before the next batch). */
  async function startWith(image: string) {
    for (const { tag } of await ours()) await docker.getImage(tag).remove({ force: true });
    await pullImage(docker, image);
    return new Set([image]);
  }

  it.skipIf(problem !== undefined && !REQUIRE_DOCKER)(
    "SIGKILL mid-batch, then resume: nothing lost, the budget held throughout, kept and earlier images stay, what the killed run held is used again",
    async () => {
      const [first, second] = images;
      if (!first || !second) throw new Error("no images");
      const before = await startWith(first.image);
      const dir = tempDir();
      const env = { SWERUN_STATE_DIR: join(dir, "state") };
      const dataset = writeImagesDataset(dir, images, "sleep 1");
      const out = join(dir, "out");
      const budget = 3 * (images[1]?.bytes ?? 0);
      const args = ["swebench", "--subset", dataset, ...DOCKER, "-w", "1", "--image-budget", String(budget)];
      const keep = ["--keep-image", second.image];
      const stop = sampleDisk(before);
      const killed = startCli([...args, ...keep, "-o", out], { env });
      const finished = () =>
        existsSync(join(out, "preds.json")) ? Object.keys(readJson(join(out, "preds.json"))).length : 0;
      await waitFor(() => finished() >= 3, 60_000, killed.child);
      killed.child.kill("SIGKILL");
      await killed.done;
      const atKill = readJson(join(out, "run.json"));
      const ledger = readJson(join(dir, "state", "images", `${atKill.run_id}.json`));
      // Every image the killed run left is in its ledger (which may also list one it was removing when killed).
      const listed = ledger.images.map((entry: { image: string }) => entry.image);
      const held = (await ours()).map(({ tag }) => tag).filter((tag) => tag !== first.image);
      expect(held.length).toBeGreaterThan(0);
      for (const image of held) expect(listed).toContain(image);

      const resumed = await runCli([...args, ...keep, "-o", out], { env });
      const peak = await stop();
      // A kill during a write leaves its temp file, which the resume removes and names: nothing else is said.
      expect(resumed.stderr.replace(/^Removed \d+ temp file\(s\) of interrupted writes: .*\n/m, "")).toBe("");
      expect(resumed.code).toBe(0);
      expect(
        Object.fromEntries(
          Object.entries(readJson(join(out, "preds.json"))).map(([id, pred]) => [
            id,
            (pred as { model_patch: string }).model_patch.trim(),
          ]),
        ),
      ).toEqual(Object.fromEntries(images.map((_, i) => [`images__case-${i + 1}`, `fix-${i + 1}`])));
      expect(peak).toBeLessThanOrEqual(budget);
      const run = readJson(join(out, "run.json"));
      expect(run.run_id).toBe(atKill.run_id);
      const pulls = (image: string) =>
        run.images.pulled.filter((entry: { image: string }) => entry.image === image).length;
      // What the killed run held is used again, not pulled again; what it removed and still needed is pulled again.
      for (const image of held) expect(pulls(image)).toBe(1);
      const removedBeforeKill = atKill.images.removed.map((entry: { image: string }) => entry.image);
      const unfinished = images.filter((_, i) => !(`images__case-${i + 1}` in (atKill.cases ?? {})));
      for (const { image } of unfinished) if (removedBeforeKill.includes(image)) expect(pulls(image)).toBe(2);
      const left = (await ours()).map(({ tag }) => tag);
      expect(left).toContain(first.image);
      expect(left).toContain(second.image);
      expect(readdirSync(out).filter((name) => name.endsWith(".partial"))).toEqual([]);
    },
    240_000,
  );

  it.skipIf(problem !== undefined && !REQUIRE_DOCKER)(
    "SIGKILL just after a budgeted pull, before its id is recorded: the ledger lists it, cleanup --images lists it, the resume takes it back and removes it",
    async () => {
      for (const { tag } of await ours()) await docker.getImage(tag).remove({ force: true });
      const dir = tempDir();
      const env = { SWERUN_STATE_DIR: join(dir, "state") };
      const three = images.slice(0, 3);
      const [first, , last] = three;
      if (!first || !last) throw new Error("no images");
      const dataset = writeImagesDataset(dir, three);
      const out = join(dir, "out");
      // Room for one image and a half: a batch ends holding only the last image it used.
      const budget = first.bytes + Math.floor(first.bytes / 2);
      const args = [
        "swebench",
        "--subset",
        dataset,
        ...DOCKER,
        "-w",
        "1",
        "--image-budget",
        String(budget),
        "-o",
        out,
      ];
      // With a budget nothing is pulled ahead before the first pull ends: the first instance's image is pulled first.
      await killAt("image-pulled", args, { env });
      expect((await ours()).map(({ tag }) => tag)).toEqual([first.image]);
      const runId = readJson(join(out, "run.json")).run_id;
      const ledger = readJson(join(dir, "state", "images", `${runId}.json`));
      expect(ledger.images).toEqual([
        { image: first.image, host: expect.any(String), id: "", pulling: expect.stringMatching(/^\d{4}-/) },
      ]);
      const listed = await runCli(["cleanup", "--images", "--run-id", runId, "--dry-run"], { env });
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain(`would remove ${first.image} (run ${runId}, `);

      const resumed = await runCli(args, { env });
      expect(resumed.stderr).toBe("");
      expect(resumed.code).toBe(0);
      const run = readJson(join(out, "run.json"));
      const images_ = (key: string) => run.images[key].map((entry: { image: string }) => entry.image);
      // Taken back (not pulled again), then removed like the batch's other images.
      expect(images_("pulled")).not.toContain(first.image);
      expect(images_("removed")).toContain(first.image);
      expect((await ours()).map(({ tag }) => tag)).toEqual([last.image]);
      const after = readJson(join(dir, "state", "images", `${runId}.json`));
      expect(
        after.images.map((entry: { image: string; id: string }) => [entry.image, entry.id !== ""]),
      ).toEqual([[last.image, true]]);
    },
    240_000,
  );

  it.skipIf(problem !== undefined && !REQUIRE_DOCKER)(
    "preflight: a budget below the largest image or above the free space, and bad flags, are one line and exit 2 before any instance",
    async () => {
      const dir = tempDir();
      const dataset = writeImagesDataset(dir, images.slice(0, 2));
      const out = join(dir, "out");
      const base = ["swebench", "--subset", dataset, ...DOCKER, "-o", out];
      const env = { SWERUN_STATE_DIR: join(dir, "state") };
      for (const { tag } of await ours()) await docker.getImage(tag).remove({ force: true });
      const small = await runCli([...base, "--image-budget", "1M"], { env });
      expect(small.code).toBe(2);
      expect(small.stderr).toMatch(
        new RegExp(
          `^swerun: --image-budget 1M is smaller than the batch's largest image, ${registry?.address}/${repo}-[12]:latest \\(\\d+\\.\\d MB in its registry\\)\n$`,
        ),
      );
      const large = await runCli([...base, "-c", "environment.image_budget=100T"], { env });
      expect(large.code).toBe(2);
      expect(large.stderr).toMatch(
        /^swerun: environment\.image_budget 100T is more than the free space of Docker's data root on \S+ \(\S+: [\d.]+ [GMk]?B free\); lower the budget or free some disk\n$/,
      );
      expect(existsSync(join(out, "preds.json"))).toBe(false);
      expect(existsSync(out) ? readdirSync(out).filter((name) => name.startsWith("images__")) : []).toEqual(
        [],
      );
      const bad = await runCli([...base, "--image-budget", "lots"], { env });
      expect(bad.stderr).toBe(
        "swerun: --image-budget lots: expected a size such as 120G, 1.5T, 500Gi or a number of bytes\n",
      );
      expect(bad.code).toBe(2);
      const workers = await runCli([...base, "--pull-workers", "-1"], { env });
      expect(workers.stderr).toBe("swerun: --pull-workers: expected a whole number ≥ 0, got -1\n");
      expect(workers.code).toBe(2);
    },
    120_000,
  );
});
