import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { runCli, startCli, waitFor } from "../helpers/cli.js";
import { step, writeDataset } from "../helpers/datasets.js";
import { tempDir } from "../helpers/tmp.js";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();

describe("swerun swebench-single", () => {
  it("runs one instance in a clean worktree of --repo-dir at base_commit, then removes it", async () => {
    const dir = tempDir();
    const repo = join(dir, "repo");
    cpSync(join(packageRoot(), "config", "swebench-demo", "calc"), repo, { recursive: true });
    git(repo, "init", "-q");
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "base");
    const base = git(repo, "rev-parse", "HEAD");
    writeFileSync(join(repo, "calc.sh"), "# a later commit the worktree must not see\n");
    git(repo, "commit", "-qam", "later");
    const dataset = join(dir, "d.json");
    const instances = ["b__x-2", "a__calc-1"].map((instance_id) => ({
      instance_id,
      problem_statement: "add subtracts",
      repo: "t/calc",
      base_commit: base,
      swerun_scripted_outputs: [
        step("pwd > /dev/null && git log --format=%s -1 && bash test.sh"),
        step("sed -i 's/\\$1 - \\$2/$1 + $2/' calc.sh && bash test.sh"),
        step("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"),
      ],
    }));
    writeFileSync(dataset, JSON.stringify(instances));
    const out = join(dir, "out");
    const result = await runCli([
      "swebench-single",
      "--subset",
      dataset,
      "-i",
      "0",
      "--environment-class",
      "local",
      "--repo-dir",
      repo,
      "-c",
      "swebench",
      "-c",
      "swebench-demo",
      "-o",
      out,
    ]);
    expect(result.stderr).not.toMatch(/swerun:/);
    expect(result.code).toBe(0);
    const trajectory = JSON.parse(readFileSync(join(out, "a__calc-1.traj.json"), "utf8"));
    expect(trajectory.instance_id).toBe("a__calc-1");
    expect(trajectory.info.exit_status).toBe("Submitted");
    expect(trajectory.messages[3].extra.raw_output).toMatch(/^base\nFAIL: add 2 3 gave -1/);
    const preds = JSON.parse(readFileSync(join(out, "preds.json"), "utf8"));
    expect(Object.keys(preds)).toEqual(["a__calc-1"]);
    expect(preds["a__calc-1"].model_patch).toMatch(/^\+ {2}echo \$\(\(\$1 \+ \$2\)\)$/m);
    expect(git(repo, "worktree", "list").split("\n")).toHaveLength(1);
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  it("names a missing instance and a repo without the base commit", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.json");
    writeFileSync(
      dataset,
      JSON.stringify([{ instance_id: "a__b-1", problem_statement: "x", base_commit: "deadbeef" }]),
    );
    const missing = await runCli([
      "swebench-single",
      "--subset",
      dataset,
      "-i",
      "nope",
      "--environment-class",
      "local",
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^swerun: -i nope: no instance with that id$/m);
    git(dir, "init", "-q");
    const noCommit = await runCli([
      "swebench-single",
      "--subset",
      dataset,
      "-i",
      "a__b-1",
      "--environment-class",
      "local",
      "--repo-dir",
      dir,
    ]);
    expect(noCommit.code).toBe(2);
    expect(noCommit.stderr).toMatch(/commit deadbeef of a__b-1 is not in this clone/);
  });

  it("takes the output folder's lock: refused while a batch writes that folder, nothing written", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 2, "sleep 30");
    const out = join(dir, "out");
    const local = ["--environment-class", "local", "-c", "swebench", "-c", "swebench-demo"];
    const batch = startCli(["swebench", "--subset", dataset, ...local, "-o", out]);
    await waitFor(() => existsSync(join(out, ".swerun.lock")), 20_000, batch.child);
    const single = await runCli([
      "swebench-single",
      "--subset",
      dataset,
      "-i",
      "0",
      ...local,
      "--yolo",
      "-o",
      out,
    ]);
    expect(single.code).toBe(2);
    expect(single.stderr).toMatch(/is being written by another swerun process \(pid \d+/);
    expect(existsSync(join(out, "test__calc-1.traj.json"))).toBe(false);
    batch.child.kill("SIGTERM");
    await batch.done;
  });
});
