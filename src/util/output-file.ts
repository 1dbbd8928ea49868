import { writeSync } from "node:fs";
import { writeFileAtomic } from "./atomic-write.js";

/**
 * Writes a single-file output checked by checkOutputFile (run/output.ts): `-` to standard output (whole, also into a
 * non-blocking pipe), anything else with writeFileAtomic (which writes through a device and never replaces
 * what is not a regular file).
 */
export function writeOutput(target: string, chunks: Array<string | Buffer>): void {
  if (target !== "-") {
    writeFileAtomic(target, chunks);
    return;
  }
  for (const chunk of chunks) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    let offset = 0;
    while (offset < bytes.length) {
      try {
        offset += writeSync(1, bytes, offset);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      }
    }
  }
}
