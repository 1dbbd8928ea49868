import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bubblewrapEnvironmentSchema, DEFAULT_WRAPPER_ARGS } from "../../src/config/bubblewrap.js";
import { BubblewrapEnvironment } from "../../src/environments/bubblewrap.js";
import { createEnvironment } from "../../src/environments/index.js";
import { UserError } from "../../src/errors.js";
import { packageRoot } from "../../src/util/package-root.js";
import { clearSecretsForTests } from "../../src/util/secrets.js";
import { alive, procStat } from "../helpers/processes.js";
import { tempDir } from "../helpers/tmp.js";

/** What mini-swe-agent 2.4.6's bubblewrap environment did (scripts/gen-bubblewrap-fixtures.py). */
interface FixtureCase {
  name: string;
  command: string;
  config?: Record<string, unknown>;
  files?: Record<string, string>;
  host_env?: Record<string, string>;
  cwd?: string;
  expected: { output: string; returncode: number; exception_info: string; extra?: Record<string, string> };
  after?: Record<string, string>;
  swerun?: "start" | "message";
}
const FIXTURE = JSON.parse(
  readFileSync(join(packageRoot(), "test", "fixtures", "bubblewrap", "cases.json"), "utf8"),
) as { defaults: { environment: Record<string, unknown>; environment_type: string }; cases: FixtureCase[] };

function config(overrides: Record<string, unknown> = {}) {
  return bubblewrapEnvironmentSchema.parse({ environment_class: "bubblewrap", ...overrides });
}

const opened: BubblewrapEnvironment[] = [];
/** A started environment (its sandbox checked, as `createEnvironment` does), closed after the test. */
async function env(overrides: Record<string, unknown> = {}): Promise<BubblewrapEnvironment> {
  const environment = await BubblewrapEnvironment.create(config(overrides));
  opened.push(environment);
  return environment;
}
afterEach(async () => {
  for (const environment of opened.splice(0)) await environment.close();
});

/** The files under a directory, path -> text. */
function tree(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files[relative(root, path)] = readFileSync(path, "utf8");
    }
  };
  walk(root);
  return files;
}

async function waitForFiles(files: string[]): Promise<number[]> {
  const deadline = Date.now() + 20_000;
  while (
    !files.every((file) => existsSync(file) && readFileSync(file, "utf8").trim()) &&
    Date.now() < deadline
  )
    await new Promise((resolve) => setTimeout(resolve, 20));
  return files.map((file) => Number(readFileSync(file, "utf8")));
}

