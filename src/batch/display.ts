import pc from "picocolors";
import type { AgentEvent } from "../events.js";
import { figuresLine, usd } from "../facts/figures.js";
import type { RunFacts } from "../facts/run-facts.js";
import type { HostStatus } from "../images/host-pool.js";
import type { ImagesStatus } from "../images/pool.js";
import { formatBytes } from "../util/bytes.js";
import { redact } from "../util/secrets.js";
import { formatSeconds, progressBar, terminalBlock } from "../util/terminal-block.js";
import type { InstanceResult } from "./instance.js";

/** How many of a Kubernetes batch's pods are pending (not placed), pulling (placed, starting) and running. */
export interface PodsStatus {
  pending: number;
  pulling: number;
  running: number;
}

/** What the batch tells its display. */
export interface BatchDisplay {
  start(total: number, skipped: number): void;
  /** `host`: the Docker host it runs on, in a batch across several. */
  instanceStart(worker: number, instanceId: string, host?: string): void;
  event(worker: number, event: AgentEvent): void;
  /** An instance ended; `facts`: its facts as run.json records them (the figures the display shows). */
  instanceEnd(worker: number, result: InstanceResult, facts: RunFacts): void;
  /** The instance was lost with its Docker host and went back to the queue (it has not ended). */
  instanceLost?(worker: number, instanceId: string): void;
  /** The Docker hosts of a batch across several, whenever one's state or load changes. */
  hosts?(hosts: HostStatus[]): void;
  /** The images a Docker batch pulls: being pulled, pulled ahead, waited for, disk held. */
  images?(status: ImagesStatus): void;
  /** A Kubernetes batch's pods: not placed yet, placed and starting (image pull), running. */
  pods?(status: PodsStatus): void;
  message(line: string): void;
  stop(): void;
}

/** Without a terminal: one plain line per finished instance (and per action with `verbose`). */
export function plainDisplay(
  writeLine: (line: string) => void,
  options: { quiet?: boolean; verbose?: boolean } = {},
): BatchDisplay {
  const write = (line: string) => writeLine(redact(line));
  let total = 0;
  let done = 0;
  let cost = 0;
  return {
    start: (n, skipped) => {
      total = n;
      if (!options.quiet)
        write(`${n} instances to run${skipped ? `, ${skipped} already finished (skipped)` : ""}`);
    },
    instanceStart: () => {},
    event: (worker, event) => {
      if (options.verbose && event.type === "action_start")
        write(`  w${worker} $ ${event.action.command.split("\n")[0]}`);
    },
    instanceEnd: (_worker, result, facts) => {
      done += 1;
      cost += facts.cost ?? 0;
      if (!options.quiet) {
        write(
          `[${done}/${total}] ${result.instance_id}: ${facts.exit_status} (${figuresLine(facts)}; total ${usd(cost)})`,
        );
      }
    },
    message: (line) => write(line),
    stop: () => {},
  };
}

interface WorkerLine {
  instance: string;
  host: string | undefined;
  step: number;
  command: string;
  started: number;
}

/** What the terminal display shows, kept up to date by its callbacks. */
interface DisplayState {
  total: number;
  done: number;
  cost: number;
  started: number;
  lines: Map<number, WorkerLine>;
  statuses: Map<string, number>;
  recent: string[];
  hosts: HostStatus[];
  images: ImagesStatus | undefined;
  pods: PodsStatus | undefined;
}

/** "  w2 [host] id  step 3  command  12s", or "  w2 idle". */
function workerLine(worker: number, line: WorkerLine | undefined): string {
  if (!line) return pc.dim(`  w${worker} idle`);
  const host = line.host ? `${pc.dim(`[${line.host}]`)} ` : "";
  return `  w${worker} ${host}${line.instance}  step ${line.step}  ${pc.cyan(line.command)}  ${formatSeconds((Date.now() - line.started) / 1000)}`;
}

