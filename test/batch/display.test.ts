import { describe, expect, it } from "vitest";
import { imagesLine, plainDisplay, terminalDisplay } from "../../src/batch/display.js";
import { factsWithoutTrajectory } from "../../src/facts/read-run.js";

const result = (instance_id: string, exit_status: string, cost = 0.5) => ({
  instance_id,
  exit_status,
  submission: "",
  cost,
  api_calls: 3,
});
const now = Date.now() / 1000;
/** An instance's facts as the batch reads them when it ends: its cost, steps, requests and wall time. */
const facts = (exit_status: string, wall_time_s: number, cost = 0.5) => ({
  ...factsWithoutTrajectory("t", { exit_status, error: null }),
  cost,
  steps: 3,
  attempts: 4,
  wall_time_s,
});

describe("batch progress", () => {
  it("without a terminal prints one line per finished instance, commands only when verbose", () => {
    const lines: string[] = [];
    const display = plainDisplay((line) => lines.push(line), { verbose: true });
    display.start(2, 1);
    display.event(1, { type: "action_start", step: 1, action: { command: "ls -la\nmore" }, time: now });
    display.instanceEnd(1, result("a__b-1", "Submitted"), facts("Submitted", 65));
    display.instanceEnd(2, result("a__b-2", "LimitsExceeded"), facts("LimitsExceeded", 3));
    expect(lines).toEqual([
      "2 instances to run, 1 already finished (skipped)",
      "  w1 $ ls -la",
      "[1/2] a__b-1: Submitted ($0.5000 · 3 steps · 4 model requests (1 failed) · 1 min 5 s; total $0.5000)",
      "[2/2] a__b-2: LimitsExceeded ($0.5000 · 3 steps · 4 model requests (1 failed) · 3.0 s; total $1.0000)",
    ]);
    const quiet: string[] = [];
    const silent = plainDisplay((line) => quiet.push(line), { quiet: true });
    silent.start(1, 0);
    silent.instanceEnd(1, result("a__b-1", "Submitted"), facts("Submitted", 1));
    expect(quiet).toEqual([]);
  });

  it("on a terminal redraws a bar, a line per worker and the exit statuses in place", () => {
    let screen = "";
    const write = (text: string) => {
      screen += text;
      return true;
    };
    const stream = { columns: 120, write } as unknown as NodeJS.WriteStream;
    const display = terminalDisplay(stream, 2);
    display.start(3, 0);
    display.instanceStart(1, "a__b-1");
    display.event(1, { type: "model_call_start", call: 4, time: now });
    display.event(1, { type: "action_start", step: 4, action: { command: "pytest -x tests/" }, time: now });
    display.instanceEnd(2, result("a__b-2", "Submitted", 1.25), facts("Submitted", 10, 1.25));
    display.message("Ctrl-C: no new instances will start");
    display.stop();
    const last = screen.slice(screen.lastIndexOf("\x1b[J") + 3);
    expect(last).toMatch(/1\/3 {2}cost \$1\.2500 {2}elapsed \d+s {2}eta/);
    expect(last).toMatch(/w1 a__b-1 {2}step 4 {2}.*pytest -x tests\//);
    expect(last).toMatch(/w2 idle/);
    expect(last).toMatch(/Submitted 1/);
    expect(last).toMatch(/recent: a__b-2 \(Submitted\)/);
    expect(screen).toContain("Ctrl-C: no new instances will start\n");
  });

  it("on a terminal shows each Docker host's load and state, and the host of each worker", () => {
    let screen = "";
    const stream = {
      columns: 160,
      write: (text: string) => {
        screen += text;
        return true;
      },
    } as unknown as NodeJS.WriteStream;
    const display = terminalDisplay(stream, 3);
    display.start(4, 0);
    display.hosts?.([
      { host: "ssh://gpu-a", workers: 2, state: "up", running: 1 },
      { host: "ssh://gpu-b", workers: 1, state: "down", running: 0 },
    ]);
    display.instanceStart(1, "a__b-1", "ssh://gpu-a");
    display.instanceStart(2, "a__b-2", "ssh://gpu-b");
    display.instanceLost?.(2, "a__b-2");
    display.stop();
    const last = screen.slice(screen.lastIndexOf("\x1b[J") + 3);
    expect(last).toMatch(/hosts: ssh:\/\/gpu-a 1\/2 · .*ssh:\/\/gpu-b DOWN/);
    expect(last).toMatch(/w1 .*\[ssh:\/\/gpu-a\].* a__b-1 {2}step 0/);
    // A lost instance has not ended: its worker is idle, nothing counts as done.
    expect(last).toMatch(/w2 idle/);
    expect(last).toMatch(/0\/4 {2}cost/);
  });

  it("on a terminal shows a Kubernetes batch's pods: pending, pulling, running", () => {
    let screen = "";
    const stream = {
      columns: 160,
      write: (text: string) => {
        screen += text;
        return true;
      },
    } as unknown as NodeJS.WriteStream;
    const display = terminalDisplay(stream, 4);
    display.start(4, 0);
    display.pods?.({ pending: 1, pulling: 2, running: 1 });
    display.stop();
    expect(screen.slice(screen.lastIndexOf("\x1b[J") + 3)).toContain(
      "pods: 1 pending · 2 pulling · 1 running",
    );
  });

  it("shows the images a batch pulls: pulling, ready, pulled ahead, waited for, disk against the budget", () => {
    const status = { pulling: 2, ready: 3, pulledAhead: 7, waited: 1, waitedSeconds: 4.2, held: 1.2e9 };
    expect(imagesLine({ ...status, budget: 2e9 })).toBe(
      "images: 2 pulling · 3 ready · 7 pulled ahead · 1 waited for (4.2 s) · disk 1.20 GB / 2.00 GB",
    );
    expect(imagesLine({ ...status, budget: undefined })).toMatch(/· disk 1\.20 GB$/);
  });
});
