import pc from "picocolors";
import type { AgentEvent } from "../events.js";
import { formatBytes } from "../util/bytes.js";
import { redact } from "../util/secrets.js";
import { formatSeconds, progressBar, terminalBlock } from "../util/terminal-block.js";
import type { HostStatus } from "./host-pool.js";
import type { ImagesStatus } from "./image-pool.js";
import type { InstanceResult } from "./instance.js";

/** What the batch tells its display. */
export interface BatchDisplay {
  start(total: number, skipped: number): void;
  /** `host`: the Docker host it runs on, in a batch across several. */
  instanceStart(worker: number, instanceId: string, host?: string): void;
  event(worker: number, event: AgentEvent): void;
  instanceEnd(worker: number, result: InstanceResult, seconds: number): void;
  /** The instance was lost with its Docker host and went back to the queue (it has not ended). */
  instanceLost?(worker: number, instanceId: string): void;
  /** The Docker hosts of a batch across several, whenever one's state or load changes. */
  hosts?(hosts: HostStatus[]): void;
  /** The images a Docker batch pulls: being pulled, pulled ahead, waited for, disk held. */
  images?(status: ImagesStatus): void;
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
    instanceEnd: (_worker, result, seconds) => {
      done += 1;
      cost += result.cost;
      if (!options.quiet) {
        write(
          `[${done}/${total}] ${result.instance_id}: ${result.exit_status} ($${result.cost.toFixed(2)}, ${result.api_calls} calls, ${formatSeconds(seconds)}; total $${cost.toFixed(2)})`,
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

/** On a terminal: an overall bar, a line per worker, and exit statuses with recent instances, redrawn in place. */
export function terminalDisplay(stream: NodeJS.WriteStream, workers: number): BatchDisplay {
  let total = 0;
  let done = 0;
  let cost = 0;
  const started = Date.now();
  const lines = new Map<number, WorkerLine>();
  const statuses = new Map<string, number>();
  const recent: string[] = [];
  let hosts: HostStatus[] = [];
  let images: ImagesStatus | undefined;
  const block = terminalBlock(stream);
  const draw = () => {
    const width = Math.max(40, (stream.columns ?? 100) - 1);
    const elapsed = (Date.now() - started) / 1000;
    const eta = done > 0 ? (elapsed / done) * (total - done) : Number.NaN;
    const out = [
      `${progressBar(done, total)} ${done}/${total}  cost $${cost.toFixed(2)}  elapsed ${formatSeconds(elapsed)}  eta ${Number.isNaN(eta) ? "–" : formatSeconds(eta)}`,
    ];
    if (hosts.length > 0) {
      const states = hosts.map(({ host, workers: slots, state, running }) =>
        state === "up" ? `${host} ${running}/${slots}` : pc.red(`${host} DOWN`),
      );
      out.push(`  hosts: ${states.join(" · ")}`);
    }
    if (images) out.push(`  ${imagesLine(images)}`);
    for (let w = 1; w <= workers; w++) {
      const line = lines.get(w);
      out.push(
        line
          ? `  w${w} ${line.host ? `${pc.dim(`[${line.host}]`)} ` : ""}${line.instance}  step ${line.step}  ${pc.cyan(line.command)}  ${formatSeconds((Date.now() - line.started) / 1000)}`
          : pc.dim(`  w${w} idle`),
      );
    }
    out.push(
      `  ${[...statuses].map(([status, n]) => `${status} ${n}`).join(" · ") || pc.dim("no instance finished yet")}`,
    );
    if (recent.length) out.push(pc.dim(`  recent: ${recent.join(", ")}`));
    block.draw(out.map((line) => redact(line.slice(0, width + 20))));
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  return {
    start: (n) => {
      total = n;
      draw();
    },
    instanceStart: (worker, instance, host) =>
      lines.set(worker, { instance, host, step: 0, command: "", started: Date.now() }),
    event: (worker, event) => {
      const line = lines.get(worker);
      if (!line) return;
      if (event.type === "model_call_start") line.step = event.call;
      if (event.type === "action_start")
        line.command = event.action.command.split("\n")[0]?.slice(0, 60) ?? "";
    },
    instanceEnd: (worker, result) => {
      done += 1;
      cost += result.cost;
      lines.delete(worker);
      statuses.set(result.exit_status, (statuses.get(result.exit_status) ?? 0) + 1);
      recent.unshift(`${result.instance_id} (${result.exit_status})`);
      recent.length = Math.min(recent.length, 3);
    },
    instanceLost: (worker) => {
      lines.delete(worker);
    },
    hosts: (next) => {
      hosts = next;
    },
    images: (next) => {
      images = next;
    },
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
