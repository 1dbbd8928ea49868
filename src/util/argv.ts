/** The flags whose value may be `-` (standard output). */
const DASH_FLAGS = new Set(["--events", "--report", "-o", "--output"]);

/**
 * The parser turns an empty value into the number 0, so `--docker-host ""` would be reported as "0": it is
 * passed on as the two characters `""`, which the flag's check then names as they were typed.
 */
export function quoteEmptyValues(argv: string[]): string[] {
  return argv.map((arg, i) => (arg === "" && argv[i - 1] === "--docker-host" ? '""' : arg));
}

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
