import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { splitEvalOutput, testsExecArgv } from "../../src/eval/eval-script.js";
import { tempDir } from "../helpers/tmp.js";

const TOKEN = "@@swerun-0123456789abcdef@@";
const out = (text: string) => ({ data: Buffer.from(text), stderr: false });
const err = (text: string) => ({ data: Buffer.from(text), stderr: true });
const text = (split: ReturnType<typeof splitEvalOutput>) => ({
  testOutput: split.testOutput.toString(),
  diff: split.diff?.toString(),
});

describe("the tests' exec output, split into the eval script's output and the diff after it", () => {
  it("cuts each stream at its own token line, so stderr arriving after stdout's token stays in the test output", () => {
    const chunks = [
      out("PASSED a\n"),
      out(`\n${TOKEN}\ndiff --git a/x b/x\n`),
      err("+ bash test.sh\n"),
      err(`+ : '>>>>> End Test Output'\n\n${TOKEN.slice(0, 9)}`),
      err(`${TOKEN.slice(9)}\n`),
      out("+fixed\n"),
    ];
    expect(text(splitEvalOutput(chunks, TOKEN))).toEqual({
      testOutput: "PASSED a\n+ bash test.sh\n+ : '>>>>> End Test Output'\n",
      diff: "diff --git a/x b/x\n+fixed\n",
    });
  });

  it("keeps all the output as the script's when it never finished (a timeout: no token)", () => {
    const chunks = [err("+ bash test.sh\n"), out("still running")];
    expect(text(splitEvalOutput(chunks, TOKEN))).toEqual({
      testOutput: "+ bash test.sh\nstill running",
      diff: undefined,
    });
  });

  it("splits what the real command prints under bash: the script's output, then the repository's diff", async () => {
    const dir = tempDir();
    const work = join(dir, "work");
    mkdirSync(work);
    writeFileSync(join(work, "a.txt"), "one\n");
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: work });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "base");
    writeFileSync(
      join(dir, "eval.sh"),
      "set -x\necho to-stdout\necho to-stderr >&2\necho two >> work/a.txt\nexit 3\n",
    );
    const [bash, ...args] = testsExecArgv(join(dir, "eval.sh"), work, TOKEN);
    const child = spawn(bash as string, args, { cwd: dir });
    const chunks: Array<{ data: Buffer; stderr: boolean }> = [];
    child.stdout.on("data", (data: Buffer) => chunks.push({ data, stderr: false }));
    child.stderr.on("data", (data: Buffer) => chunks.push({ data, stderr: true }));
    await new Promise((resolve) => child.on("close", resolve));
    const split = text(splitEvalOutput(chunks, TOKEN));
    expect(split.testOutput.split("\n").sort()).toEqual(
      ["+ echo to-stdout", "to-stdout", "+ echo to-stderr", "to-stderr", "+ echo two", "+ exit 3", ""].sort(),
    );
    expect(split.diff).toMatch(/^diff --git a\/a.txt b\/a.txt\n[\s\S]*\n one\n\+two\n$/);
  });
});
