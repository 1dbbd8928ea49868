import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import type { Instance } from "../../src/datasets/dataset.js";
import { evalInstances } from "../../src/eval/eval-instance.js";
import { gradeInstance } from "../../src/eval/grade-instance.js";
import { startGradingContainer } from "../../src/eval/grading-container.js";
import { waitFor } from "../helpers/cli.js";
import { describeDocker, dockerFixture } from "../helpers/docker.js";
import { EVAL_FIXTURES, ensureEvalImage } from "../helpers/eval-images.js";
import { tempDir } from "../helpers/tmp.js";

const TEST_COMMAND = "python3 -m pytest -rA -p no:cacheprovider tests/test_mathx.py";

/** Grading streams the tests' output: written as it arrives, graded from the file, never held whole. */
await describeDocker("grading a large test output", () => {
  let docker: Docker;
  let image: string;
  let gold: Instance;
  let prediction: { instance_id: string; model_name_or_path: string; model_patch: string };

  beforeAll(async () => {
    ({ docker } = await dockerFixture());
    image = await ensureEvalImage(docker);
    const rows = JSON.parse(
      readFileSync(join(EVAL_FIXTURES, "dataset.json"), "utf8").replaceAll("{image}", image),
    ) as Instance[];
    gold = rows.find((row) => row.instance_id.endsWith("-gold")) as Instance;
    prediction = JSON.parse(readFileSync(join(EVAL_FIXTURES, "preds.json"), "utf8"))[gold.instance_id];
  });

  /** The gold row with `before` run ahead of its test command (stderr merged into stdout: one stream, one order). */
  const withCommand = (before: string) => {
    const script = String(gold.eval_script).replace(TEST_COMMAND, `exec 2>&1\n${before}\n${TEST_COMMAND}`);
    const [instance] = evalInstances([{ ...gold, eval_script: script }], "stream");
    if (!instance) throw new Error("no instance");
    return instance;
  };

  it("grades 24 MiB of output (CRLF, invalid UTF-8) as before: the same verdict, the output's bytes in test_output.txt once", async () => {
    const lines = 24 * 16384;
    // 64-byte lines: ASCII with CRLF, then one with a character cut by nothing and one invalid byte.
    const print = `python3 -c "import sys; w = sys.stdout.buffer.write; [w(b'PASSING-NOT-A-RESULT %08d ........................ \\xe2\\x82\\xac ok\\r\\n' % i if i % 2 else b'line %08d ........................................ \\xff bad\\n' % i) for i in range(${lines})]"`;
    const out = tempDir();
    const result = await gradeInstance({
      docker,
      instance: withCommand(print),
      prediction,
      runId: "stream-large",
      outputDir: out,
      timeoutSeconds: 300,
      network: "none",
    });
    expect(result.status, result.error).toBe("resolved");
    const expected = Array.from({ length: lines }, (_, i) =>
      i % 2
        ? `PASSING-NOT-A-RESULT ${String(i).padStart(8, "0")} ........................ € ok\r\n`
        : `line ${String(i).padStart(8, "0")} ........................................ \ufffd bad\n`,
    ).join("");
    const written = readFileSync(join(result.logDir, "test_output.txt"), "utf8");
    const at = written.indexOf(expected);
    expect(at).toBeGreaterThan(0);
    expect(written.indexOf(expected, at + 1)).toBe(-1);
    expect(written.length - expected.length).toBeLessThan(8192);
    expect(written.slice(at + expected.length)).toContain("PASSED tests/test_mathx.py::test_add");
    const report = JSON.parse(readFileSync(join(result.logDir, "report.json"), "utf8"))[gold.instance_id];
    expect(report.resolved).toBe(true);
    expect(report.tests_status.FAIL_TO_PASS.failure).toEqual([]);
  }, 300_000);

  it("writes the test output while the tests still run (not held until the exec ends)", async () => {
    const out = tempDir();
    // 6 MiB of output (more than may wait behind a stream's last bytes, which could start its token line),
    // then the tests wait until it is seen on the host (a file the test creates in the container).
    const wait = [
      `python3 -c "import sys; sys.stdout.write('STREAMED-BEFORE-THE-END ' * 256 * 1024)"`,
      "for i in $(seq 600); do [ -e /tmp/go ] && break; sleep 0.1; done",
    ].join("\n");
    const instance = withCommand(wait);
    const started = startGradingContainer({ docker, instance, runId: "stream-live", network: "none" });
    const grading = gradeInstance({
      docker,
      instance,
      prediction,
      runId: "stream-live",
      outputDir: out,
      timeoutSeconds: 120,
      network: "none",
      started,
    });
    const container = (await started).container;
    const logDir = join(out, "logs", "run_evaluation", "stream-live", "test__model", gold.instance_id);
    const written = () => {
      const files = existsSync(logDir)
        ? readdirSync(logDir).filter((name) => name.includes("test_output"))
        : [];
      return files.some((name) => statSync(join(logDir, name)).size > 6 * 1024 * 1024);
    };
    // Until the output is on the host (or 30 s); the tests end either way, so the grading ends.
    const seen = await waitFor(written, 30_000).then(
      () => true,
      () => false,
    );
    const exec = await container.exec({ Cmd: ["touch", "/tmp/go"] });
    await exec.start({ hijack: false, stdin: false });
    const result = await grading;
    expect(seen).toBe(true);
    expect(result.status, result.error).toBe("resolved");
    expect(readFileSync(join(logDir, "test_output.txt"), "utf8")).toContain("STREAMED-BEFORE-THE-END");
    expect(readdirSync(logDir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 120_000);
});
