import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LimitsExceeded, UserError } from "../../src/errors.js";
import { GlobalModelStats, globalModelStats, resetGlobalModelStats } from "../../src/models/global-stats.js";

const empty = mkdtempSync(join(tmpdir(), "swerun-stats-"));
const context = (env: Record<string, string>) => ({
  env: { SWERUN_GLOBAL_CONFIG_DIR: empty, ...env },
  cwd: empty,
});

afterEach(() => resetGlobalModelStats());

describe("GlobalModelStats", () => {
  it("allows calls until the call limit is reached, then throws LimitsExceeded with an exit message", () => {
    const stats = new GlobalModelStats(0, 2);
    stats.checkBeforeCall();
    stats.add(0.1);
    stats.checkBeforeCall();
    stats.add(0.1);
    expect(() => stats.checkBeforeCall()).toThrow(LimitsExceeded);
    try {
      stats.checkBeforeCall();
    } catch (error) {
      const [exit] = (error as LimitsExceeded).messages;
      expect(exit?.role).toBe("exit");
      expect(exit?.extra?.exit_status).toBe("LimitsExceeded");
      expect(exit?.content).toMatch(/^Global cost\/call limit exceeded: 2 calls made of 2/);
    }
  });

  it("stops once the total cost reaches the cost limit", () => {
    const stats = new GlobalModelStats(1, 0);
    stats.add(0.6);
    stats.checkBeforeCall();
    stats.add(0.6);
    expect(() => stats.checkBeforeCall()).toThrow(/\$1\.2000 spent of \$1\.0000/);
  });

  it("reads SWERUN_* limits, then mini-swe-agent's MSWEA_* names", () => {
    expect(
      globalModelStats(context({ SWERUN_GLOBAL_CALL_LIMIT: "5", MSWEA_GLOBAL_COST_LIMIT: "2.5" })),
    ).toMatchObject({
      callLimit: 5,
      costLimit: 2.5,
    });
    resetGlobalModelStats();
    expect(
      globalModelStats(context({ SWERUN_GLOBAL_CALL_LIMIT: "3", MSWEA_GLOBAL_CALL_LIMIT: "9" })).callLimit,
    ).toBe(3);
  });

  it("is one object per process until reset", () => {
    const stats = globalModelStats(context({}));
    stats.add(1);
    expect(globalModelStats(context({ SWERUN_GLOBAL_CALL_LIMIT: "1" }))).toBe(stats);
  });

  it("rejects a malformed limit, naming the variable", () => {
    expect(() => globalModelStats(context({ SWERUN_GLOBAL_CALL_LIMIT: "1.5" }))).toThrow(UserError);
    expect(() => globalModelStats(context({ SWERUN_GLOBAL_COST_LIMIT: "lots" }))).toThrow(
      /SWERUN_GLOBAL_COST_LIMIT \(from environment\): expected a number >= 0, got "lots"/,
    );
  });
});
