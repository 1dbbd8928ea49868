import { execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { type CliResult, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const TRAJECTORY = join(packageRoot(), "test", "fixtures", "report", "swerun-full.traj.json");
const DEMO_LOCAL = ["--subset", "demo", "--environment-class", "local"];
const asRoot = process.getuid?.() === 0;

/** Exit code 2 and exactly one line on stderr naming the flag and the path. */
function expectRefused(result: CliResult, flag: string, path: string, why?: RegExp): void {
  expect(result.stderr).toMatch(/^swerun: [^\n]+\n$/);
  expect(result.stderr).toContain(`${flag} ${path}`);
  if (why) expect(result.stderr).toMatch(why);
  expect(result.code).toBe(2);
}

/** Exit code of a command that wrote its output: preds says 1 for the fixture's patch (not a diff). */
const okCode = (name: string) => (name === "preds -o" ? 1 : 0);

/** The commands that write one file, each with its output path at `path`. */
const SINGLE_FILE_OUTPUTS = (dir: string): Array<[string, (path: string) => string[]]> => [
  ["preds -o", (path) => ["preds", TRAJECTORY, "-o", path]],
  ["report -o", (path) => ["report", TRAJECTORY, "-o", path]],
  ["export -o", (path) => ["export", TRAJECTORY, "-o", path]],
  ["view -o", (path) => ["view", TRAJECTORY, "-o", path]],
  [
    "run --report",
    (path) => [
      "run",
      "-c",
      "demo",
      "--yolo",
      "--exit-immediately",
      "-o",
      join(dir, "r.traj.json"),
      "--report",
      path,
    ],
  ],
];

describe("output paths that are not regular files are written through or refused, never replaced", () => {
  it("a symlink to a regular file is written through: the link stays, its target holds the output", async () => {
    const dir = tempDir();
    for (const [name, args] of SINGLE_FILE_OUTPUTS(dir)) {
      const target = join(dir, `${name.replace(/\W+/g, "-")}.target`);
      writeFileSync(target, "old");
      const link = join(dir, `${name.replace(/\W+/g, "-")}.link`);
      symlinkSync(target, link);
      const result = await runCli(args(link));
      expect(result.code, `${name}: ${result.stderr}`).toBe(okCode(name));
      expect(lstatSync(link).isSymbolicLink(), name).toBe(true);
      expect(readlinkSync(link)).toBe(target);
      expect(readFileSync(target, "utf8"), name).not.toBe("old");
      expect(readFileSync(target, "utf8").length, name).toBeGreaterThan(10);
    }
  });

  it("a pipe (and a symlink to one) is streamed to; a trajectory path on a pipe is refused", async () => {
    const dir = tempDir();
    for (const [name, args] of SINGLE_FILE_OUTPUTS(dir)) {
      const fifo = join(dir, `${name.replace(/\W+/g, "-")}.fifo`);
      execFileSync("mkfifo", [fifo]);
      const link = `${fifo}.link`;
      symlinkSync(fifo, link);
      const reader = spawn("cat", [fifo], { stdio: ["ignore", "pipe", "ignore"] });
      let read = "";
      reader.stdout.on("data", (chunk) => {
        read += chunk;
      });
      const closed = new Promise((resolve) => reader.on("close", resolve));
      const result = await runCli(args(link));
      await closed;
      expect(result.code, `${name}: ${result.stderr}`).toBe(okCode(name));
      expect(read.length, name).toBeGreaterThan(10);
      expect(lstatSync(link).isSymbolicLink(), name).toBe(true);
      expect(lstatSync(fifo).isFIFO(), name).toBe(true);
    }
    const fifo = join(dir, "trajectory.fifo");
    execFileSync("mkfifo", [fifo]);
    const run = await runCli(["run", "-c", "demo", "--yolo", "--exit-immediately", "-o", fifo]);
    expectRefused(run, "-o", fifo, /is a device or a pipe/);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it.runIf(asRoot)(
    "a character device stays a character device (written through, or refused for a trajectory)",
    async () => {
      const dir = tempDir();
      const device = join(dir, "null");
      execFileSync("mknod", [device, "c", "1", "3"]); // a /dev/null of our own
      for (const [name, args] of SINGLE_FILE_OUTPUTS(dir)) {
        const result = await runCli(args(device));
        expect(result.code, `${name}: ${result.stderr}`).toBe(okCode(name));
        expect(statSync(device).isCharacterDevice(), name).toBe(true);
      }
      const run = await runCli(["run", "-c", "demo", "--yolo", "--exit-immediately", "-o", device]);
      expectRefused(run, "-o", device, /is a device or a pipe/);
      expect(statSync(device).isCharacterDevice()).toBe(true);
      expect(existsSync(join(dir, "null.traj.json"))).toBe(false);
    },
  );

  it("`-` is standard output for every single-file output", async () => {
    const dir = tempDir();
    for (const [name, args] of SINGLE_FILE_OUTPUTS(dir)) {
      const result = await runCli(args("-"), { cwd: dir });
      expect(result.code, `${name}: ${result.stderr}`).toBe(okCode(name));
      expect(existsSync(join(dir, "-")), name).toBe(false);
      const text = result.stdout.trim();
      if (name === "view -o")
        expect(text.startsWith("<!DOCTYPE html>") || text.startsWith("<!doctype html>")).toBe(true);
      else if (name === "export -o") expect(() => JSON.parse(text.split("\n")[0] ?? "")).not.toThrow();
      else expect(() => JSON.parse(text), name).not.toThrow();
    }
  });
});

describe("bad output paths are refused before any work: exit 2, one line naming the flag and the path", () => {
  it("under /proc, for every command (no mkdir loop, no raw ENOENT of a temp file)", async () => {
    const dir = tempDir();
    const folder = join(dir, "run");
    mkdirSync(folder);
    writeFileSync(join(folder, "preds.json"), "{}");
    const file = "/proc/swerun-test/out.json";
    const folderPath = "/proc/swerun-test/out";
    const cases: Array<[string, string, string[]]> = [
      ...SINGLE_FILE_OUTPUTS(dir).map(([name, args]): [string, string, string[]] => [
        name.split(" ")[1] as string,
        file,
        args(file),
      ]),
      ["-o", folderPath, ["swebench", ...DEMO_LOCAL, "-o", folderPath]],
      ["-o", folderPath, ["swebench-single", ...DEMO_LOCAL, "-i", "0", "-o", folderPath]],
      ["-o", folderPath, ["export", TRAJECTORY, "--format", "judge", "-o", folderPath]],
      ["-o", folderPath, ["eval", folder, "-o", folderPath]],
      ["--out-dir", folderPath, ["report", TRAJECTORY, "--out-dir", folderPath]],
      ["--events", file, ["run", "-c", "demo", "--yolo", "-t", "x", "--events", file]],
      ["-o", "/proc/swerun-test/x.traj.json", ["replay", TRAJECTORY, "-o", "/proc/swerun-test/x.traj.json"]],
      ["--report", file, ["replay", TRAJECTORY, "--report", file]],
    ];
    for (const [flag, path, args] of cases) {
      const result = await runCli(args, { cwd: dir });
      expectRefused(result, flag, path.startsWith("/proc/swerun-test/out.") ? path : path);
      expect(result.stderr, args.join(" ")).not.toMatch(/\.tmp|ENOENT: no such file/);
    }
    expect(existsSync(join(dir, "r.traj.json"))).toBe(false);
  }, 60_000);

  it("a path under a file, and an existing folder, for the single-file outputs", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "a-file"), "");
    for (const [name, args] of SINGLE_FILE_OUTPUTS(dir)) {
      const flag = name.split(" ")[1] as string;
      const under = join(dir, "a-file", "x.json");
      expectRefused(await runCli(args(under)), flag, under, /a part of the path is a file/);
      expectRefused(await runCli(args(dir)), flag, dir, /is a directory/);
    }
    // run --report BAD is refused before the (paid) run: no trajectory was written.
    expect(existsSync(join(dir, "r.traj.json"))).toBe(false);
  });
});
