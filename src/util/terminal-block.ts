import pc from "picocolors";

/** `42s`, `3m07s`: elapsed and remaining times on progress displays. */
export function formatSeconds(s: number): string {
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(Math.floor(s % 60)).padStart(2, "0")}s` : `${s.toFixed(0)}s`;
}

/** A bar of `width` cells, filled in proportion to done / total. */
export function progressBar(done: number, total: number, width = 24): string {
  const filled = total > 0 ? Math.round((done / total) * width) : 0;
  return `${pc.green("█".repeat(filled))}${pc.dim("░".repeat(width - filled))}`;
}

/**
 * A block of lines on a terminal that each `draw` replaces; `print` writes a line that stays in its place
 * (the caller draws the block again below it).
 */
export function terminalBlock(stream: NodeJS.WritableStream) {
  let drawn = 0;
  const write = (text: string, lines: number) => {
    stream.write(`${drawn > 0 ? `\x1b[${drawn}F\x1b[J` : ""}${text}\n`);
    drawn = lines;
  };
  return {
    draw: (lines: string[]) => write(lines.join("\n"), lines.length),
    print: (line: string) => write(line, 0),
  };
}