describe("BubblewrapEnvironment: mini-swe-agent's cases (test/fixtures/bubblewrap)", () => {
  it("has mini-swe-agent's keys, defaults and environment_type", async () => {
    const recorded = (await env()).serialize();
    const { max_output_bytes, forward_env, environment_class, ...mini } = recorded.environment;
    expect({ environment: mini, environment_type: recorded.environment_type }).toEqual(FIXTURE.defaults);
    expect({ max_output_bytes, forward_env, environment_class }).toEqual({
      max_output_bytes: 1_048_576,
      forward_env: [],
      environment_class: "bubblewrap",
    });
  });

  for (const fixture of FIXTURE.cases.filter((c) => c.swerun !== "start")) {
    it(`${fixture.name}: the same output, exit code and working copy`, async () => {
      const dir = tempDir("swerun-bwrap-case-");
      for (const [name, text] of Object.entries(fixture.files ?? {})) writeFileSync(join(dir, name), text);
      const cwd = (fixture.cwd ?? "{cwd}") === "{cwd}" ? dir : fixture.cwd;
      const saved = Object.keys(fixture.host_env ?? {}).map((name) => [name, process.env[name]] as const);
      Object.assign(process.env, fixture.host_env);
      let result: Awaited<ReturnType<BubblewrapEnvironment["execute"]>>;
      try {
        const environment = await env({ cwd, ...fixture.config });
        result = await environment.execute({ command: fixture.command });
      } finally {
        for (const [name, value] of saved) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
      const expected = JSON.parse(JSON.stringify(fixture.expected).replaceAll("{cwd}", dir));
      expect({ output: result.output, returncode: result.returncode }).toEqual({
        output: expected.output,
        returncode: expected.returncode,
      });
      expect(result.extra?.exception_type).toBe(expected.extra?.exception_type);
      if (fixture.swerun === "message") {
        // swerun's words, as the local environment's (mini-swe-agent's name bwrap's whole argument list).
        expect(result.exception_info).toBe(
          `An error occurred while executing the command: Command '${fixture.command}' timed out after 1 seconds`,
        );
      } else {
        expect(result.exception_info).toBe(expected.exception_info);
      }
      if (fixture.after) expect(tree(dir)).toEqual(fixture.after);
    });
  }

  for (const fixture of FIXTURE.cases.filter((c) => c.swerun === "start")) {
    it(`${fixture.name}: refused before the run starts, with bwrap's own words`, async () => {
      const error = await BubblewrapEnvironment.create(config(fixture.config)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UserError);
      expect((error as Error).message).toBe(
        `environment.wrapper_args: bwrap cannot start a sandbox: ${fixture.expected.output.trim()}`,
      );
    });
  }
});

describe("BubblewrapEnvironment", () => {
  it("runs commands inside the sandbox: only the working directory is written on the host", async () => {
    const dir = tempDir();
    const probe = `swerun-bwrap-probe-${process.pid}`;
    const result = await (await env({ cwd: dir })).execute({
      command: `echo kept > ${probe}; echo gone > /tmp/${probe}; touch /${probe}; touch /usr/${probe}; echo $?`,
    });
    expect(result.output).toBe(`touch: cannot touch '/usr/${probe}': Read-only file system\n1\n`);
    expect(readFileSync(join(dir, probe), "utf8")).toBe("kept\n");
    for (const path of [join(tmpdir(), probe), `/${probe}`, `/usr/${probe}`])
      expect(existsSync(path)).toBe(false);
  });

  it("works in a fresh temporary directory when cwd is unset, and removes it on close", async () => {
    const environment = await env();
    const result = await environment.execute({ command: "pwd; ls -A | wc -l; echo x > made" });
    const [cwd = "", count] = result.output.trim().split("\n");
    expect(dirname(cwd)).toBe(tmpdir());
    expect(cwd).toMatch(/swerun-bwrap-/);
    expect(count).toBe("0");
    expect(readFileSync(join(cwd, "made"), "utf8")).toBe("x\n");
    expect((await environment.execute({ command: "cat made" })).output).toBe("x\n");
    await environment.close();
    expect(existsSync(cwd)).toBe(false);
  });

  it("keeps a working directory it was given", async () => {
    const dir = tempDir();
    const environment = await env({ cwd: dir });
    await environment.execute({ command: "echo x > kept" });
    await environment.close();
    expect(readFileSync(join(dir, "kept"), "utf8")).toBe("x\n");
  });

  it("runs in the cwd a call gives", async () => {
    const [first, second] = [tempDir(), tempDir()];
    const result = await (await env({ cwd: first })).execute({ command: "pwd" }, { cwd: second });
    expect(result.output).toBe(`${second}\n`);
  });

  it("kills the command's processes on timeout and keeps the partial output", async () => {
    const dir = tempDir();
    // A child, one that left the group and session (setsid), one that double-forked out of the tree.
    const result = await (await env({ cwd: dir, timeout: 1 })).execute({
      command:
        "sleep 300 & echo $! > child.pid; setsid sh -c 'echo $$ > session.pid; exec sleep 600' & " +
        "(setsid sh -c 'echo $$ > orphan.pid; exec sleep 600' &); " +
        "while [ ! -s session.pid ] || [ ! -s orphan.pid ]; do sleep 0.01; done; echo started; wait",
    });
    expect(result.returncode).toBe(-1);
    expect(result.output).toBe("started\n");
    expect(result.exception_info).toMatch(/timed out after 1 seconds/);
    expect(result.extra?.exception_type).toBe("TimeoutExpired");
    for (const name of ["child.pid", "session.pid", "orphan.pid"])
      expect(alive(Number(readFileSync(join(dir, name), "utf8")))).toBe(false);
  });

  it("honours a call's timeout", async () => {
    const result = await (await env({ timeout: 60 })).execute({ command: "sleep 30" }, { timeout: 1 });
    expect(result.exception_info).toMatch(/Command 'sleep 30' timed out after 1 seconds/);
  });

  it("stops a command when the signal aborts", async () => {
    const controller = new AbortController();
    const pending = (await env()).execute({ command: "echo go; sleep 300" }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    const result = await pending;
    expect(result.returncode).toBe(-1);
    expect(result.exception_info).toMatch(/interrupted by the user/);
  });

  it("kills what its commands left running when it closes, even under --clearenv", async () => {
    const dir = tempDir();
    const environment = await env({ cwd: dir, wrapper_args: ["--clearenv", ...DEFAULT_WRAPPER_ARGS] });
    await environment.execute({
      command: "(setsid sh -c 'echo $$ > daemon.pid; exec sleep 600' >/dev/null 2>&1 </dev/null &)",
    });
    const [pid = 0] = await waitForFiles([join(dir, "daemon.pid")]);
    expect(alive(pid)).toBe(true);
    await environment.close();
    expect(alive(pid)).toBe(false);
  });

  it("takes its sandboxed commands with it when the process that ran them dies by SIGKILL", async () => {
    const dir = tempDir();
    const module = join(packageRoot(), "dist", "src", "environments", "bubblewrap.js");
    const schema = join(packageRoot(), "dist", "src", "config", "bubblewrap.js");
    const command =
      "sleep 600 & echo $! > child.pid; setsid sh -c 'echo $$ > session.pid; exec sleep 600' & " +
      "(setsid sh -c 'echo $$ > orphan.pid; exec sleep 600' &); echo $$ > shell.pid; sleep 600";
    const script = `const { BubblewrapEnvironment } = await import(${JSON.stringify(module)});
      const { bubblewrapEnvironmentSchema } = await import(${JSON.stringify(schema)});
      const config = bubblewrapEnvironmentSchema.parse({ environment_class: "bubblewrap", cwd: ${JSON.stringify(dir)}, timeout: 600 });
      (await BubblewrapEnvironment.create(config)).execute({ command: ${JSON.stringify(command)} });`;
    const owner = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "ignore" });
    const pids = await waitForFiles(
      ["child.pid", "session.pid", "orphan.pid", "shell.pid"].map((name) => join(dir, name)),
    );
    for (const pid of pids) expect(alive(pid)).toBe(true);
    owner.kill("SIGKILL");
    const gone = Date.now() + 10_000;
    while (pids.some(alive) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pids.filter(alive)).toEqual([]);
  });

  it("ends the sandboxed command when bwrap itself dies (--die-with-parent)", async () => {
    const dir = tempDir();
    const pending = (await env({ cwd: dir })).execute({ command: "echo $$ > shell.pid; exec sleep 600" });
    const [shell = 0] = await waitForFiles([join(dir, "shell.pid")]);
    const bwrap = Number(procStat(shell)?.[1]);
    expect(readFileSync(`/proc/${bwrap}/cmdline`, "utf8").split("\0")[0]).toMatch(/bwrap$/);
    process.kill(bwrap, "SIGKILL");
    const result = await pending;
    expect(result.returncode).toBe(-9);
    // The kernel sends the parent-death signal as bwrap goes; the sandboxed shell ends just after.
    const gone = Date.now() + 10_000;
    while (alive(shell) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive(shell)).toBe(false);
  });

  it("sets env and forward_env in the sandbox (env wins), also under --clearenv", async () => {
    process.env.SWERUN_BWRAP_FORWARDED = "forwarded-value";
    process.env.SWERUN_BWRAP_BOTH = "from-host";
    try {
      const keys = {
        env: { SWERUN_BWRAP_BOTH: "from-env", N: 5 },
        forward_env: ["SWERUN_BWRAP_FORWARDED", "SWERUN_BWRAP_BOTH", "SWERUN_BWRAP_UNSET"],
      };
      const command =
        'echo "$SWERUN_BWRAP_FORWARDED|$SWERUN_BWRAP_BOTH|$N|$(printenv SWERUN_BWRAP_UNSET || echo unset)|$HOME"';
      const inherited = await (await env(keys)).execute({ command });
      // A forwarded value is a secret: the environment hands its output over redacted.
      expect(inherited.output).toBe(`[REDACTED]|from-env|5|unset|${process.env.HOME}\n`);
      const clear = ["--clearenv", ...DEFAULT_WRAPPER_ARGS];
      const cleared = await (await env({ ...keys, wrapper_args: clear })).execute({ command });
      expect(cleared.output).toBe("[REDACTED]|from-env|5|unset|\n");
    } finally {
      delete process.env.SWERUN_BWRAP_FORWARDED;
      delete process.env.SWERUN_BWRAP_BOTH;
    }
  });

  it("treats forwarded values as secrets and records only their names", async () => {
    clearSecretsForTests();
    process.env.SWERUN_BWRAP_TOKEN_VALUE = "bwrap-secret-7f3a9c";
    try {
      const environment = await env({ forward_env: ["SWERUN_BWRAP_TOKEN_VALUE"] });
      const result = await environment.execute({ command: 'echo "$SWERUN_BWRAP_TOKEN_VALUE"' });
      expect(result.output).toBe("[REDACTED]\n");
      expect(JSON.stringify(environment.serialize())).not.toContain("bwrap-secret-7f3a9c");
    } finally {
      delete process.env.SWERUN_BWRAP_TOKEN_VALUE;
      clearSecretsForTests();
    }
  });

  it("cuts huge output in the middle and records it", async () => {
    const result = await (await env({ max_output_bytes: 1000 })).execute({
      command: "printf 'HEAD'; head -c 100000 /dev/zero | tr '\\0' x; printf 'TAIL'",
    });
    expect(result.output.startsWith("HEADxxx")).toBe(true);
    expect(result.output.endsWith("xxxTAIL")).toBe(true);
    expect(result.extra?.truncated).toEqual({ total_bytes: 100008, elided_bytes: 99008 });
  });

  it("gives templates its config and the platform fields, not the process environment", async () => {
    const vars = (await env({ cwd: "/tmp" })).templateVars();
    expect(vars).toMatchObject({ cwd: "/tmp", executable: "bwrap", system: "Linux", timeout: 30 });
    expect(vars.PATH).toBeUndefined();
  });

  it("is made by createEnvironment from its config", async () => {
    const environment = await createEnvironment(config(), { runId: "test" });
    opened.push(environment as BubblewrapEnvironment);
    expect(environment).toBeInstanceOf(BubblewrapEnvironment);
    expect((await environment.execute({ command: "echo ok" })).output).toBe("ok\n");
  });

  it("refuses a missing bwrap before anything runs, saying how to install it", async () => {
    const error = await BubblewrapEnvironment.create(config({ executable: "/nonexistent/bwrap" })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe(
      'environment.executable: "/nonexistent/bwrap" not found: install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap) or set environment.executable to its path',
    );
  });

  it("takes the executable from SWERUN_BUBBLEWRAP_EXECUTABLE, else MSWEA_BUBBLEWRAP_EXECUTABLE", () => {
    const saved = { ...process.env };
    try {
      process.env.MSWEA_BUBBLEWRAP_EXECUTABLE = "/opt/mini/bwrap";
      expect(config().executable).toBe("/opt/mini/bwrap");
      process.env.SWERUN_BUBBLEWRAP_EXECUTABLE = "/opt/swerun/bwrap";
      expect(config().executable).toBe("/opt/swerun/bwrap");
      expect(config({ executable: "/usr/bin/bwrap" }).executable).toBe("/usr/bin/bwrap");
    } finally {
      delete process.env.MSWEA_BUBBLEWRAP_EXECUTABLE;
      delete process.env.SWERUN_BUBBLEWRAP_EXECUTABLE;
      Object.assign(process.env, saved);
    }
  });

  it("shows nothing of the host beside the working directory, even its siblings", async () => {
    const top = tempDir();
    const dir = join(top, "checkout");
    mkdirSync(dir);
    writeFileSync(join(top, "sibling"), "host only");
    const result = await (await env({ cwd: dir })).execute({ command: "pwd && ls -A .." });
    expect(result.output).toBe(`${dir}\ncheckout\n`);
  });
});
