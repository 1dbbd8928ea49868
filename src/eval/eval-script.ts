import { EXIT_CODE_VARIABLE, MARKERS } from "./harness-constants.js";
import { pyStrip } from "./log-parsers/python-text.js";

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
