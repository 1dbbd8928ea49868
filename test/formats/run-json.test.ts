import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import {
  readableRunJson,
  readRunJson,
  runJsonAt,
  runJsonPath,
  updateRunJson,
} from "../../src/formats/run-json.js";
import { FileWriteError } from "../../src/util/file-error.js";
import { packageRoot } from "../../src/util/package-root.js";
import { describeSmallDisk, mountSmallDisk } from "../helpers/small-disk.js";
import { tempDir } from "../helpers/tmp.js";

/** The built module (vitest's global setup builds dist/), for processes of their own. */
const MODULE = pathToFileURL(join(packageRoot(), "dist", "src", "formats", "run-json.js")).href;

/** A process that appends `count` entries tagged `tag` to run.json's `hits`, one locked update each. */
function appender(path: string, tag: string, count: number): Promise<number | null> {
  const script = `
    const { updateRunJson, readableRunJson } = await import(${JSON.stringify(MODULE)});
    const path = ${JSON.stringify(path)};
    for (let i = 0; i < ${count}; i++)
      updateRunJson(path, (onDisk) => {
        const record = readableRunJson(path, onDisk);
        return { ...record, hits: [...record.hits, ${JSON.stringify(tag)} + i] };
      });`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
  return new Promise((resolve) => child.on("exit", resolve));
}

/** The pid of a process that has exited (and been reaped). */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid as number;

describe("run.json", () => {
  it("loses no update when two processes update it at once", async () => {
    const dir = tempDir();
    const path = runJsonPath(dir);
    writeFileSync(path, JSON.stringify({ run_id: "r", hits: [] }));
    const codes = await Promise.all([appender(path, "a", 150), appender(path, "b", 150)]);
    expect(codes).toEqual([0, 0]);
    const hits = (runJsonAt(path) as { hits: string[] }).hits;
    expect(hits).toHaveLength(300);
    for (const tag of ["a", "b"])
      expect(hits.filter((hit) => hit.startsWith(tag))).toEqual(
        Array.from({ length: 150 }, (_, i) => `${tag}${i}`),
      );
    // The lock and its temp files are gone.
    expect(readdirSync(dir)).toEqual(["run.json"]);
  });

  it("reads a torn file as unreadable, and an update that needs it fails naming it in one line, changing nothing", () => {
    const dir = tempDir();
    const path = runJsonPath(dir);
    const torn = '{"run_id": "r", "cases": {"a": {"answer": "di';
    writeFileSync(path, torn);
    const onDisk = readRunJson(path);
    expect(onDisk).toEqual({ state: "unreadable", problem: expect.stringMatching(/JSON/) });
    expect(runJsonAt(path)).toBeUndefined();
    let error: unknown;
    try {
      updateRunJson(path, (read) => ({ ...readableRunJson(path, read), label: "x" }));
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toMatch(new RegExp(`^${path}: not a readable run.json \\(.*JSON.*\\)$`));
    expect((error as Error).message).not.toContain("\n");
    expect(readFileSync(path, "utf8")).toBe(torn);
    expect(readdirSync(dir)).toEqual(["run.json"]);
    // A writer that replaces what it cannot read (a batch's record) may.
    updateRunJson(path, () => ({ run_id: "r" }));
    expect(runJsonAt(path)).toEqual({ run_id: "r" });
  });

  it("names a bad file in one line: not an object, a folder, JSON whose error quotes several lines", () => {
    const cases: Array<[string, RegExp]> = [
      ["[1, 2]", /a JSON list, not an object/],
      ["null", /a JSON null, not an object/],
      ['"run"', /a JSON string, not an object/],
      ['{"run_id":\n\n\n x\n}', /JSON/],
    ];
    for (const [text, problem] of cases) {
      const dir = tempDir();
      const path = runJsonPath(dir);
      writeFileSync(path, text);
      expect(() => readableRunJson(path, readRunJson(path)), text).toThrow(problem);
      expect(() => readableRunJson(path, readRunJson(path))).toThrow(`${path}: not a readable run.json (`);
      const onDisk = readRunJson(path);
      expect(onDisk.state === "unreadable" && onDisk.problem, text).not.toMatch(/\n/);
    }
    const dir = tempDir();
    mkdirSync(runJsonPath(dir));
    expect(readRunJson(runJsonPath(dir))).toEqual({
      state: "unreadable",
      problem: expect.stringMatching(/EISDIR/),
    });
    expect(readRunJson(join(dir, "nothing", "run.json"))).toEqual({ state: "absent" });
  });

  it("leaves a missing run.json missing when the update returns nothing, and takes over a lock whose process is gone", () => {
    const dir = tempDir();
    const path = runJsonPath(dir);
    updateRunJson(path, (onDisk) => {
      expect(onDisk).toEqual({ state: "absent" });
      return undefined;
    });
    expect(readdirSync(dir)).toEqual([]);
    for (const text of [JSON.stringify({ pid: deadPid(), host: hostname() }), "", '{"pid": 4']) {
      writeFileSync(join(dir, ".run.json.lock"), text);
      updateRunJson(path, () => ({ run_id: "r", lock: text }));
      expect(runJsonAt(path)).toEqual({ run_id: "r", lock: text });
      expect(readdirSync(dir)).toEqual(["run.json"]);
    }
  });
});

describeSmallDisk("run.json on a full disk", () => {
  it("fails naming run.json, keeps the file as it was, and leaves no lock or temp file", () => {
    const disk = mountSmallDisk(64 * 1024);
    try {
      const path = runJsonPath(disk.dir);
      writeFileSync(path, JSON.stringify({ run_id: "r" }));
      disk.fill(0);
      let error: unknown;
      try {
        updateRunJson(path, () => ({ run_id: "r", label: "x".repeat(10_000) }));
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(FileWriteError);
      expect((error as Error).message).toBe(`could not write ${path}: no space left on device (ENOSPC)`);
      expect(runJsonAt(path)).toEqual({ run_id: "r" });
      expect(readdirSync(disk.dir).sort()).toEqual(["filler", "run.json"]);
    } finally {
      disk.remove();
    }
  });

  it("takes no disk block for its lock: an update that fits in what is left is written", () => {
    const disk = mountSmallDisk(64 * 1024);
    try {
      const path = runJsonPath(disk.dir);
      writeFileSync(path, JSON.stringify({ run_id: "r" }));
      // Room for the new file's one page and nothing more: a lock that took a page too would refuse it.
      disk.fill(4096);
      updateRunJson(path, () => ({ run_id: "r", label: "x".repeat(3_000) }));
      expect(runJsonAt(path)).toEqual({ run_id: "r", label: "x".repeat(3_000) });
      expect(readdirSync(disk.dir).sort()).toEqual(["filler", "run.json"]);
    } finally {
      disk.remove();
    }
  });
});
