import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import { runCli, startCli, waitFor } from "../helpers/cli.js";
import { describeDocker, dockerFixture, swerunContainers } from "../helpers/docker.js";
import { EVAL_FIXTURES, ensureEvalImage } from "../helpers/eval-images.js";
import { tempDir } from "../helpers/tmp.js";

/** What the official harness wrote for the same dataset and predictions (scripts/gen-eval-fixtures.py --image). */
const HARNESS = join(EVAL_FIXTURES, "harness");
const MODEL_DIR = "test__model";
const id = (name: string) => `swerun-test__mathx-${name}`;
const read = (path: string) => readFileSync(path, "utf8");
/** A test log without what varies between runs: durations, and the order of stdout and stderr lines. */
const comparable = (text: string) =>
  text
    .replace(/ in \d+\.\d+s /g, " in Xs ")
    .split("\n")
    .sort();

await describeDocker("swerun eval in Docker", () => {
  let docker: Docker;
  let image: string;

  beforeAll(async () => {
    ({ docker } = await dockerFixture());
    image = await ensureEvalImage(docker);
  });

  function dataset(dir: string): string {
    const path = join(dir, "dataset.json");
    writeFileSync(path, read(join(EVAL_FIXTURES, "dataset.json")).replaceAll("{image}", image));
    return path;
  }

  it("grades like the harness: gold resolves, empty not run, no-apply, broken P2P, timeout, invalid exit code", async () => {
    const dir = tempDir();
    const out = join(dir, "out");
    const args = ["eval", join(EVAL_FIXTURES, "preds.json"), "--subset", dataset(dir), "--run-id", "harness"];
    const result = await runCli([...args, "-w", "2", "--timeout", "5", "--network", "none", "-o", out]);
    expect(result.stderr).toContain("5 instances to grade");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("resolved: 1/6 (3 graded, 1 empty, 2 errors)");

    const harnessReport = JSON.parse(read(join(HARNESS, `${MODEL_DIR}.harness.json`)));
    const ourReport = JSON.parse(read(join(out, `${MODEL_DIR}.harness.json`)));
    expect(Object.keys(ourReport)).toEqual(Object.keys(harnessReport));
    for (const key of Object.keys(harnessReport)) {
      const want = key === "unremoved_images" ? [image] : harnessReport[key];
      expect({ key, value: ourReport[key] }).toEqual({ key, value: want });
    }

    const logs = join(out, "logs", "run_evaluation", "harness", MODEL_DIR);
    for (const name of ["gold", "breaks", "invalid"]) {
      // Byte for byte: Python's json.dumps(indent=4) layout, key order, no trailing newline.
      expect(read(join(logs, id(name), "report.json"))).toBe(read(join(HARNESS, id(name), "report.json")));
    }
    for (const name of ["gold", "breaks", "invalid", "hang"]) {
      expect(read(join(logs, id(name), "eval.sh"))).toBe(read(join(HARNESS, id(name), "eval.sh")));
      expect(read(join(logs, id(name), "patch.diff"))).toBe(read(join(HARNESS, id(name), "patch.diff")));
      expect(comparable(read(join(logs, id(name), "test_output.txt")))).toEqual(
        comparable(read(join(HARNESS, id(name), "test_output.txt"))),
      );
    }
    // The patch that does not apply: no eval.sh, no test output, no report; the log says so.
    expect(read(join(logs, id("noapply"), "run_instance.log"))).toContain(
      ">>>>> Patch Apply Failed:\npatching file mathx.py",
    );
    for (const file of ["report.json", "eval.sh", "test_output.txt"])
      expect(existsSync(join(logs, id("noapply"), file))).toBe(false);
    // The hanging test: the output so far plus the harness's timeout line, and no report.
    expect(read(join(logs, id("hang"), "test_output.txt"))).toMatch(
      /\n\nTimeout error: 5 seconds exceeded\.$/,
    );
    expect(existsSync(join(logs, id("hang"), "report.json"))).toBe(false);
    // The empty patch is never run.
    expect(existsSync(join(logs, id("empty")))).toBe(false);
    expect(await swerunContainers(docker, "harness")).toEqual([]);

    // Resume: graded instances are skipped, --redo grades them again.
    const only = ["-i", `${id("gold")},${id("breaks")}`, "--network", "none", "-o", out];
    const again = await runCli([...args, ...only]);
    expect(again.stderr).toContain("0 instances to grade, 2 graded before (skipped)");
    expect(again.stdout).toContain("resolved: 1/2");
    const redo = await runCli([...args, ...only, "--redo"]);
    expect(redo.stderr).toContain("2 instances to grade");
    expect(read(join(logs, id("gold"), "report.json"))).toBe(read(join(HARNESS, id("gold"), "report.json")));
  });

  it("a run folder: logs under <folder>/eval, verdicts in run.json, containers removed after two Ctrl-C", async () => {
    const dir = tempDir();
    // The folder's name is the eval run id (and the containers' label): unique per test run.
    const runId = `run-${basename(dir)}`;
    const folder = join(dir, runId);
    const predictions = JSON.parse(read(join(EVAL_FIXTURES, "preds.json")));
    const keep = [id("gold"), id("hang")];
    const preds = Object.fromEntries(keep.map((key) => [key, predictions[key]]));
    const { mkdirSync } = await import("node:fs");
    mkdirSync(folder);
    writeFileSync(join(folder, "preds.json"), JSON.stringify(preds));
    writeFileSync(
      join(folder, "run.json"),
      JSON.stringify({ run_id: "r1", subset: dataset(dir), split: "test" }),
    );
    const first = await runCli(["eval", folder, "-i", id("gold"), "--network", "none"]);
    expect(first.code).toBe(0);
    const report = join(
      folder,
      "eval",
      "logs",
      "run_evaluation",
      runId,
      MODEL_DIR,
      id("gold"),
      "report.json",
    );
    expect(read(report)).toBe(read(join(HARNESS, id("gold"), "report.json")));
    const run = JSON.parse(read(join(folder, "run.json")));
    expect(run.run_id).toBe("r1");
    expect(run.eval).toMatchObject({
      run_id: runId,
      report: join("eval", `${MODEL_DIR}.${runId}.json`),
      resolved: 1,
      graded: 1,
      instances: { [id("gold")]: { resolved: true, status: "resolved" } },
    });

    // The hanging instance with a long timeout: Ctrl-C twice stops it and removes its container.
    const cli = startCli(["eval", folder, "-i", id("hang"), "--network", "none", "--timeout", "600"]);
    let errors = "";
    cli.child.stderr?.on("data", (chunk) => {
      errors += chunk;
    });
    const stderr = () => errors;
    let containers: Docker.ContainerInfo[] = [];
    const poll = setInterval(() => {
      void swerunContainers(docker, runId).then((list) => {
        containers = list;
      });
    }, 100);
    try {
      const hangLog = join(report, "..", "..", id("hang"), "run_instance.log");
      await waitFor(() => containers.length > 0, 30_000, cli.child);
      await waitFor(() => existsSync(hangLog) && read(hangLog).includes("Eval script"), 30_000, cli.child);
    } finally {
      clearInterval(poll);
    }
    cli.child.kill("SIGINT");
    await waitFor(() => stderr().includes("Ctrl-C: no new instances"), 30_000, cli.child);
    cli.child.kill("SIGINT");
    // A CLI that does not end is killed, so the assertions below show what it printed.
    const guard = setTimeout(() => cli.child.kill("SIGKILL"), 60_000);
    const ended = await cli.done;
    clearTimeout(guard);
    expect(ended.stderr).toContain("Stopping the running gradings");
    expect(ended.code).toBe(130);
    expect(await swerunContainers(docker, runId)).toEqual([]);
    const after = JSON.parse(read(join(folder, "run.json")));
    expect(after.eval.instances[id("hang")]).toMatchObject({
      resolved: false,
      status: "error",
      error: "interrupted",
    });
    expect(after.eval.instances[id("gold")]).toMatchObject({ resolved: true });
  }, 120_000);
  it("puts the patch and /eval.sh in the container byte for byte, small (exec arguments) or large (archive)", async () => {
    const dir = tempDir();
    const gold = JSON.parse(read(join(EVAL_FIXTURES, "preds.json")))[id("gold")];
    // A new file after the gold fix: quotes, `$`, backslashes and non-ASCII stay as they are.
    const added = (lines: string[]) =>
      `diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}\n`).join("")}`;
    const odd = `it's "$HOME" \`id\` \\n %s é ✓ 🚀`;
    const patches = {
      small: gold.model_patch + added([odd, "-- end"]),
      large:
        gold.model_patch + added(Array.from({ length: 3000 }, (_, i) => `${i} ${odd} ${"x".repeat(40)}`)),
    };
    expect(Buffer.byteLength(patches.large)).toBeGreaterThan(128 * 1024);
    for (const [size, patch] of Object.entries(patches)) {
      const preds = join(dir, `${size}.json`);
      writeFileSync(preds, JSON.stringify({ [id("gold")]: { ...gold, model_patch: patch } }));
      const out = join(dir, size);
      const result = await runCli([
        "eval",
        preds,
        "--subset",
        dataset(dir),
        "-i",
        id("gold"),
        "--run-id",
        size,
        "--keep",
        "--network",
        "none",
        "-o",
        out,
      ]);
      const name = /container kept: docker exec -it (\S+) bash/.exec(result.stdout + result.stderr)?.[1];
      expect(name).toBeDefined();
      const container = docker.getContainer(name ?? "");
      try {
        expect(result.code).toBe(0);
        expect(result.stdout).toContain("resolved: 1/1");
        const cat = async (path: string) => {
          const exec = await container.exec({ Cmd: ["cat", path], AttachStdout: true, AttachStderr: true });
          const stream = await exec.start({ hijack: false, stdin: false });
          const chunks: Buffer[] = [];
          await new Promise<void>((resolve, reject) => {
            container.modem.demuxStream(
              stream,
              { write: (chunk: Buffer) => chunks.push(chunk) },
              process.stderr,
            );
            stream.on("end", resolve);
            stream.on("error", reject);
          });
          return Buffer.concat(chunks);
        };
        expect((await cat("/tmp/patch.diff")).equals(Buffer.from(patch))).toBe(true);
        const logs = join(out, "logs", "run_evaluation", size, MODEL_DIR, id("gold"));
        expect((await cat("/eval.sh")).toString("utf8")).toBe(read(join(logs, "eval.sh")));
      } finally {
        await container.remove({ force: true });
      }
    }
  }, 120_000);
});
