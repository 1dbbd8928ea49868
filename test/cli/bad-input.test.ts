import { spawn } from "node:child_process";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { CLI, type CliResult, pausedAt, runCli, startCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

/** Exit code 2 and exactly one line on stderr, matching `message`. */
function expectRefused(result: CliResult, message: RegExp): void {
  expect(result.stderr).toMatch(/^swerun: [^\n]+\n$/);
  expect(result.stderr).toMatch(message);
  expect(result.code).toBe(2);
}

const DEMO_LOCAL = ["--subset", "demo", "--environment-class", "local"];

/**
 * `swerun` as an unprivileged user: `nobody` when the tests run as root, else the current user. `nobody`
 * loads the built CLI through a descriptor of the package folder the test opens for it (`/proc/self/fd/3`):
 * a checkout inside a private folder (a 0700 home or temp folder) is not reachable by its path for another
 * user, the descriptor skips the folders above the checkout.
 */
function runCliUnprivileged(args: string[], cwd: string): Promise<CliResult> {
  const asRoot = process.getuid?.() === 0;
  const root = asRoot ? openSync(packageRoot(), "r") : undefined;
  const entry = root === undefined ? CLI : join("/proc/self/fd/3", relative(packageRoot(), CLI));
  const child = spawn(
    process.execPath,
    [...(root === undefined ? [] : ["--preserve-symlinks", "--preserve-symlinks-main"]), entry, ...args],
    {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: cwd, NO_COLOR: "1", SWERUN_GLOBAL_CONFIG_DIR: cwd },
      stdio: ["ignore", "pipe", "pipe", ...(root === undefined ? [] : [root])],
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    },
  );
  if (root !== undefined) closeSync(root);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

describe("bad command lines: exit code 2, one line", () => {
  it("an unknown option", async () => {
    expectRefused(await runCli(["run", "--frobnicate"]), /Unknown option `--frobnicate`/);
    expectRefused(await runCli(["swebench", "--frobnicate", "-w", "2"]), /Unknown option `--frobnicate`/);
  });

  it("a negative number of workers (and a negative cost limit)", async () => {
    const out = join(tempDir(), "out");
    expectRefused(
      await runCli(["swebench", ...DEMO_LOCAL, "-w", "-3", "-o", out]),
      /--workers: expected a whole number ≥ 1, got -3/,
    );
    expect(existsSync(out)).toBe(false);
    expectRefused(await runCli(["run", "-c", "demo", "-l", "-3", "-t", "x"]), /agent\.cost_limit/);
  });

  it("swebench -o that is a file, or lies under a file", async () => {
    const dir = tempDir();
    const file = join(dir, "taken");
    writeFileSync(file, "keep me\n");
    expectRefused(
      await runCli(["swebench", ...DEMO_LOCAL, "-o", file]),
      new RegExp(`-o ${file}: exists and is not a folder`),
    );
    expectRefused(
      await runCli(["swebench", ...DEMO_LOCAL, "-o", join(file, "sub")]),
      /-o .*taken\/sub: cannot create the folder \(a part of the path is a file\)/,
    );
    expectRefused(
      await runCli(["swebench-single", ...DEMO_LOCAL, "-i", "0", "-o", file]),
      /exists and is not a folder/,
    );
  });

  // Run as root, the CLI runs as `nobody`, also from a checkout in a private folder (runCliUnprivileged).
  it("swebench -o in a folder the user may not write in", async () => {
    const dir = tempDir();
    chmodSync(dir, 0o755);
    const locked = join(dir, "locked");
    mkdirSync(locked);
    if (process.getuid?.() !== 0) chmodSync(locked, 0o555);
    for (const target of [join(locked, "out"), locked]) {
      const result = await runCliUnprivileged(["swebench", ...DEMO_LOCAL, "-o", target], dir);
      expectRefused(
        result,
        new RegExp(`-o ${target}: cannot (create|write in) the folder \\(permission denied\\)`),
      );
    }
    expect(existsSync(join(locked, "out"))).toBe(false);
  });
});

describe("bad settings and configs: exit code 2, one line, before the model is called", () => {
  it("numeric settings that are not numbers", async () => {
    for (const [name, value] of [
      ["SWERUN_GLOBAL_COST_LIMIT", "abc"],
      ["SWERUN_GLOBAL_CALL_LIMIT", "1.5"],
      ["MSWEA_GLOBAL_COST_LIMIT", "-1"],
      ["SWERUN_MODEL_RETRY_ATTEMPTS", "abc"],
    ]) {
      const out = join(tempDir(), "x.traj.json");
      const result = await runCli(["run", "-c", "demo", "--yolo", "-t", "x", "-o", out], {
        env: { [name as string]: value as string },
      });
      expectRefused(result, new RegExp(`${name} \\(from environment\\): expected .*, got "${value}"`));
      expect(existsSync(out)).toBe(false);
      const batch = await runCli(["swebench", ...DEMO_LOCAL, "-o", join(tempDir(), "b")], {
        env: { [name as string]: value as string },
      });
      expectRefused(batch, new RegExp(`${name} \\(from environment\\)`));
    }
  });

  it("a config file that is not valid UTF-8, naming the file and the byte offset", async () => {
    const dir = tempDir();
    const config = join(dir, "latin1.yaml");
    writeFileSync(
      config,
      Buffer.concat([Buffer.from("agent:\n  system_template: caf"), Buffer.from([0xe9, 0x0a])]),
    );
    const result = await runCli(["run", "-c", "demo", "-c", config, "--yolo", "-t", "x"]);
    expectRefused(result, new RegExp(`${config}: not valid UTF-8 at byte offset 29 \\(line 2\\)`));
  });

  it("an endless template: one line naming the template, exit 2, before the model is called; a SIGTERM during it is acted on", async () => {
    const dir = tempDir();
    const endless = (body: string) => {
      const config = join(dir, `endless-${body.length}.yaml`);
      writeFileSync(
        config,
        `agent:\n  instance_template: "{% for i in range(100000) %}{% for j in range(100000) %}${body}{% endfor %}{% endfor %}"\n`,
      );
      return config;
    };
    // Rendering something each time: stopped at the size limit.
    const growing = await runCli([
      "run",
      "-c",
      "demo",
      "-c",
      endless("{{ 'x' * 1000 }}"),
      "--yolo",
      "-t",
      "x",
      "-o",
      join(dir, "a.traj.json"),
    ]);
    expectRefused(
      growing,
      /^swerun: template "instance_template"( at line \d+)?: the rendered text passed 67108864 characters/,
    );
    // Rendering nothing: stopped at the time limit; a SIGTERM sent while it renders is acted on once it ends.
    const run = startCli(
      [
        "run",
        "-c",
        "demo",
        "-c",
        endless("{% set x = j %}"),
        "--yolo",
        "-t",
        "x",
        "-o",
        join(dir, "b.traj.json"),
      ],
      {
        env: { SWERUN_CHAOS_PAUSE: "render:instance_template" },
      },
    );
    await pausedAt(run, "render:instance_template");
    run.child.kill("SIGTERM");
    run.child.kill("SIGCONT");
    const stopped = await run.done;
    const lines = stopped.stderr.trim().split("\n");
    expect(lines.at(-1)).toMatch(
      /^swerun: template "instance_template"( at line \d+)?: rendering took more than 5 s/,
    );
    expect(stopped.code).toBe(2);
    // A range too long to hold is refused at once.
    writeFileSync(
      join(dir, "range.yaml"),
      'agent:\n  instance_template: "{% for i in range(10**9) %}{% endfor %}"\n',
    );
    expectRefused(
      await runCli(["run", "-c", "demo", "-c", join(dir, "range.yaml"), "--yolo", "-t", "x"]),
      /range\(\) of 1000000000 numbers is more than a template may loop over \(10000000\)/,
    );
  });

  it("a local environment.cwd that does not exist, or is a file: one line, exit 2, before the first model call", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "file"), "x");
    for (const [cwd, why] of [
      [join(dir, "gone"), "no such folder"],
      [join(dir, "file"), "not a folder"],
    ]) {
      const out = join(dir, "x.traj.json");
      const result = await runCli([
        "run",
        "-c",
        "demo",
        "-c",
        "run.setup_dir=",
        "-c",
        `environment.cwd=${cwd}`,
        "--yolo",
        "-t",
        "x",
        "-o",
        out,
      ]);
      expectRefused(
        result,
        new RegExp(
          `^swerun: environment\\.cwd ${cwd}: ${why}; the local environment runs its commands there\n$`,
        ),
      );
      const trajectory = JSON.parse(readFileSync(out, "utf8"));
      expect(trajectory.info.model_stats.api_calls).toBe(0);
      expect(JSON.stringify(trajectory)).not.toContain("ENOENT");
    }
  });

  it("an environment variable name with a space, in the local environment as in Docker", async () => {
    for (const environmentClass of ["local", "docker"]) {
      const result = await runCli([
        "run",
        "-c",
        "demo",
        "--environment-class",
        environmentClass,
        "-c",
        'environment.env={"MY VAR":"x"}',
        "--yolo",
        "-t",
        "x",
      ]);
      expectRefused(result, /environment\.env\.MY VAR: "MY VAR" is not a variable name/);
    }
  });
});
