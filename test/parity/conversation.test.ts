import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tmp.js";
import { CASES, comparePairs, expectedTrajectory, runCase } from "./corpus.js";

describe("conversation parity with mini-swe-agent 2.4.6 (test/fixtures/parity)", () => {
  it("has the corpus", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(20);
  });

  for (const parity of CASES) {
    it(`${parity.name}: the same messages, exit status, submission and cost`, async () => {
      const expected = expectedTrajectory(parity.name);
      const agent = await runCase(parity, tempDir("swerun-parity-"), tempDir("swerun-parity-config-"));
      const pairs = comparePairs(expected, agent.messages);
      expect(pairs.actual).toEqual(pairs.expected);
      const info = agent.serialize();
      expect(info.exit_status).toBe(expected.info.exit_status);
      expect(info.submission).toBe(expected.info.submission);
      expect(info.model_stats).toEqual(expected.info.model_stats);
    });
  }
});
