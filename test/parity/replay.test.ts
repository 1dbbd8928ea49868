import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import { CASES, CORPUS, expectedTrajectory } from "./corpus.js";

describe("swerun replay of mini-swe-agent's own trajectories (test/fixtures/parity)", () => {
  for (const parity of CASES.filter((c) => !c.fails)) {
    it(`${parity.name}: every step exact or normalised`, async () => {
      const cwd = tempDir("swerun-parity-replay-");
      // The replay's own trajectory goes outside the folder the commands run in (`ls` there must see nothing).
      const out = join(tempDir("swerun-parity-replay-out-"), `${parity.name}.traj.json`);
      const path = join(CORPUS, "expected", `${parity.name}.traj.json`);
      // Both run the commands with /bin/sh -c (their local environments ignore `interpreter`).
      const args = ["--environment-class", "local", "--cwd", cwd, "-o", out];
      const result = await runCli(["replay", path, ...args], { cwd });
      expect(result.code, result.stderr).toBe(0);
      const steps = result.stdout.split("\n").filter((line) => /^\s+(\d+\s+)?[a-z]+\s{2,}/.test(line));
      expect(steps.length).toBeGreaterThan(0);
      for (const line of steps) {
        // A format error runs nothing: its recorded feedback is added as it was.
        expect(line).toMatch(
          /^\s+(\d+\s+)?(exact|normalised|replayed\s+-\s+\(format error: added as recorded\))/,
        );
      }
      expect(result.stdout).toMatch(/, 0 different/);
      const status = expectedTrajectory(parity.name).info.exit_status as string;
      expect(result.stdout).toContain(`exit status: ${status} (recorded: ${status})`);
      expect(result.stdout).not.toMatch(/submission: DIFFERENT/);
    });
  }
});
