import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { writeFileAtomic, writeFileAtomicWith } from "../util/atomic-write.js";
import { jsonWithFloats } from "../util/float-json.js";
import { redact } from "../util/secrets.js";
import { indent } from "./layout.js";

/**
 * Adds keys to the `info` of a trajectory file already written (after its run ended: e.g. the run's timing),
 * atomically, in the writer's layout. Keys already there are replaced. A file in the writer's layout has its
 * head (`info`) read, changed and written, and the rest copied as it is, in chunks: a long trajectory is
 * never held in memory; any other file is read and written whole.
 */
export function addTrajectoryInfo(path: string, extra: Record<string, unknown>): void {
  const fd = openSync(path, "r");
  try {
    const end = infoEnd(fd);
    if (end === undefined) {
      addInfoWhole(path, extra);
      return;
    }
    const head = Buffer.alloc(end);
    readSync(fd, head, 0, end, 0);
    const { info } = JSON.parse(`${head.toString("utf8")}}`) as { info: Record<string, unknown> };
    Object.assign(info, extra);
    const text = Buffer.from(redact(`{\n  "info": ${indent(jsonWithFloats(info), "  ")}`), "utf8");
    writeFileAtomicWith(path, (out) => {
      writeAll(out, text);
      const chunk = Buffer.alloc(1 << 20);
      for (let position = end; ; ) {
        const read = readSync(fd, chunk, 0, chunk.length, position);
        if (read === 0) break;
        writeAll(out, chunk.subarray(0, read));
        position += read;
      }
    });
  } finally {
    closeSync(fd);
  }
}

/** Where `info` ends (after its `}`) in a file in the writer's layout; undefined for any other layout. */
function infoEnd(fd: number): number | undefined {
  const start = Buffer.from('{\n  "info": {\n');
  const marker = Buffer.from('\n  },\n  "messages": [');
  let text = Buffer.alloc(0);
  const chunk = Buffer.alloc(1 << 16);
  while (text.length < 1 << 24) {
    const read = readSync(fd, chunk, 0, chunk.length, text.length);
    if (read === 0) return undefined;
    text = Buffer.concat([text, chunk.subarray(0, read)]);
    if (text.length >= start.length && !text.subarray(0, start.length).equals(start)) return undefined;
    // JSON strings hold no raw newline, and deeper levels are indented further: this is `info`'s end.
    const index = text.indexOf(marker);
    if (index >= 0) return index + 4;
  }
  return undefined;
}

function writeAll(fd: number, buffer: Buffer): void {
  for (let offset = 0; offset < buffer.length; ) offset += writeSync(fd, buffer, offset);
}

function addInfoWhole(path: string, extra: Record<string, unknown>): void {
  const trajectory = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const info = trajectory.info;
  if (typeof info !== "object" || info === null || Array.isArray(info)) return;
  Object.assign(info, extra);
  writeFileAtomic(path, [redact(`${jsonWithFloats(trajectory)}\n`)]);
}
