import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localEnvironmentSchema } from "../../src/config/schema.js";
import { LocalEnvironment } from "../../src/environments/local.js";
import { closeCommandRunner } from "../../src/environments/spawner.js";
import { packageRoot } from "../../src/util/package-root.js";
import { alive } from "../helpers/processes.js";
import { tempDir } from "../helpers/tmp.js";

const BASH = { local_interpreter: ["bash", "-c"] };

function env(overrides: Record<string, unknown> = {}) {
  return new LocalEnvironment(localEnvironmentSchema.parse({ environment_class: "local", ...overrides }));
}

/** Whether a process still runs; a killed child that nobody reaped yet (a zombie) does not count. */
/** The programs that start commands: Python's spawner, Perl's, and none (swerun spawns them itself). */
const SPAWNERS = [
  ["python", "python3"],
  ["perl", "perl"],
  ["none", "node"],
] as const;

describe.each(SPAWNERS)("LocalEnvironment (command spawner: %s)", (kind, parentName) => {
  beforeAll(() => {
    process.env.SWERUN_COMMAND_SPAWNER = kind;
    closeCommandRunner();
  });
  afterAll(() => {
    delete process.env.SWERUN_COMMAND_SPAWNER;
    closeCommandRunner();
  });

  it("runs its commands from the spawner it names", async () => {
    const result = await env().execute({ command: "cat /proc/$PPID/comm" });
    expect(result.output.trim()).toBe(parentName);
  });

  it("returns output and exit code", async () => {
    const result = await env().execute({ command: "echo hello; exit 3" });
    expect(result).toMatchObject({ output: "hello\n", returncode: 3, exception_info: "" });
  });

  it("merges stdout and stderr in the order written", async () => {
    const result = await env().execute({ command: "echo 1; echo 2 >&2; echo 3; echo 4 >&2" });
    expect(result.output).toBe("1\n2\n3\n4\n");
  });

  it("runs in cwd with env added to the process environment", async () => {
    const dir = tempDir();
    process.env.SWERUN_TEST_INHERITED = "inherited";
    const result = await env({ cwd: dir, env: { GREETING: "hi", NUMBER: 5 } }).execute({
      command: 'pwd; echo "$GREETING $NUMBER $SWERUN_TEST_INHERITED"',
    });
    delete process.env.SWERUN_TEST_INHERITED;
    expect(result.output).toBe(`${dir}\nhi 5 inherited\n`);
  });

  it("captures the shell's own message about a command that does not parse", async () => {
    const result = await env(BASH).execute({ command: "echo never; if" });
    expect(result.returncode).toBe(2);
    expect(result.output).toMatch(/^bash: -c: line \d+: syntax error/);
  });

  it("keeps the shell's line numbers in its messages", async () => {
    const result = await env(BASH).execute({ command: "true\nno-such-command-swerun" });
    expect(result.output).toBe("bash: line 2: no-such-command-swerun: command not found\n");
    const sh = await env().execute({ command: "true\nno-such-command-swerun" });
    expect(sh.output).toMatch(/^\/bin\/sh: 2: .*no-such-command-swerun/);
  });

  it("merges in order under an interpreter that is not a POSIX shell too", async () => {
    const result = await env({ local_interpreter: ["env", "bash", "-c"] }).execute({
      command: "echo 1; echo 2 >&2; echo 3",
    });
    expect(result.output).toBe("1\n2\n3\n");
  });

  it("runs /bin/sh -c as mini-swe-agent does, or local_interpreter", async () => {
    const command = 'echo "$0"';
    expect((await env().execute({ command })).output).toBe("/bin/sh\n");
    expect((await env({ local_interpreter: ["sh", "-c"] }).execute({ command })).output).toBe("sh\n");
  });

  it("reads output as Python's text mode does: CRLF and a lone CR become LF", async () => {
    const result = await env().execute({ command: "printf 'a\\r\\nb\\rc\\r\\r\\nd'" });
    expect(result.output).toBe("a\nb\nc\n\nd");
  });

  it("kills the whole process group on timeout and keeps the partial output", async () => {
    const dir = tempDir();
    const pidFile = join(dir, "pid");
    const result = await env({ timeout: 1 }).execute({
      command: `sleep 300 & echo $! > ${pidFile}; echo started; wait`,
    });
    expect(result.returncode).toBe(-1);
    expect(result.output).toBe("started\n");
    expect(result.exception_info).toMatch(/timed out after 1 seconds/);
    const pid = Number(execFileSync("cat", [pidFile]).toString());
    expect(alive(pid)).toBe(false);
  });

  it("ends a timed-out command on time when processes that left its group hold the output", async () => {
    const dir = tempDir();
    // One leaves the group and session (setsid) but stays in the tree; one double-forks out of the tree too.
    const result = await env({ timeout: 1, cwd: dir }).execute({
      command:
        "setsid sh -c 'echo $$ > tree.pid; exec sleep 600' & " +
        "(setsid sh -c 'echo $$ > orphan.pid; exec sleep 600' &); " +
        "while [ ! -s tree.pid ] || [ ! -s orphan.pid ]; do sleep 0.01; done; echo started; wait",
    });
    expect(result.returncode).toBe(-1);
    expect(result.output).toBe("started\n");
    expect(result.exception_info).toMatch(/timed out after 1 seconds/);
    for (const name of ["tree.pid", "orphan.pid"])
      expect(alive(Number(readFileSync(join(dir, name), "utf8")))).toBe(false);
  });

  it("kills what its commands left running when it closes, and only that", async () => {
    const dir = tempDir();
    const started = async (environment: LocalEnvironment, command: string, file: string) => {
      await environment.execute({
        command: `${command}\nwhile [ ! -s ${file} ]; do sleep 0.01; done`,
      });
      return Number(readFileSync(join(dir, file), "utf8"));
    };
    const first = env({ cwd: dir });
    const other = env({ cwd: dir });
    const pids = [
      await started(first, "nohup sh -c 'echo $$ > a; exec sleep 600' >/dev/null 2>&1 &", "a"),
      await started(first, "setsid sh -c 'echo $$ > b; exec sleep 600' >/dev/null 2>&1 </dev/null &", "b"),
      await started(first, "(setsid sh -c 'echo $$ > c; exec sleep 600' >/dev/null 2>&1 </dev/null &)", "c"),
    ];
    const others = await started(other, "nohup sh -c 'echo $$ > d; exec sleep 600' >/dev/null 2>&1 &", "d");
    for (const pid of [...pids, others]) expect(alive(pid)).toBe(true);
    await first.close();
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(alive(others)).toBe(true);
    await other.close();
    expect(alive(others)).toBe(false);
  });

  it("kills what its commands started when the process that ran them dies by SIGKILL", async () => {
    const dir = tempDir();
    const local = join(packageRoot(), "dist", "src", "environments", "local.js");
    // A running command with a child, one that cleared its environment (found by its process group), one
    // that left its group, one that double-forked out of its tree, and one that cleared its environment in
    // the group a process that left leads (found by that group).
    const command =
      "echo $PPID > parent.pid; sleep 600 & echo $! > child.pid; env -i sleep 600 & echo $! > bare.pid; " +
      "setsid sh -c 'echo $$ > session.pid; exec sleep 600' & " +
      "(setsid sh -c 'echo $$ > orphan.pid; exec sleep 600' &); " +
      "setsid sh -c 'env -i sleep 600 & echo $! > nested.pid; exec sleep 600' & sleep 600";
    const script = `const { LocalEnvironment } = await import(${JSON.stringify(local)});
      new LocalEnvironment({ cwd: ${JSON.stringify(dir)}, timeout: 600, env: {} }).execute({ command: ${JSON.stringify(command)} });`;
    const owner = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: "ignore",
      env: { ...process.env, SWERUN_COMMAND_SPAWNER: kind },
    });
    const files = ["child.pid", "bare.pid", "session.pid", "orphan.pid", "nested.pid"].map((name) =>
      join(dir, name),
    );
    const deadline = Date.now() + 20_000;
    while (
      !files.every((file) => existsSync(file) && readFileSync(file, "utf8").trim()) &&
      Date.now() < deadline
    )
      await new Promise((resolve) => setTimeout(resolve, 20));
    const pids = files.map((file) => Number(readFileSync(file, "utf8")));
    for (const pid of pids) expect(alive(pid)).toBe(true);
    const parent = readFileSync(join(dir, "parent.pid"), "utf8").trim();
    expect(readFileSync(`/proc/${parent}/comm`, "utf8").trim()).toBe(parentName);
    owner.kill("SIGKILL");
    const gone = Date.now() + 10_000;
    while (pids.some(alive) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pids.filter(alive)).toEqual([]);
  });

  it("runs each command as the leader of a process group of its own, with default signal dispositions", async () => {
    const result = await env().execute({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax
      command: 'read -r stat < /proc/$$/stat; set -- ${stat##*) }; echo "$$ $3"; grep SigIgn /proc/$$/status',
    });
    const [pid, group] = result.output.split("\n")[0]?.split(" ") ?? [];
    expect(group).toBe(pid);
    // glibc's posix_spawn leaves its own two internal signals (32 and 33, below SIGRTMIN) ignored in the
    // program it starts, as for every program that uses it; no signal a program can name is.
    const ignored = BigInt(`0x${/SigIgn:\s+([0-9a-f]+)/.exec(result.output)?.[1]}`);
    expect(ignored).toBe(kind === "python" ? 0x180000000n : 0n);
  });

  it("gives a command exactly its environment and stdin from /dev/null", async () => {
    process.env.SWERUN_TEST_INHERITED = "a b\nc='d'";
    const result = await env({ env: { GREETING: "hi" } }).execute({
      command: "tr '\\0' '\\n' < /proc/$$/environ; readlink /proc/$$/fd/0",
    });
    const expected = { ...process.env, GREETING: "hi" };
    delete process.env.SWERUN_TEST_INHERITED;
    const lines = result.output.split("\n");
    expect(lines.at(-2)).toBe("/dev/null");
    const seen = lines.slice(0, -2).join("\n");
    expect(seen).toContain("SWERUN_TEST_INHERITED=a b\nc='d'");
    for (const [name, value] of Object.entries(expected)) expect(seen).toContain(`${name}=${value}`);
    expect(seen).toMatch(/^SWERUN_PROCESS_TAG=/m);
  });

  it("gives every command the environment of its first one (config.env over it), each its own tag", async () => {
    const local = env({ env: { GREETING: "hi" } });
    const show = "tr '\\0' '\\n' < /proc/$$/environ | sort";
    process.env.SWERUN_TEST_FIRST = "first";
    const first = (await local.execute({ command: show })).output;
    process.env.SWERUN_TEST_FIRST = "changed";
    const second = (await local.execute({ command: show })).output;
    delete process.env.SWERUN_TEST_FIRST;
    const tag = /^SWERUN_PROCESS_TAG=(.*)$/m;
    expect(tag.exec(first)?.[1]).not.toBe(tag.exec(second)?.[1]);
    expect(second.replace(tag, "")).toBe(first.replace(tag, ""));
    expect(second).toContain("SWERUN_TEST_FIRST=first\n");
    expect(second).toContain("GREETING=hi\n");
  });

  it("survives a command's kill of its own process group, and runs commands side by side", async () => {
    const local = env();
    expect((await local.execute({ command: "kill -9 0" })).returncode).toBe(-9);
    const results = await Promise.all(
      ["a", "b", "c"].map((word) => local.execute({ command: `sleep 0.2; echo ${word}` })),
    );
    expect(results.map((result) => result.output)).toEqual(["a\n", "b\n", "c\n"]);
  });

  it("stops a command when the signal aborts", async () => {
    const controller = new AbortController();
    const pending = env().execute({ command: "echo go; sleep 300" }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    const result = await pending;
    expect(result.returncode).toBe(-1);
    expect(result.exception_info).toMatch(/interrupted by the user/);
  });

  it("decodes non-UTF-8 output with replacement characters", async () => {
    const result = await env().execute({ command: "printf 'a\\377b\\303\\050c'" });
    expect(result.output).toBe("a\uFFFDb\uFFFD(c");
  });

  it("cuts huge output in the middle and records it", async () => {
    const result = await env({ max_output_bytes: 1000 }).execute({
      command: "printf 'HEAD'; head -c 100000 /dev/zero | tr '\\0' x; printf 'TAIL'",
    });
    expect(result.output.startsWith("HEADxxx")).toBe(true);
    expect(result.output.endsWith("xxxTAIL")).toBe(true);
    expect(result.output).toMatch(
      /<swerun: 99008 bytes of output elided from the middle \(100008 bytes in all\)>/,
    );
    expect(result.extra?.truncated).toEqual({ total_bytes: 100008, elided_bytes: 99008 });
  });

  it("reports a missing working directory as data", async () => {
    const result = await env({ cwd: "/nonexistent/swerun" }).execute({ command: "true" });
    expect(result.returncode).toBe(-1);
    expect(result.exception_info).toMatch(/Could not run the command/);
  });

  it("reports death by signal as a negative exit code", async () => {
    const result = await env().execute({ command: "kill -TERM $$" });
    expect(result.returncode).toBe(-15);
  });

  it("exposes config, platform fields and process variables to templates", () => {
    const vars = env({ cwd: "/tmp" }).templateVars();
    expect(vars).toMatchObject({ cwd: "/tmp", system: "Linux", PATH: process.env.PATH });
    for (const key of ["node", "release", "version", "machine"]) expect(typeof vars[key]).toBe("string");
  });

  it("writes a file where asked", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "a.txt"), "content");
    const result = await env({ cwd: dir }).execute({ command: "cat a.txt" });
    expect(result.output).toBe("content");
  });
});

describe("LocalEnvironment's command spawner", () => {
  afterAll(() => {
    delete process.env.SWERUN_COMMAND_SPAWNER;
    closeCommandRunner();
  });

  it("runs commands itself when the spawner's program ends before it answers, and does not start it again", async () => {
    // A python3 too old (or broken) to run the spawner: it exits at once.
    const dir = tempDir();
    const fake = join(dir, "python3");
    writeFileSync(fake, `#!/bin/sh\necho started >> ${JSON.stringify(join(dir, "starts"))}\nexit 3\n`, {
      mode: 0o755,
    });
    process.env.SWERUN_COMMAND_SPAWNER = fake;
    closeCommandRunner();
    const local = env();
    for (let i = 0; i < 3; i++) {
      const result = await local.execute({ command: "echo ran; cat /proc/$PPID/comm" });
      expect(result).toMatchObject({ output: "ran\nnode\n", returncode: 0 });
    }
    expect(readFileSync(join(dir, "starts"), "utf8")).toBe("started\n");
  });
});
