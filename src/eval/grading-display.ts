import pc from "picocolors";
import { formatSeconds, progressBar, terminalBlock } from "../util/terminal-block.js";
import type { GradeResult } from "./grade-instance.js";

/** What grading tells its display. */
export interface EvalDisplay {
  start(total: number, skipped: number): void;
  begin(worker: number, instanceId: string): void;
  phase(worker: number, phase: string): void;
  end(worker: number, result: GradeResult): void;
  message(line: string): void;
  stop(): void;
}

const seconds = formatSeconds;

/** One line per verdict: `[2/5] id: resolved (12s)`, with the resolve rate so far. */
export function verdictLine(result: GradeResult, done: number, total: number, resolved: number): string {
  const why = result.error ? `: ${result.error}` : "";
  return `[${done}/${total}] ${result.instance_id}: ${result.status}${why} (${seconds(result.totalSeconds)}; resolved ${resolved}/${done})`;
}

/** Without a terminal: one line per graded instance (nothing with `quiet`). */
export function plainEvalDisplay(write: (line: string) => void, quiet = false): EvalDisplay {
  let total = 0;
  let done = 0;
  let resolved = 0;
  return {
    start: (n, skipped) => {
      total = n;
      if (!quiet) write(`${n} instances to grade${skipped ? `, ${skipped} graded before (skipped)` : ""}`);
    },
    begin: () => {},
    phase: () => {},
    end: (_worker, result) => {
      done += 1;
      if (result.resolved) resolved += 1;
      if (!quiet) write(verdictLine(result, done, total, resolved));
    },
    message: (line) => write(line),
    stop: () => {},
  };
}

/** On a terminal: a bar with the resolve rate, a line per worker (instance, step, time), redrawn in place. */
export function terminalEvalDisplay(stream: NodeJS.WriteStream, workers: number): EvalDisplay {
  let total = 0;
  let done = 0;
  let resolved = 0;
  const counts = new Map<string, number>();
  const lines = new Map<number, { instance: string; phase: string; started: number }>();
  const started = Date.now();
  const block = terminalBlock(stream);
  const draw = () => {
    const out = [
      `${progressBar(done, total)} ${done}/${total} graded  resolved ${resolved}  elapsed ${seconds((Date.now() - started) / 1000)}`,
    ];
    for (let w = 1; w <= workers; w++) {
      const line = lines.get(w);
      out.push(
        line
          ? `  w${w} ${line.instance}  ${pc.cyan(line.phase)}  ${seconds((Date.now() - line.started) / 1000)}`
          : pc.dim(`  w${w} idle`),
      );
    }
    out.push(
      `  ${[...counts].map(([status, n]) => `${status} ${n}`).join(" · ") || pc.dim("nothing graded yet")}`,
    );
    block.draw(out);
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  return {
    start: (n) => {
      total = n;
      draw();
    },
    begin: (worker, instance) => lines.set(worker, { instance, phase: "starting", started: Date.now() }),
    phase: (worker, phase) => {
      const line = lines.get(worker);
      if (line) line.phase = phase;
    },
    end: (worker, result) => {
      done += 1;
      if (result.resolved) resolved += 1;
      lines.delete(worker);
      counts.set(result.status, (counts.get(result.status) ?? 0) + 1);
    },
    message: (line) => {
      block.print(line);
      draw();
    },
    stop: () => {
      clearInterval(timer);
      draw();
    },
  };
}
