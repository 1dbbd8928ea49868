import { beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tmp.js";
import type { Row, SeedOutputs } from "./outputs.js";
import { seedOutputs } from "./outputs.js";
import { REPORT_TABLE } from "./seed-000-report.js";
import { EXPORT_TABLE } from "./seed-001-exports.js";
import { EVENTS_TABLE } from "./seed-002-events.js";
import { harnessItems, swarmItems, swivalItems } from "./seed-items.js";

/**
 * Conformance of swerun's outputs to seeds 000 (swival's report), 001 (the ACP harness's exports) and 002
 * (SwarmSDK's events): each seed's documented items (extracted from its text) must all be in the seed's
 * table, and each item swerun produces is checked, type and meaning, against the outputs of real runs (see
 * test/helpers/seed-runs.ts: a retry, an exhausted retry, format errors, a timeout, invalid tool-call JSON, a
 * limit, a time limit, an error exit, an interrupted run, a scripted run and a scripted batch).
 */
let outputs: SeedOutputs;
beforeAll(async () => {
  outputs = await seedOutputs(tempDir());
}, 180_000);

function conformance(
  name: string,
  documented: () => Set<string>,
  table: Array<Row<SeedOutputs>>,
  atLeast: number,
) {
  describe(name, () => {
    it("has a row for every item the seed documents, and none twice", () => {
      // The extraction finds what the seed documents today (57, 55 and 141 items): a parser that finds
      // nothing would make this test pass for nothing.
      expect(documented().size).toBeGreaterThanOrEqual(atLeast);
      const rows = table.map((row) => row.item);
      expect([...documented()].filter((item) => !rows.includes(item))).toEqual([]);
      expect(rows.filter((item, index) => rows.indexOf(item) !== index)).toEqual([]);
      for (const row of table) expect(Boolean(row.check) !== Boolean(row.notProduced), row.item).toBe(true);
    });
    it.each(table.filter((row) => row.check).map((row) => [row.item, row] as const))("%s", (_item, row) => {
      row.check?.(outputs);
    });
  });
}

conformance("seed 000: swival's report (--report, swerun report)", swivalItems, REPORT_TABLE, 57);
conformance("seed 001: the ACP harness's exports (summary, judge)", harnessItems, EXPORT_TABLE, 55);
conformance("seed 002: SwarmSDK's events (--events)", swarmItems, EVENTS_TABLE, 141);
