import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
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

/** Free bytes of a folder's file system. */
const freeBytes = (dir: string) =>
  Number(execFileSync("df", ["-B1", "--output=avail", dir], { encoding: "utf8" }).split("\n")[1]);

await describeExtraDaemons("swebench images on a daemon whose disk fills (a loop-mounted data root)", () => {
  let registry: LocalRegistry;
  let daemon: ExtraDaemon;
  let images: PushedImage[];

  beforeAll(async () => {
    const problem = registryProblem();
    if (problem) throw new Error(problem);
    const { docker } = await dockerFixture();
    registry = await startRegistry();
    images = await pushRandomImages(
      docker,
      registry,
      `swerun-i21-disk-${randomBytes(4).toString("hex")}`,
      3,
      40,
    );
    daemon = await startDaemon({ dataMegabytes: 150 });
    // The daemon pulls from 127.0.0.1 in its own network namespace: the same registry serves there too.
    await registry.serveIn(daemon.pid());
  }, 180_000);

  afterAll(async () => {
    await registry?.stop();
  });

  const dataset = (dir: string) => writeImageDataset(dir, images, { prefix: "disk" });

  const args = (path: string, out: string) => [
    "swebench",
    "--subset",
    path,
    ...SCRIPTED_IN_DOCKER,
    "--docker-host",
    `${daemon.host}:1`,
    "-o",
    out,
  ];

  it("a largest image that does not fit the free space is one line and exit 2 before any instance", async () => {
    const dir = tempDir();
    const filler = join(daemon.dir, "data", "filler");
    const size = Math.floor((images[0]?.bytes ?? 0) / 2);
    execFileSync("fallocate", [
      "-l",
      String(Math.max(0, freeBytes(join(daemon.dir, "data")) - size)),
      filler,
    ]);
    try {
      const out = join(dir, "out");
      const result = await runCli(args(dataset(dir), out), { env: { SWERUN_STATE_DIR: join(dir, "state") } });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(
          `^swerun: Docker's data root on ${daemon.host} \\(${join(daemon.dir, "data")}: [\\d.]+ MB free\\) has no room for the batch's largest image, ${registry.address}/\\S+ \\([\\d.]+ MB in its registry\\); free some disk \\(swerun cleanup --images removes what earlier runs pulled\\)\\n$`,
        ),
      );
      expect(existsSync(join(out, "preds.json"))).toBe(false);
    } finally {
      rmSync(filler, { force: true });
    }
  });

  it("no space left on device while pulling: pulls pause, what the batch pulled and no longer needs goes, the pull is tried again, nothing is lost", async () => {
    const dir = tempDir();
    const out = join(dir, "out");
    const result = await runCli(args(dataset(dir), out), { env: { SWERUN_STATE_DIR: join(dir, "state") } });
    expect(result.code).toBe(0);
    if (!result.stdout.includes("Submitted 3"))
      console.log(
        result.stderr,
        readFileSync(join(out, "swerun.log"), "utf8"),
        JSON.stringify(readJson(join(out, "run.json")).images),
      );
    expect(result.stdout).toContain("exit statuses: Submitted 3");
    expect(result.stderr).toContain("no space left on device while pulling");
    const preds = readJson(join(out, "preds.json")) as Record<string, { model_patch: string }>;
    expect(
      Object.fromEntries(Object.entries(preds).map(([id, pred]) => [id, pred.model_patch.trim()])),
    ).toEqual(Object.fromEntries(images.map((_, i) => [`disk__case-${i + 1}`, `fix-${i + 1}`])));
    const run = readJson(join(out, "run.json"));
    expect(run.images.removed.length).toBeGreaterThan(0);
  }, 180_000);
});
