import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FolderFacts } from "../../src/facts/folder-facts.js";
import { loadTrajectory } from "../../src/trajectory/reader.js";
import { tempDir } from "../helpers/tmp.js";

/** A trajectory of instance `id` that ended with `exit_status` and `submission`. */
const trajectory = (id: string, exit_status: string, submission: string) =>
  JSON.stringify({
    info: { exit_status, submission, model_stats: { instance_cost: 0.5, api_calls: 1 } },
    messages: [
      { role: "system", content: "s" },
      { role: "user", content: "task" },
      { role: "exit", content: submission, extra: { exit_status, submission } },
    ],
    trajectory_format: "mini-swe-agent-1.1",
    instance_id: id,
  });

/** A batch folder: a graded, an ungraded and an empty-patch instance, one still running, a run.json with `eval`. */
function batchFolder(): string {
  const dir = tempDir();
  const put = (name: string, text: string) => {
    mkdirSync(join(dir, name.split("/")[0] as string), { recursive: true });
    writeFileSync(join(dir, name), text);
  };
  put("a/a.traj.json", trajectory("a", "Submitted", "diff --git a/x b/x\n"));
  put("b/b.traj.json", trajectory("b", "Submitted", "diff --git a/y b/y\n"));
  put("c/c.traj.json", trajectory("c", "LimitsExceeded", ""));
  put("d/d.traj.json.partial", trajectory("d", "", ""));
  writeFileSync(
    join(dir, "run.json"),
    JSON.stringify({
      run_id: "r",
      eval: { run_id: "r", instances: { a: { resolved: true, status: "resolved" } } },
    }),
  );
  return dir;
}

describe("the facts of a run folder", () => {
  it("list its trajectories (with those still running when asked) and read each with its verdict", () => {
    const dir = batchFolder();
    const folder = new FolderFacts(dir);
    expect(folder.trajectories().map((found) => found.path)).toEqual(
      ["a", "b", "c"].map((id) => join(dir, id, `${id}.traj.json`)),
    );
    expect(
      folder.trajectories(true).map((found) => [found.path.slice(dir.length + 1), found.running]),
    ).toEqual([
      ["a/a.traj.json", false],
      ["b/b.traj.json", false],
      ["c/c.traj.json", false],
      ["d/d.traj.json.partial", true],
    ]);
    const reasons = folder.trajectories().map(({ path }) => folder.read(path).verdict.reason);
    // c: an evaluated folder's instance that submitted nothing is an empty patch, as the harness counts it.
    expect(reasons).toEqual(["resolved", "not_evaluated", "empty_patch"]);
    const loaded = loadTrajectory(join(dir, "a", "a.traj.json"));
    expect(folder.factsOf(loaded)).toEqual(folder.read(loaded.path));
  });

  it("take the run.json given as already read, not the one on disk", () => {
    const folder = new FolderFacts(batchFolder(), {});
    expect(folder.verdicts.evaluated).toBe(false);
    const { path } = folder.trajectories()[0] as { path: string };
    expect(folder.read(path).verdict.reason).toBe("not_evaluated");
  });
});
