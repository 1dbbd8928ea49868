import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { SCRIPTED_IN_DOCKER, writeImageDataset } from "../helpers/datasets.js";
import { dockerFixture } from "../helpers/docker.js";
import { type ExtraDaemon, startDaemon } from "../helpers/docker-daemons.js";
import { describeExtraDaemons } from "../helpers/docker-daemons-suite.js";
import {
  type LocalRegistry,
  type PushedImage,
  pushRandomImages,
  registryProblem,
  startRegistry,
} from "../helpers/local-registry.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

await describeExtraDaemons(
  "swebench images with a host pool: the budget is per host (two real extra daemons)",
  () => {
    let registry: LocalRegistry;
    const daemons: ExtraDaemon[] = [];
    let images: PushedImage[];
    const repo = `swerun-i21-hosts-${randomBytes(4).toString("hex")}`;

    beforeAll(async () => {
      const problem = registryProblem();
      if (problem) throw new Error(problem);
      const { docker } = await dockerFixture();
      registry = await startRegistry();
      images = await pushRandomImages(docker, registry, repo, 8, 12);
      for (let i = 0; i < 2; i++) {
        const daemon = await startDaemon();
        // Each daemon pulls from 127.0.0.1 in its own network namespace: the same registry serves there too.
        await registry.serveIn(daemon.pid());
        daemons.push(daemon);
      }
    }, 240_000);

    afterAll(async () => {
      await registry?.stop();
    });

    /** This test's images on a daemon, with their sizes. */
    const ours = async (daemon: ExtraDaemon) =>
      (await daemon.docker().listImages())
        .flatMap((image) => (image.RepoTags ?? []).map((tag) => ({ tag, size: image.Size })))
        .filter(({ tag }) => tag.includes(`/${repo}-`));

    /** Polls each daemon's images of this test every 25 ms; returns the largest total seen on each. */
    function sampleHosts() {
      const peaks = daemons.map(() => 0);
      let stopped = false;
      const loop = (async () => {
        while (!stopped) {
          for (const [i, daemon] of daemons.entries()) {
            const held = (await ours(daemon)).reduce((sum, { size }) => sum + size, 0);
            peaks[i] = Math.max(peaks[i] ?? 0, held);
          }
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      })();
      return async () => {
        stopped = true;
        await loop;
        return peaks;
      };
    }

    it("a batch over two hosts, its images 4x the budget of each, ends with every prediction and each host within its budget", async () => {
      const dir = tempDir();
      const dataset = writeImageDataset(dir, images, { prefix: "hosts", before: "sleep 0.5" });
      const imageBytes = images[0]?.bytes ?? 0;
      // Two images per host: the batch's 8 images are 4x what each host may hold.
      const budget = 2 * imageBytes + Math.floor(imageBytes / 2);
      const out = join(dir, "out");
      const stop = sampleHosts();
      const result = await runCli(
        [
          "swebench",
          "--subset",
          dataset,
          ...SCRIPTED_IN_DOCKER,
          ...daemons.flatMap((daemon) => ["--docker-host", `${daemon.host}:1`]),
          "--image-budget",
          String(budget),
          "-o",
          out,
        ],
        { env: { SWERUN_STATE_DIR: join(dir, "state") } },
      );
      const peaks = await stop();
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const preds = readJson(join(out, "preds.json")) as Record<string, { model_patch: string }>;
      expect(
        Object.fromEntries(Object.entries(preds).map(([id, pred]) => [id, pred.model_patch.trim()])),
      ).toEqual(Object.fromEntries(images.map((_, i) => [`hosts__case-${i + 1}`, `fix-${i + 1}`])));
      const run = readJson(join(out, "run.json"));
      expect(run.images.budget_bytes).toBe(budget);
      // Both hosts ran instances and pulled images; each stayed within the budget (not their sum).
      const hosts = new Set(run.images.pulled.map((entry: { host?: string }) => entry.host));
      expect(hosts.size).toBe(2);
      for (const peak of peaks) {
        expect(peak).toBeGreaterThan(0);
        expect(peak).toBeLessThanOrEqual(budget);
      }
      expect(Math.max(...peaks)).toBeGreaterThan(imageBytes);
      expect(run.images.peak_bytes).toBeLessThanOrEqual(budget);
      expect(run.images.removed.length).toBeGreaterThanOrEqual(4);
      for (const daemon of daemons)
        expect((await ours(daemon)).reduce((sum, { size }) => sum + size, 0)).toBeLessThanOrEqual(budget);
    }, 240_000);
  },
);
