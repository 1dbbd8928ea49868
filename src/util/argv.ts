/** The flags whose value may be `-` (standard output). */
const DASH_FLAGS = new Set(["--events", "--report", "-o", "--output"]);

/** cac reads a lone `-` as a flag, so `--events -` (standard output) is passed on as `--events=-`. */
export function joinDashValues(argv: string[]): string[] {
  const joined: string[] = [];
  for (const arg of argv) {
    const previous = joined.at(-1);
    if (arg === "-" && previous !== undefined && DASH_FLAGS.has(previous))
      joined[joined.length - 1] = `${previous}=-`;
    else joined.push(arg);
  }
  return joined;
}
