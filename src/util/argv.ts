/** cac reads a lone `-` as a flag, so `--events -` (standard output) is passed on as `--events=-`. */
export function joinDashValues(argv: string[]): string[] {
  const joined: string[] = [];
  for (const arg of argv) {
    if (arg === "-" && joined.at(-1) === "--events") joined[joined.length - 1] = "--events=-";
    else joined.push(arg);
  }
  return joined;
}
