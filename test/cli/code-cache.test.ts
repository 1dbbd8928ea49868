import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { type CliResult, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

/** The CLI's ES modules (dist/src/cli-main.js), which the bin uses for every command but `run`. */
const ES_MODULES_CLI = join(packageRoot(), "dist", "src", "cli-main.js");

/** A scripted run: one command that prints, then the submission. */
function config(dir: string): string {
  const say = (command: string) => ({
    role: "assistant",
    content: `\`\`\`mswea_bash_command\n${command}\n\`\`\``,
    extra: { actions: [{ command }] },
  });
  const path = join(dir, "c.json");
  writeFileSync(
    path,
    JSON.stringify({
      model: {
        model_class: "deterministic",
        outputs: [say("echo hello from the command"), say("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")],
      },
      environment: { cwd: dir },
    }),
  );
  return path;
}

/** What a run printed and the messages its trajectory holds (without times: durations printed are blanked). */
function outcome(result: CliResult, trajectory: string) {
  const messages = JSON.parse(readFileSync(trajectory, "utf8")).messages as Array<{ content: unknown }>;
  const stderr = result.stderr
    .split("\n")
    .filter((line) => !line.startsWith("swerun: code cache"))
    .join("\n");
  const stdout = result.stdout.replace(/\b\d+(?:\.\d+)? (?:ms|s|min|h)\b/g, "<time>");
  return { code: result.code, stdout, stderr, contents: messages.map((m) => m.content) };
}

describe("swerun run through the code cache (dist/src/cli-run.cjs, src/util/code-cache.ts)", () => {
  it("writes the cache on the first run, uses it on the next, and a corrupt one is rewritten: same run each time", async () => {
    const dir = tempDir();
    const cache = join(dir, "cache");
    const trajectory = join(dir, "t.traj.json");
    const args = ["run", "-c", "textbased", "-c", config(dir), "-t", "greet", "-y", "--exit-immediately"];
    const run = async () => {
      const result = await runCli([...args, "-o", trajectory], {
        env: { SWERUN_CACHE_DIR: cache, SWERUN_DEBUG: "1" },
      });
      const state = /^swerun: code cache (\w+): (.+)$/m.exec(result.stderr);
      return { state: state?.[1], file: state?.[2], outcome: outcome(result, trajectory) };
    };

    const first = await run();
    expect(first.state).toBe("absent");
    expect(first.outcome.code).toBe(0);
    expect(first.outcome.contents.at(-1)).toBeTypeOf("string");
    expect(JSON.stringify(first.outcome.contents)).toContain("hello from the command");
    const file = first.file as string;
    expect(file.startsWith(join(cache, "code", "cli-run-"))).toBe(true);
    expect(readdirSync(join(cache, "code"))).toEqual([file.slice(join(cache, "code").length + 1)]);
    const written = statSync(file);
    expect(written.size).toBeGreaterThan(100_000);

    const second = await run();
    expect(second.state).toBe("used");
    expect(second.file).toBe(file);
    expect(second.outcome).toEqual(first.outcome);
    // Used, not rewritten.
    expect(statSync(file).mtimeMs).toBe(written.mtimeMs);

    // The same run through the ES modules, which have no code cache.
    const plain = spawnSync(process.execPath, [ES_MODULES_CLI, ...args, "-o", trajectory], {
      cwd: packageRoot(),
      env: { ...process.env, NO_COLOR: "1", SWERUN_CACHE_DIR: cache },
      encoding: "utf8",
    });
    expect(
      outcome({ code: plain.status, signal: null, stdout: plain.stdout, stderr: plain.stderr }, trajectory),
    ).toEqual(first.outcome);

    // A corrupt cache (or one from another V8): V8 rejects it, the run compiles from source and rewrites it.
    const garbage = Buffer.alloc(written.size, 0x5a);
    writeFileSync(file, garbage);
    const third = await run();
    expect(third.state).toBe("rejected");
    expect(third.outcome).toEqual(first.outcome);
    expect(readFileSync(file).equals(garbage)).toBe(false);
    const fourth = await run();
    expect(fourth.state).toBe("used");
    expect(fourth.outcome).toEqual(first.outcome);

    // An empty one (a write cut short) too.
    writeFileSync(file, "");
    const fifth = await run();
    expect(fifth.state).toBe("rejected");
    expect(fifth.outcome).toEqual(first.outcome);
    expect(statSync(file).size).toBeGreaterThan(100_000);
  });
});