/** The display's lines: the overall bar, hosts and images when known, the workers, exit statuses, recent instances. */
function displayLines(state: DisplayState, workers: number): string[] {
  const elapsed = (Date.now() - state.started) / 1000;
  const eta = state.done > 0 ? (elapsed / state.done) * (state.total - state.done) : Number.NaN;
  const out = [
    `${progressBar(state.done, state.total)} ${state.done}/${state.total}  cost ${usd(state.cost)}  elapsed ${formatSeconds(elapsed)}  eta ${Number.isNaN(eta) ? "–" : formatSeconds(eta)}`,
  ];
  if (state.hosts.length > 0) {
    const states = state.hosts.map(({ host, workers: slots, state: up, running }) =>
      up === "up" ? `${host} ${running}/${slots}` : pc.red(`${host} DOWN`),
    );
    out.push(`  hosts: ${states.join(" · ")}`);
  }
  if (state.images) out.push(`  ${imagesLine(state.images)}`);
  if (state.pods)
    out.push(
      `  pods: ${state.pods.pending} pending · ${state.pods.pulling} pulling · ${state.pods.running} running`,
    );
  for (let w = 1; w <= workers; w++) out.push(workerLine(w, state.lines.get(w)));
  out.push(
    `  ${[...state.statuses].map(([status, n]) => `${status} ${n}`).join(" · ") || pc.dim("no instance finished yet")}`,
  );
  if (state.recent.length) out.push(pc.dim(`  recent: ${state.recent.join(", ")}`));
  return out;
}

/** The display's setters of what the batch reports as a whole: its hosts, images and pods. */
function statusSetters(state: DisplayState): Required<Pick<BatchDisplay, "hosts" | "images" | "pods">> {
  return {
    hosts: (next) => {
      state.hosts = next;
    },
    images: (next) => {
      state.images = next;
    },
    pods: (next) => {
      state.pods = next;
    },
  };
}

/** On a terminal: an overall bar, a line per worker, and exit statuses with recent instances, redrawn in place. */
export function terminalDisplay(stream: NodeJS.WriteStream, workers: number): BatchDisplay {
  const state: DisplayState = {
    total: 0,
    done: 0,
    cost: 0,
    started: Date.now(),
    lines: new Map(),
    statuses: new Map(),
    recent: [],
    hosts: [],
    images: undefined,
    pods: undefined,
  };
  const block = terminalBlock(stream);
  const draw = () => {
    const width = Math.max(40, (stream.columns ?? 100) - 1);
    block.draw(displayLines(state, workers).map((line) => redact(line.slice(0, width + 20))));
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  return {
    start: (n) => {
      state.total = n;
      draw();
    },
    instanceStart: (worker, instance, host) =>
      state.lines.set(worker, { instance, host, step: 0, command: "", started: Date.now() }),
    event: (worker, event) => {
      const line = state.lines.get(worker);
      if (!line) return;
      if (event.type === "model_call_start") line.step = event.call;
      if (event.type === "action_start")
        line.command = event.action.command.split("\n")[0]?.slice(0, 60) ?? "";
    },
    instanceEnd: (worker, result, facts) => {
      state.done += 1;
      state.cost += facts.cost ?? 0;
      state.lines.delete(worker);
      state.statuses.set(result.exit_status, (state.statuses.get(result.exit_status) ?? 0) + 1);
      state.recent.unshift(`${result.instance_id} (${result.exit_status})`);
      state.recent.length = Math.min(state.recent.length, 3);
    },
    instanceLost: (worker) => state.lines.delete(worker),
    ...statusSetters(state),
    message: (line) => {
      block.print(redact(line));
      draw();
    },
    stop: () => {
      clearInterval(timer);
      draw();
    },
  };
}

/** "images: 2 pulling · 3 ready · 7 pulled ahead · 1 waited for (4.2 s) · disk 1.20 GB / 2.00 GB" */
export function imagesLine(status: ImagesStatus): string {
  const disk = `disk ${formatBytes(status.held)}${status.budget === undefined ? "" : ` / ${formatBytes(status.budget)}`}`;
  return `images: ${status.pulling} pulling · ${status.ready} ready · ${status.pulledAhead} pulled ahead · ${status.waited} waited for (${status.waitedSeconds} s) · ${disk}`;
}
