import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compareSubmissions } from "../../src/replay/divergence.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

describe("swerun replay of a trajectory that records no submission", () => {
  it("says 'not recorded' and does not count it as a divergence (it used to say DIFFERENT, exit 1)", async () => {
    const dir = tempDir();
    const recorded = join(dir, "demo.traj.json");
    expect((await runCli(["run", "-c", "demo", "--yolo", "-o", recorded])).code).toBe(0);
    // A run killed after its last step was saved but before it ended: no exit message, no info.submission.
    const trajectory = JSON.parse(readFileSync(recorded, "utf8"));
    trajectory.messages = trajectory.messages.filter((message: { role: string }) => message.role !== "exit");
    delete trajectory.info.submission;
    delete trajectory.info.exit_status;
    const cut = join(dir, "cut.traj.json");
    writeFileSync(cut, JSON.stringify(trajectory));
    const report = join(dir, "report.json");
    const result = await runCli([
      "replay",
      cut,
      "-c",
      "demo",
      "-o",
      join(dir, "r.traj.json"),
      "--report",
      report,
    ]);
    expect(result.stdout).toContain("submission: not recorded");
    expect(result.stdout).not.toContain("DIFFERENT");
    expect(result.code).toBe(0);
    const written = JSON.parse(readFileSync(report, "utf8"));
    expect(written.submission.status).toBe("not_recorded");
    expect(written.submission.replayed).toMatch(/^diff --git/);
    expect(written.divergent_steps).toEqual([]);
  });

  it("compareSubmissions: nothing recorded is not_recorded, an empty recorded submission is compared", () => {
    expect(compareSubmissions(undefined, "x").status).toBe("not_recorded");
    expect(compareSubmissions("", "x").status).toBe("different");
    expect(compareSubmissions("x", "x").status).toBe("same");
  });
});
