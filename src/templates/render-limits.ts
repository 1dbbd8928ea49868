/**
 * What one template render may take: rendering is synchronous, so a template that loops for ever would hold
 * the process (and its SIGTERM and Ctrl-C handlers, which run only between renders) until V8 ran out of memory.
 * Loops check the clock and the text rendered so far on every iteration (the clock every 1024), so a render
 * ends at the first limit with a RenderLimitError, which becomes the template's one-line error (exit 2).
 */
export const RENDER_LIMITS = {
  /** Wall time of one render: legitimate prompts render in milliseconds. */
  seconds: 5,
  /** Characters rendered: 64 Mi, about 16 M tokens, more than any model reads (an observation of 1 MiB fits). */
  chars: 64 * 1024 * 1024,
  /** Numbers a `range()` may hold (Python's is lazy; this one is a list: 10 M is 80 MB). */
  rangeItems: 10_000_000,
} as const;

/** A render that passed one of RENDER_LIMITS. */
export class RenderLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RenderLimitError";
  }
}

let deadline = Number.POSITIVE_INFINITY;
let ticks = 0;

/** Starts the clock of a render; the returned function stops it (renders may nest: the outer clock comes back). */
export function startRender(): () => void {
  const outer = deadline;
  deadline = Math.min(outer, Date.now() + RENDER_LIMITS.seconds * 1000);
  return () => {
    deadline = outer;
  };
}

/** Throws when `rendered` (the text so far) is over the size limit. */
export function checkRenderedSize(rendered: string): void {
  if (rendered.length > RENDER_LIMITS.chars)
    throw new RenderLimitError(
      `the rendered text passed ${RENDER_LIMITS.chars} characters (64 Mi), more than a template may render; an endless or very long loop?`,
    );
}

/** One loop iteration: throws when the render is over its time or its text over its size. */
export function renderTick(rendered: string): void {
  checkRenderedSize(rendered);
  ticks = (ticks + 1) & 1023;
  if (ticks === 0 && Date.now() > deadline)
    throw new RenderLimitError(
      `rendering took more than ${RENDER_LIMITS.seconds} s, longer than a template may take; an endless or very long loop?`,
    );
}
