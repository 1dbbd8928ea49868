import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, describe, expect, it } from "vitest";
import { evalInstances } from "../../src/eval/eval-instance.js";
import { logParser } from "../../src/eval/log-parsers/registry.js";
import { instanceLanguage } from "../../src/eval/parser-language.js";
import { evalReport, readLogText } from "../../src/eval/verdict.js";
import { pythonJson } from "../../src/python/json-dumps-indent.js";
import { runCli } from "../helpers/cli.js";
import { SCRIPTED_IN_DOCKER } from "../helpers/datasets.js";
import { describeDocker, dockerFixture, swerunContainers } from "../helpers/docker.js";
import { ensureLanguageImage, LANGUAGES, LANGUAGES_DIR } from "../helpers/language-images.js";
import { tempDir } from "../helpers/tmp.js";

/** What SWE-bench 5.0.2 wrote grading the gold patches in the same images (gen-eval-fixtures.py --languages). */
const HARNESS = join(LANGUAGES_DIR, "harness");
type Row = Record<string, unknown> & { instance_id: string; image: string; patch: string };
const rows = (): Row[] => JSON.parse(readFileSync(join(LANGUAGES_DIR, "dataset.json"), "utf8")) as Row[];
const read = (path: string) => readFileSync(path, "utf8");

describe("the language instances' logs (no Docker)", () => {
  it("name their language, else the language of their parser's test runner", () => {
    expect(instanceLanguage({ language: "Go" }, "parse_log_pytest")).toBe("Go");
    expect(instanceLanguage({}, "parse_log_cargo")).toBe("Rust");
    expect(instanceLanguage({ language: "" }, "vitest")).toBe("JavaScript/TypeScript");
    expect(instanceLanguage({}, "parse_log_unknown")).toBeUndefined();
  });

  it("grade like the harness: swerun's parsers and grading on the harness's own test output", () => {
    for (const spec of evalInstances(rows() as never, "languages")) {
      const parser = logParser(spec.log_parser);
      expect(parser).toBeDefined();
      const row = rows().find((r) => r.instance_id === spec.instance_id) as Row;
      const log = readLogText(join(HARNESS, spec.instance_id, "test_output.txt"));
      const report = { [spec.instance_id]: evalReport(spec, row.patch, log, parser as never) };
      expect(pythonJson(report, 4)).toBe(read(join(HARNESS, spec.instance_id, "report.json")));
    }
  });
});

await describeDocker("Multilingual-shaped instances end to end (Go, JavaScript, Ruby)", () => {
  let docker: Docker;
  const images: Record<string, string> = {};
  beforeAll(async () => {
    ({ docker } = await dockerFixture());
    for (const language of LANGUAGES) images[language] = await ensureLanguageImage(docker, language);
  }, 600_000);

  it("swebench --eval runs the scripted agent on each, grades it, and the verdicts are the harness's", async () => {
    const dir = tempDir();
    const dataset = join(dir, "languages.json");
    writeFileSync(
      dataset,
      JSON.stringify(rows().map((row) => ({ ...row, image: images[row.image.replace(/[{}]/g, "")] }))),
    );
    const out = join(dir, `languages-${basename(dir)}`);
    const result = await runCli([
      "swebench",
      "--subset",
      dataset,
      "--eval",
      ...SCRIPTED_IN_DOCKER,
      "-w",
      "3",
      "-o",
      out,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("exit statuses: Submitted 3");
    expect(result.stdout).toContain("resolved: 3/3");
    const logs = join(out, "eval", "logs", "run_evaluation", basename(out), "deterministic__demo");
    for (const row of rows())
      expect({ id: row.instance_id, report: read(join(logs, row.instance_id, "report.json")) }).toEqual({
        id: row.instance_id,
        report: read(join(HARNESS, row.instance_id, "report.json")),
      });
    // run.json keeps each instance's language and parser beside its verdict (the view shows them).
    const run = JSON.parse(read(join(out, "run.json")));
    expect(run.eval.instances["swerun-lang__go-1"]).toEqual({
      resolved: true,
      status: "resolved",
      log_parser: "parse_log_gotest",
      language: "Go",
    });
    expect(await swerunContainers(docker, basename(out))).toEqual([]);
  }, 600_000);
});
