import { randomBytes } from "node:crypto";
import { CONTAINER_PATCH } from "./harness-constants.js";

/** The harness's ways to apply a patch in /testbed, tried in order. */
export const APPLY_COMMANDS = [
  "git apply --verbose",
  "git apply --verbose --3way",
  "git apply --verbose --reject",
  "patch --batch --forward --fuzz=5 -p1 -i",
] as const;

/** What the harness runs between two attempts, so a partial apply (`--reject`) does not spoil the next one. */
export const RESET_COMMAND = "git checkout -- . ; git clean -fd";

/** One command the script ran, its merged output and exit status. */
export interface ApplyStep {
  command: string;
  output: string;
  exitCode: number;
}

/** What the patch script found: each attempt, the reverse check (when all failed), and `git diff` afterwards. */
export interface ApplyOutcome {
  attempts: ApplyStep[];
  reverseCheck?: ApplyStep;
  applied: boolean;
  diffBefore: string;
}

/**
 * One bash script (a single exec in the container, in /testbed) that does the harness's patch steps: each
 * apply command on /tmp/patch.diff until one succeeds, resetting the tree before every retry; when all
 * failed, `git apply --check --reverse` (a patch already in the tree counts as applied); then the
 * `git diff` the harness logs before the tests. Each step's output ends with a line holding `token`.
 */
export function applyScript(token: string): string {
  const lines = [`step() { printf '\\n${token} %s %s\\n' "$1" "$2"; }`, "applied=0"];
  APPLY_COMMANDS.forEach((command, index) => {
    const reset = index > 0 ? `{ /bin/bash -c '${RESET_COMMAND}'; } >/dev/null 2>&1; ` : "";
    lines.push(
      `if [ $applied = 0 ]; then ${reset}${command} ${CONTAINER_PATCH} 2>&1; code=$?; step ${index} $code; [ $code = 0 ] && applied=1; fi`,
    );
  });
  lines.push(
    `if [ $applied = 0 ]; then git apply --check --reverse ${CONTAINER_PATCH} 2>&1; step R $?; fi`,
    "git -c core.fileMode=false diff 2>&1; step D $?",
  );
  return lines.join("\n");
}

export function newToken(): string {
  return `@@swerun-${randomBytes(8).toString("hex")}@@`;
}

/** Reads the script's output back into its steps. */
export function parseApplyOutput(output: string, token: string): ApplyOutcome {
  const outcome: ApplyOutcome = { attempts: [], applied: false, diffBefore: "" };
  const marker = new RegExp(`\\n${token} (\\w+) (-?\\d+)\\n`, "g");
  let start = 0;
  for (const match of output.matchAll(marker)) {
    const text = output.slice(start, match.index);
    start = (match.index ?? 0) + match[0].length;
    const [, step = "", code = "1"] = match;
    const exitCode = Number(code);
    if (step === "D") outcome.diffBefore = text.trim();
    else if (step === "R") {
      outcome.reverseCheck = {
        command: `git apply --check --reverse ${CONTAINER_PATCH}`,
        output: text,
        exitCode,
      };
      if (exitCode === 0) outcome.applied = true;
    } else {
      const command = `${APPLY_COMMANDS[Number(step)] ?? step} ${CONTAINER_PATCH}`;
      outcome.attempts.push({ command, output: text, exitCode });
      if (exitCode === 0) outcome.applied = true;
    }
  }
  return outcome;
}
