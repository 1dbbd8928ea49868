import { pyStrip } from "../python/string.js";
import { EvalOutputSplitter } from "./eval-output-split.js";
import { EXIT_CODE_VARIABLE, MARKERS } from "./harness-constants.js";

const SHEBANG = "#!/bin/bash";
const SHELL_OPTIONS = "set -uxo pipefail";

/**
 * The `/eval.sh` the harness runs for a dataset row's `eval_script`: its own shebang and `set -uxo pipefail`
 * first (the script's copies of those two lines dropped), then the script with the test command's exit
 * status kept in SWEBENCH_TEST_EXIT_CODE just before the end-of-output marker line and echoed just after it,
 * outside the parsed region. A script without that marker is left as it is.
 */
export function makeEvalScript(evalScript: string): string {
  const lines = pyStrip(evalScript)
    .split("\n")
    .filter((line) => line !== SHEBANG && line !== SHELL_OPTIONS);
  const end = lines.findIndex((line) => line.includes(MARKERS.end));
  const body =
    end === -1
      ? lines
      : [
          ...lines.slice(0, end),
          `${EXIT_CODE_VARIABLE}=$?`,
          lines[end] ?? "",
          `echo "${MARKERS.exitCode}: $${EXIT_CODE_VARIABLE}"`,
          ...lines.slice(end + 1),
        ];
  return `${[SHEBANG, SHELL_OPTIONS, ...body].join("\n")}\n`;
}

/**
 * The command of the tests' exec: `/bin/bash /eval.sh` as the harness runs it, then, in the same exec (one
 * Docker exec fewer per grading), a line holding `token` on stdout and on stderr, and the `git diff` the
 * harness logs after the tests.
 */
export function testsExecArgv(scriptPath: string, workdir: string, token: string): string[] {
  const mark = `printf '\\n%s\\n' '${token}'`;
  return [
    "/bin/bash",
    "-c",
    `/bin/bash ${scriptPath}; ${mark}; ${mark} >&2; cd ${workdir} && git -c core.fileMode=false diff 2>&1`,
  ];
}

/**
 * Splits that exec's output into the eval script's own output (stdout and stderr merged in arrival order,
 * each stream cut at its token line: Docker does not keep the order across the two streams) and the diff
 * (undefined when the script never finished, e.g. timed out: then all the output is the script's). The
 * whole output at once; grading splits it as it arrives (EvalOutputSplitter).
 */
export function splitEvalOutput(
  chunks: Array<{ data: Buffer; stderr: boolean }>,
  token: string,
): { testOutput: Buffer; diff?: Buffer } {
  const test: Buffer[] = [];
  const splitter = new EvalOutputSplitter(token, (data) => test.push(data));
  for (const { data, stderr } of chunks) splitter.push(data, stderr);
  const { diff } = splitter.end();
  return { testOutput: Buffer.concat(test), ...(diff ? { diff } : {}) };
}
