import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { runCli, startCli, waitFor } from "../helpers/cli.js";
import { writeDataset } from "../helpers/datasets.js";
import { describeDocker } from "../helpers/docker.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));
const LOCAL = ["--environment-class", "local"];

/** A demo batch in the local environment, into `<root>/<name>`. */
async function demoBatch(root: string, name: string, extra: string[]) {
  const result = await runCli([
    "swebench",
    "--subset",
    "demo",
    ...LOCAL,
    "-q",
    "-o",
    join(root, name),
    ...extra,
  ]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return join(root, name);
}

const runs = (root: string, ...args: string[]) => runCli(["runs", ...args, "--dir", root]);

describe("swerun runs", () => {
  it("records cases and a config snapshot, and lists, shows and compares two labelled runs", async () => {
    const root = tempDir();
    const [a, b] = await Promise.all([
      demoBatch(root, "a", ["--label", "baseline", "-c", "agent.step_limit=20"]),
      demoBatch(root, "b", [
        "--label",
        "tight",
        "-c",
        "agent.step_limit=3",
        "-c",
        "model.model_kwargs.temperature=0.5",
      ]),
    ]);
    const record = readJson(join(a, "run.json"));
    expect(Object.keys(record.cases).sort()).toEqual([
      "swerun-demo__calc-1",
      "swerun-demo__count-3",
      "swerun-demo__greet-2",
    ]);
    expect(record.cases["swerun-demo__calc-1"]).toMatchObject({
      exit_status: "Submitted",
      submitted: true,
      patch_lines: 2,
      steps: 4,
      behaviorMetrics: { toolCount: 4, readCount: 1, explorationRatio: 0.25 },
    });
    expect(record.agent).toMatchObject({ name: "swerun", model: "deterministic/demo", step_limit: 20 });
    expect(record.agent.template_sha256.system_template).toMatch(/^[0-9a-f]{64}$/);
    expect(record.dataset).toMatchObject({ subset: "demo", split: "test", slice: null });
    expect(record.totals.toolCount).toBe(12);

    const list = await runs(root, "list");
    expect(list.code).toBe(0);
    // sniffbench's layout: a box titled Runs, its columns first (Agent, Cases graded, Grade), its date style.
    expect(list.stdout).toMatch(/^╭─ Runs ─+╮$/m);
    expect(list.stdout).toMatch(/^│ 2 runs +│$/m);
    expect(list.stdout).toMatch(
      /^│ ID +Label +Date +Agent +Cases +Grade +Model +Finished +Submitted +Resolved +Cost +State +│$/m,
    );
    expect(list.stdout).toMatch(
      /^│ \S+ +baseline +[A-Z][a-z]{2} \d{1,2}, \d{4} +swerun +0\/3 +N\/A +deterministic\/demo +3\/3 +3 +- +\$0\.0000 +complete +│$/m,
    );
    expect(list.stdout).toMatch(/^╰─+╯$/m);
    const listed = JSON.parse((await runs(root, "list", "--json")).stdout);
    expect(listed.map((run: { label: string }) => run.label).sort()).toEqual(["baseline", "tight"]);
    expect(listed.find((run: { label: string }) => run.label === "baseline")).toMatchObject({
      cases_finished: 3,
      cases_total: 3,
      submitted: 3,
      state: "complete",
    });

    const show = await runs(root, "show", "tight");
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^╭─ Run: \S+ ─+╮$/m);
    expect(show.stdout).toMatch(/^│ Label: tight +│$/m);
    expect(show.stdout).toMatch(/^│ Created: [A-Z][a-z]{2} \d{1,2}, \d{4}, \d\d:\d\d [AP]M +│$/m);
    expect(show.stdout).toMatch(/^│ Cases: 0\/3 graded +│$/m);
    expect(show.stdout).toMatch(/^│ Average Grade: N\/A +│$/m);
    expect(show.stdout).toMatch(/Limits: 3 steps, no cost limit, no time limit/);
    expect(show.stdout).toMatch(
      /^ {2}swerun-demo__calc-1 +N\/A +- +- +LimitsExceeded +3 +0 +\$0\.0000 +\d+(?:\.\d s| ms)$/m,
    );
    const shown = JSON.parse((await runs(root, "show", "tight", "--json")).stdout);
    expect(shown.cases["swerun-demo__calc-1"].exit_status).toBe("LimitsExceeded");

    const compare = await runs(root, "compare", "baseline", "tight");
    expect(compare.code).toBe(0);
    expect(compare.stdout).toMatch(/^╭─ swerun runs compare ─+╮\n│ Run Comparison +│$/m);
    expect(compare.stdout).toContain("agent.step_limit: 20 → 3");
    expect(compare.stdout).toContain("model.model_kwargs.temperature: none → 0.5");
    expect(compare.stdout).not.toContain("sha256");
    expect(compare.stdout).toMatch(/swerun-demo__calc-1: submitted only in baseline/);
    expect(compare.stdout).toMatch(
      /^ {2}swerun-demo__calc-1 +N\/A +N\/A +0 → 0 +→ 0\.0% +\$0\.0000 → \$0\.0000 → 0\.0% +Submitted → LimitsExceeded$/m,
    );
    expect(compare.stdout).toContain("  Cases compared: 3\n");
    const compared = JSON.parse((await runs(root, "compare", "baseline", "tight", "--json")).stdout);
    expect(compared.flips).toHaveLength(3);
    expect(compared.flips[0]).toEqual({
      instance_id: "swerun-demo__calc-1",
      kind: "submitted",
      direction: "lost",
    });
    expect(compared.summary.a.submitted).toBe(3);
    expect(compared.summary.b.submitted).toBe(0);
    expect(compared.configChanges.map((c: { field: string }) => c.field)).toContain("agent.step_limit");

    const same = await runs(root, "compare", "baseline", b);
    expect(same.stdout).not.toContain("No configuration changes detected.");
    const self = await runs(root, "compare", "baseline", "baseline");
    expect(self.stdout).toContain("No configuration changes detected.");
  });

  it("resolves refs by id, label, prefix and folder; an unknown or ambiguous ref is one line, exit 2", async () => {
    const root = tempDir();
    const dir = await demoBatch(root, "one", ["--label", "l1"]);
    const id = readJson(join(dir, "run.json")).run_id as string;
    expect((await runs(root, "show", id)).stdout).toContain(`ID: ${id}`);
    expect((await runs(root, "show", id.slice(0, 12))).stdout).toContain(`ID: ${id}`);
    expect((await runs(root, "show", dir)).stdout).toContain(`ID: ${id}`);
    const unknown = await runs(root, "show", "nope");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(`swerun: no run "nope"; known runs: ${id} (l1)\n`);
    await demoBatch(root, "two", []);
    const ambiguous = await runs(root, "show", "2");
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/^swerun: run "2" is ambiguous: .+, .+\n$/);
  });

  it("lists a mini-swe-agent folder as imported, with what its trajectories hold", async () => {
    const root = tempDir();
    const dir = join(root, "mini", "run1");
    const id = "astropy__astropy-12907";
    mkdirSync(join(dir, id), { recursive: true });
    cpSync(
      join(packageRoot(), "test", "fixtures", "replay", "mini-swe-agent-toolcall.traj.json"),
      join(dir, id, `${id}.traj.json`),
    );
    writeFileSync(
      join(dir, "preds.json"),
      JSON.stringify({ [id]: { model_name_or_path: "gpt-x", instance_id: id, model_patch: "" } }),
    );
    const listed = JSON.parse((await runs(root, "list", "--json")).stdout);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: "run1", imported: true, model: "gpt-x", cases_finished: 1 });
    const show = await runs(root, "show", "run1");
    expect(show.stdout).toContain("ID: run1 (imported)");
    expect(show.stdout).toContain("(not recorded)");
  });

  it("shows a running batch as running, refuses to delete it, and a killed one as partial", async () => {
    const root = tempDir();
    const dataset = writeDataset(root, 2, "sleep 30");
    const out = join(root, "slow");
    const batch = startCli([
      "swebench",
      "--subset",
      dataset,
      ...LOCAL,
      "-c",
      "swebench",
      "-c",
      "swebench-demo",
      "-q",
      "-o",
      out,
    ]);
    await waitFor(
      () => existsSync(join(out, "run.json")) && existsSync(join(out, ".swerun.lock")),
      20_000,
      batch.child,
    );
    const listed = JSON.parse((await runs(root, "list", "--json")).stdout);
    expect(listed[0]).toMatchObject({ state: "running", cases_finished: 0, cases_total: 2 });
    const refused = await runs(root, "delete", "slow", "--force");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is running \(its lock is held\); stop it before deleting it\n$/);
    batch.child.kill("SIGKILL");
    await batch.done;
    const after = JSON.parse((await runs(root, "list", "--json")).stdout);
    expect(after[0].state).toBe("partial");
    const noTty = await runs(root, "delete", after[0].id);
    expect(noTty.code).toBe(2);
    expect(noTty.stderr).toMatch(/needs a terminal to confirm, or --force\n$/);
    const deleted = await runs(root, "delete", after[0].id, "--force");
    expect(deleted.code).toBe(0);
    expect(existsSync(out)).toBe(false);
  });

  it("labels a run later; an interrupted batch resumed keeps its id and earlier cases", async () => {
    const root = tempDir();
    const dir = await demoBatch(root, "r", ["--slice", "0:2"]);
    const first = readJson(join(dir, "run.json"));
    expect(Object.keys(first.cases)).toHaveLength(2);
    await demoBatch(root, "r", []);
    const resumed = readJson(join(dir, "run.json"));
    expect(resumed.run_id).toBe(first.run_id);
    expect(Object.keys(resumed.cases)).toHaveLength(3);
    expect(resumed.cases["swerun-demo__calc-1"]).toEqual(first.cases["swerun-demo__calc-1"]);
    const labelled = await runs(root, "label", first.run_id, "later");
    expect(labelled.code).toBe(0);
    expect(readJson(join(dir, "run.json")).label).toBe("later");
  });

  it("swebench-single --label writes a run.json that runs lists; into a batch folder it updates that case only", async () => {
    const root = tempDir();
    const single = (out: string, ...extra: string[]) =>
      runCli([
        "swebench-single",
        "--subset",
        "demo",
        "-i",
        "swerun-demo__calc-1",
        ...LOCAL,
        "-y",
        "-o",
        out,
        ...extra,
      ]);
    const alone = await single(join(root, "one"), "--label", "solo");
    expect(alone.code).toBe(0);
    const record = readJson(join(root, "one", "run.json"));
    expect(record).toMatchObject({
      label: "solo",
      instances: 1,
      status: "finished",
      exit_statuses: { Submitted: 1 },
    });
    expect(record.dataset.instance_ids).toBe("swerun-demo__calc-1");
    expect(record.cases["swerun-demo__calc-1"]).toMatchObject({ exit_status: "Submitted", submitted: true });
    expect(record.cases["swerun-demo__calc-1"].behaviorMetrics.toolCount).toBeGreaterThan(0);
    // Its wall time is the instance's, recorded in its trajectory (as a batch records it).
    const timing = readJson(join(root, "one", "swerun-demo__calc-1.traj.json")).info.swerun_timing;
    expect(record.cases["swerun-demo__calc-1"].duration_s).toBe(Math.round(timing.wall_time_s * 1000) / 1000);
    const listed = JSON.parse((await runs(root, "list", "--json")).stdout);
    expect(listed.map((run: { label: string }) => run.label)).toEqual(["solo"]);

    const dir = await demoBatch(root, "batch", ["--label", "b"]);
    const before = readJson(join(dir, "run.json"));
    expect((await single(dir)).code).toBe(0);
    const after = readJson(join(dir, "run.json"));
    expect(after.run_id).toBe(before.run_id);
    expect(after.label).toBe("b");
    expect(after.instances).toBe(3);
    expect(Object.keys(after.cases).sort()).toEqual(Object.keys(before.cases).sort());
    expect(after.cases["swerun-demo__count-3"]).toEqual(before.cases["swerun-demo__count-3"]);
  });
});

await describeDocker("swerun runs (Docker batch)", () => {
  it("records cases of a demo batch in containers", async () => {
    const root = tempDir();
    const out = join(root, "docker");
    const result = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--environment-class",
      "docker",
      "-c",
      'environment.run_args=["--rm","--network","none"]',
      "-q",
      "-o",
      out,
      "--label",
      "dk",
    ]);
    expect(result.code).toBe(0);
    const shown = JSON.parse((await runs(root, "show", "dk", "--json")).stdout);
    expect(shown.agent).toMatchObject({ environment_class: "docker", exec_mode: "session" });
    expect(shown.summary).toMatchObject({ cases_finished: 3, submitted: 3 });
    expect(shown.cases["swerun-demo__count-3"].behaviorMetrics.toolCount).toBeGreaterThan(0);
  });
});
