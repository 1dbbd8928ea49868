import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TemplateError } from "../../src/templates/render.js";
import { tempDir } from "../helpers/tmp.js";
import {
  CASES,
  CORPUS,
  compareInfo,
  comparePairs,
  expectedError,
  expectedTrajectory,
  runCase,
  typedJson,
} from "./corpus.js";

describe("conversation parity with mini-swe-agent 2.4.6 (test/fixtures/parity)", () => {
  it("has the corpus", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(27);
  });

  for (const parity of CASES.filter((c) => !c.fails)) {
    it(`${parity.name}: the same messages and info, floats as floats`, async () => {
      const expected = typedJson(readFileSync(join(CORPUS, "expected", `${parity.name}.traj.json`), "utf8"));
      const path = join(tempDir("swerun-parity-out-"), `${parity.name}.traj.json`);
      await runCase(parity, tempDir("swerun-parity-"), tempDir("swerun-parity-config-"), path);
      const actual = typedJson(readFileSync(path, "utf8"));
      const pairs = comparePairs(expected, actual.messages);
      expect(pairs.actual).toEqual(pairs.expected);
      const info = compareInfo(expected, actual);
      expect(info.actual).toEqual(info.expected);
      expect(expectedTrajectory(parity.name).info.exit_status).toBe(actual.info.exit_status);
    });
  }

  for (const parity of CASES.filter((c) => c.fails)) {
    it(`${parity.name}: fails where mini-swe-agent fails, naming the template, line and variable`, async () => {
      const expected = expectedError(parity.name);
      const error = await runCase(parity, tempDir("swerun-parity-"), tempDir("swerun-parity-config-")).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TemplateError);
      expect(expected.exception).toBe("UndefinedError");
      expect((error as TemplateError).message).toBe(
        `template "instance_template" at line ${expected.template_line}: ${expected.message}`,
      );
    });
  }
});
