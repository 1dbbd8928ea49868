import { chmodSync, cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli, waitFor } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import { recordDemo } from "./scenarios.js";

/** The overview data a page embeds. */
function pageData(file: string): {
  runs: Array<{ name: string; rows: Array<{ id: string; exit_status: string; detail: number | null }> }>;
} {
  const html = readFileSync(file, "utf8");
  const json = /<script type="application\/json" id="swerun-view-data">(.*?)<\/script>/s.exec(html)?.[1];
  return JSON.parse(json ?? "null");
}

describe("swerun view (command)", () => {
  let root: string;
  let demo: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "swerun-view-cli-"));
    demo = await recordDemo(root, "demo");
  }, 60_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("writes <folder>/index.html by default and says where", async () => {
    const run = join(tempDir(), "run");
    cpSync(demo, run, { recursive: true });
    const result = await runCli(["view", run]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      `wrote ${join(run, "index.html")} (3 instances, ${/\d+\.\d s/.exec(result.stderr)?.[0]})\n`,
    );
    expect(pageData(join(run, "index.html")).runs[0]?.rows.map((row) => row.exit_status)).toEqual([
      "Submitted",
      "Submitted",
      "Submitted",
    ]);
  });

  it("writes <name>.html next to a single trajectory", async () => {
    const dir = tempDir();
    cpSync(join(demo, "swerun-demo__calc-1"), dir, { recursive: true });
    const result = await runCli(["view", join(dir, "swerun-demo__calc-1.traj.json")]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(`wrote ${join(dir, "swerun-demo__calc-1.html")}`);
  });

  it("shows a swebench-single folder (its trajectory beside run.json) under its label, steps included", async () => {
    const out = join(tempDir(), "single");
    const single = await runCli(
      [
        "swebench-single",
        "--subset",
        "demo",
        "-i",
        "swerun-demo__calc-1",
        "--environment-class",
        "local",
        "--label",
        "calc once",
        "-o",
        out,
        "-y",
        "--exit-immediately",
      ],
      { cwd: root },
    );
    expect(single.code).toBe(0);
    const result = await runCli(["view", out]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(`wrote ${join(out, "index.html")} (1 instance, `);
    const data = pageData(join(out, "index.html"));
    expect(data.runs[0]?.name).toBe("calc once");
    expect(data.runs[0]?.rows).toEqual([
      expect.objectContaining({ id: "swerun-demo__calc-1", exit_status: "Submitted", detail: 0 }),
    ]);
  });

  it("refuses what it cannot show with one line and exit code 2", async () => {
    const dir = tempDir();
    const cases: Array<[string[], string]> = [
      [[], "swerun: give a run folder, two run folders to compare, or .traj.json files\n"],
      [[join(dir, "missing")], `swerun: ${join(dir, "missing")}: no such file or folder\n`],
      [[demo, demo, demo], "swerun: 3 run folders given: view shows one run, or two side by side\n"],
      [
        [join(demo, "swerun-demo__calc-1", "swerun-demo__calc-1.traj.json"), demo],
        "swerun: give run folders or trajectory files, not both\n",
      ],
      [
        [
          join(demo, "swerun-demo__calc-1", "swerun-demo__calc-1.traj.json"),
          join(demo, "swerun-demo__count-3", "swerun-demo__count-3.traj.json"),
        ],
        "swerun: 2 trajectory files given: say where the page goes with -o\n",
      ],
      [[dir], `swerun: ${dir}: no .traj.json files in this folder\n`],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(["view", ...args]);
      expect({ args, stderr: result.stderr, code: result.code }).toEqual({ args, stderr: message, code: 2 });
    }
  });

  it("--open runs the system's opener with the page, and says so when there is none", async () => {
    const run = join(tempDir(), "run");
    cpSync(demo, run, { recursive: true });
    const bin = tempDir();
    const log = join(bin, "opened.txt");
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\necho "$@" > ${log}\n`);
    chmodSync(join(bin, "xdg-open"), 0o755);
    const opened = await runCli(["view", run, "--open"], { env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(opened.code).toBe(0);
    await waitFor(() => {
      try {
        return readFileSync(log, "utf8") === `${join(run, "index.html")}\n`;
      } catch {
        return false;
      }
    });
    const none = await runCli(["view", run, "--open"], { env: { PATH: tempDir() } });
    expect(none.code).toBe(0);
    expect(none.stderr).toContain(
      `no program to open a browser with was found (xdg-open); open ${join(run, "index.html")} yourself\n`,
    );
  });

  it("--watch rewrites the page as instances finish and stops on Ctrl-C", async () => {
    const run = join(tempDir(), "run");
    cpSync(demo, run, { recursive: true });
    // count-3 is still running: only its .partial trajectory exists, and run.json has no case for it yet.
    const record = JSON.parse(readFileSync(join(run, "run.json"), "utf8"));
    const finished = record.cases["swerun-demo__count-3"];
    delete record.cases["swerun-demo__count-3"];
    writeFileSync(join(run, "run.json"), JSON.stringify(record));
    const trajectory = join(run, "swerun-demo__count-3", "swerun-demo__count-3.traj.json");
    renameSync(trajectory, `${trajectory}.partial`);

    const watch = startCli(["view", run, "--watch"]);
    let stderr = "";
    watch.child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    const page = join(run, "index.html");
    await waitFor(() => stderr.includes("watching for changes"), 20_000, watch.child);
    const status = (data: ReturnType<typeof pageData>) =>
      data.runs[0]?.rows.find((row) => row.id === "swerun-demo__count-3")?.exit_status;
    expect(status(pageData(page))).toBe("running");

    renameSync(`${trajectory}.partial`, trajectory);
    writeFileSync(
      join(run, "run.json"),
      JSON.stringify({ ...record, cases: { ...record.cases, "swerun-demo__count-3": finished } }),
    );
    await waitFor(() => stderr.includes("updated "), 20_000, watch.child);
    expect(status(pageData(page))).toBe("Submitted");
    watch.child.kill("SIGINT");
    const result = await watch.done;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/stopped watching\n$/);
  });
});
