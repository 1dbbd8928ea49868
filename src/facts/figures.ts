/**
 * How the facts' figures are written: the one rounding of each figure a JSON output stores rounded, and the one
 * text of each figure a person reads (the console, `swerun runs`, the view). The facts themselves are kept at
 * full precision; outputs round or print them here, never sum what was rounded.
 */

/** Seconds as JSON outputs store them (wall times, durations): to the millisecond. */
export function roundSeconds(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

/** sniffbench's `costUsd`: dollars to 4 decimals. */
export function roundUsd(dollars: number): number {
  return Math.round(dollars * 10000) / 10000;
}

/** A cost as every output prints it: `$0.0133` (4 decimals, whatever the size). */
export function usd(dollars: number): string {
  return `$${dollars.toFixed(4)}`;
}

/** A count as people read it: 12345 → "12,345" (toLocaleString would load ICU's data: 150 ms on a slow machine). */
export function count(value: number): string {
  return String(Math.round(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A duration as people read it: `850 ms`, `12.3 s`, `4 min 5 s`, `1.2 h`. */
export function seconds(value: number): string {
  if (value < 1) return `${Math.round(value * 1000)} ms`;
  if (value < 60) return `${value.toFixed(1)} s`;
  const minutes = Math.floor(value / 60);
  return minutes < 60 ? `${minutes} min ${Math.round(value % 60)} s` : `${(value / 3600).toFixed(1)} h`;
}

/** "1 step", "3 steps". */
export function plural(value: number, noun: string): string {
  return `${count(value)} ${noun}${value === 1 ? "" : "s"}`;
}

/** The figures of a run or an instance a console line shows (what it cost, its steps and requests, its wall time). */
export interface RunFigures {
  cost: number | null;
  steps: number;
  attempts: number;
  wall_time_s: number | null;
}

/**
 * A run's figures in one line, as every console line says them: `$0.0133 · 5 steps · 6 model requests
 * (1 failed) · 12.3 s`. Steps are replies; model requests are every HTTP request, those without a reply
 * (retried, or never answered) counted as failed.
 */
export function figuresLine(facts: RunFigures): string {
  const failed = facts.attempts - facts.steps;
  return [
    usd(facts.cost ?? 0),
    plural(facts.steps, "step"),
    `${plural(facts.attempts, "model request")}${failed > 0 ? ` (${count(failed)} failed)` : ""}`,
    ...(facts.wall_time_s === null ? [] : [seconds(facts.wall_time_s)]),
  ].join(" · ");
}
