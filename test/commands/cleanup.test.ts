import { spawnSync } from "node:child_process";
import os from "node:os";
import type Docker from "dockerode";
import { afterAll, beforeEach, expect, it } from "vitest";
import { runCleanup } from "../../src/commands/cleanup.js";
import { describeDocker, dockerFixture, swerunContainers } from "../helpers/docker.js";

const PREFIX = `cleanup-test-${process.pid}`;
let round = 0;
/** Run ids of the current test's containers start with this. */
const roundPrefix = () => `${PREFIX}-${round}`;

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(child.stdout);
}

await describeDocker("swerun cleanup", () => {
  let docker: Docker;
  let image: string;
  const made = new Map<string, string>();

  /** A container labelled as swerun labels its own, as a run in the given situation would have left it. */
  async function leftover(kind: string, labels: Record<string, string>): Promise<string> {
    const runId = `${roundPrefix()}-${kind}`;
    const container = await docker.createContainer({
      name: `swerun-${runId}-${Math.random().toString(16).slice(2, 10)}`,
      Image: image,
      Cmd: ["sleep", "600"],
      Labels: {
        "swerun.run_id": runId,
        "swerun.instance_id": `${kind}-instance`,
        "swerun.pid": String(deadPid()),
        "swerun.host": os.hostname(),
        "swerun.keep": "false",
        ...labels,
      },
      HostConfig: { NetworkMode: "none", AutoRemove: true },
    });
    await container.start();
    made.set(kind, container.id);
    return container.id;
  }

  const present = async () => new Set((await swerunContainers(docker)).map((container) => container.Id));

  beforeEach(async () => {
    round++;
    ({ docker } = await dockerFixture());
    image = (await dockerFixture()).images.base;
    await Promise.all([
      leftover("crashed", {}),
      leftover("kept", { "swerun.keep": "true" }),
      leftover("live", { "swerun.pid": String(process.pid) }),
      leftover("elsewhere", { "swerun.host": "another-machine" }),
    ]);
  });

  afterAll(async () => {
    for (const container of await swerunContainers(docker)) {
      if (container.Labels["swerun.run_id"]?.startsWith(PREFIX)) {
        await docker
          .getContainer(container.Id)
          .remove({ force: true })
          .catch(() => {});
      }
    }
  });

  it("removes what crashed runs left, listing each one, and leaves kept, live and foreign containers", async () => {
    const P = roundPrefix();
    const lines: string[] = [];
    expect(await runCleanup({ print: (line) => lines.push(line) })).toBe(0);
    const ours = lines.filter((line) => line.includes(P));
    expect(ours.find((line) => line.includes(`${P}-crashed`))).toMatch(
      new RegExp(
        `^removed swerun-${P}-crashed-[0-9a-f]+  id ${made.get("crashed")?.slice(0, 12)}  run ${P}-crashed  instance crashed-instance  age \\d+s  \\(running\\)$`,
      ),
    );
    expect(ours.find((line) => line.includes(`${P}-kept`))).toMatch(
      /^skipped .*: kept on purpose \(keep_container: true\)$/,
    );
    expect(ours.find((line) => line.includes(`${P}-live`))).toMatch(
      new RegExp(`^skipped .*: its run is still going \\(pid ${process.pid}\\)$`),
    );
    expect(ours.find((line) => line.includes(`${P}-elsewhere`))).toMatch(
      /^skipped .*: started on another machine \(another-machine\)$/,
    );
    expect(lines.at(-1)).toMatch(/^\d+ removed, 0 failed \(\d+ skipped; --all removes them too\)\.$/);
    const after = await present();
    expect(after.has(made.get("crashed") ?? "")).toBe(false);
    for (const kind of ["kept", "live", "elsewhere"]) expect(after.has(made.get(kind) ?? "")).toBe(true);
  });

  it("lists without removing with dryRun, and would take everything with all", async () => {
    const lines: string[] = [];
    await runCleanup({ dryRun: true, all: true, print: (line) => lines.push(line) });
    for (const kind of ["crashed", "kept", "live", "elsewhere"]) {
      expect(lines.some((line) => line.startsWith(`would remove swerun-${roundPrefix()}-${kind}-`))).toBe(
        true,
      );
    }
    const after = await present();
    for (const id of made.values()) expect(after.has(id)).toBe(true);
  });

  it("removes a container that a kill between create and start left `Created` (--rm never removes it)", async () => {
    const runId = `${roundPrefix()}-created`;
    const container = await docker.createContainer({
      name: `swerun-${runId}-${Math.random().toString(16).slice(2, 10)}`,
      Image: image,
      Cmd: ["sleep", "600"],
      Labels: {
        "swerun.run_id": runId,
        "swerun.instance_id": "created-instance",
        "swerun.pid": String(deadPid()),
        "swerun.host": os.hostname(),
        "swerun.keep": "false",
      },
      HostConfig: { NetworkMode: "none", AutoRemove: true },
    });
    const lines: string[] = [];
    expect(await runCleanup({ runId, skipKept: true, print: (line) => lines.push(line) })).toBe(0);
    expect(lines).toEqual([expect.stringMatching(/^removed .*\(created\)$/), "1 removed, 0 failed."]);
    expect((await present()).has(container.id)).toBe(false);
  });

  it("removes every container of one run with runId, kept ones included (unless skipKept)", async () => {
    const P = roundPrefix();
    const spared: string[] = [];
    await runCleanup({ runId: `${P}-kept`, skipKept: true, print: (line) => spared.push(line) });
    expect(spared[0]).toMatch(/^skipped .*: kept on purpose \(keep_container: true\)$/);
    expect((await present()).has(made.get("kept") ?? "")).toBe(true);
    const lines: string[] = [];
    expect(await runCleanup({ runId: `${P}-kept`, print: (line) => lines.push(line) })).toBe(0);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^removed swerun-${P}-kept-`));
    expect(lines[1]).toBe("1 removed, 0 failed.");
    expect((await present()).has(made.get("kept") ?? "")).toBe(false);
    const none: string[] = [];
    await runCleanup({ runId: `${P}-nothing`, print: (line) => none.push(line) });
    expect(none).toEqual([`No swerun containers of run ${P}-nothing found.`]);
  });
});
