/**
 * The framing of the session loops' output (shell/docker-session.pl and .sh), as pure functions: its first line,
 * and the end line that follows each action's output.
 */

/** The first word of the loop's first line; the container's uname fields follow, tab-separated. */
export const READY = "swerun-session ready";

/** The same, from the Perl loop (shell/docker-session.pl), which reads requests in its own framing. */
export const READY_PERL = "swerun-session ready-perl";

/** The line that ends the Perl loop when swerun sends it (the shell loop follows it). */
export const PERL_END = "swerun-session-perl-end";

/** The line that ends the session script when swerun sends it. */
export const SCRIPT_END = "swerun-session-script-end";

/** What the end line says instead of an exit code when the loop could not fork to run the action. */
export const FORK_FAILED = "fork-failed";

/** Which loop answered: the shell's or Perl's. */
export type SessionLoop = "sh" | "perl";

/**
 * The loop's first line: ready or not, which loop, and the container's uname fields named as Python's
 * `platform.uname()`.
 */
export function parseReadyLine(line: string): {
  ready: boolean;
  loop: SessionLoop;
  platform: Record<string, string>;
} {
  const [first, ...uname] = line.split("\t");
  const loop = first === READY_PERL ? "perl" : "sh";
  if (first !== READY && first !== READY_PERL) return { ready: false, loop, platform: {} };
  if (uname.length !== 5 || !uname.every(Boolean)) return { ready: true, loop, platform: {} };
  const [system = "", node = "", release = "", version = "", machine = ""] = uname;
  return { ready: true, loop, platform: { system, node, release, version, machine } };
}

/** How an action ended, from its end line: an exit code, or the loop could not fork to run it. */
export type ActionEnd = { returncode: number } | { forkFailed: true };

/** One step of reading an action's output. */
export interface FrameScan {
  /** The action's output in this step. */
  output: Buffer;
  /** Bytes held back (a possible start of the end line): pass them as `held` with the next chunk. */
  held: Buffer;
  /** Set once the whole end line has arrived; nothing after it belongs to the action. */
  end?: ActionEnd;
}

/**
 * Splits the next chunk of the loop's output during one action into the action's output and its end
 * line, `end` being "\n<nonce> " (the exit code and a newline follow it). Bytes that could be the start
 * of the end line are held back until the next chunk tells.
 */
export function scanActionOutput(held: Buffer, chunk: Buffer, end: Buffer): FrameScan {
  const data = held.length ? Buffer.concat([held, chunk]) : chunk;
  const at = data.indexOf(end);
  if (at < 0) {
    const keep = Math.min(data.length, end.length - 1);
    return {
      output: data.subarray(0, data.length - keep),
      held: Buffer.from(data.subarray(data.length - keep)),
    };
  }
  const output = data.subarray(0, at);
  const newline = data.indexOf(0x0a, at + end.length);
  if (newline < 0) return { output, held: Buffer.from(data.subarray(at)) };
  const code = data.subarray(at + end.length, newline).toString("latin1");
  return {
    output,
    held: Buffer.alloc(0),
    end: code === FORK_FAILED ? { forkFailed: true } : { returncode: Number(code) },
  };
}
