import { isUtf8 } from "node:buffer";
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { AtomicFileStream } from "../util/atomic-stream.js";
import { hasSecrets, StreamRedactor } from "../util/secrets.js";
import { PY_SPACE } from "./log-parsers/python-text.js";

/** A log file as Python's text mode reads it: UTF-8, `\r\n` and lone `\r` turned into `\n`. */
export function readLogText(path: string): string {
  return normaliseNewlines(readFileSync(path, "utf8"));
}

export function normaliseNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/**
 * A test log read in pieces, as many times as asked: `chunks()` gives it cut at line ends (the pieces
 * joined with `\n` are the whole log, newlines normalised as Python's text mode reads them), `text()` all
 * of it at once (for the parsers that read the log as a whole).
 */
export interface TestLog {
  chunks(): Iterable<string>;
  text(): string;
}

/** About how much of a log one piece holds: small enough for the young generation (no large-object space). */
const CHUNK_BYTES = 64 * 1024;

/** A log held as text, in pieces of about `size` characters (cut at the line end after that). */
export function textTestLog(text: string, size = CHUNK_BYTES): TestLog {
  const normalised = normaliseNewlines(text);
  return {
    text: () => normalised,
    *chunks() {
      let from = 0;
      for (;;) {
        const cut = normalised.indexOf("\n", from + size);
        if (cut === -1) {
          yield normalised.slice(from);
          return;
        }
        yield normalised.slice(from, cut);
        from = cut + 1;
      }
    },
  };
}

/** A log file (test_output.txt), read as `readLogText` reads it, a block at a time. */
export function fileTestLog(path: string, size = CHUNK_BYTES): TestLog {
  return {
    text: () => readLogText(path),
    *chunks() {
      const fd = openSync(path, "r");
      try {
        const buffer = Buffer.alloc(size);
        const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
        let carry = "";
        for (;;) {
          const read = readSync(fd, buffer, 0, size, null);
          if (read === 0) break;
          const raw = carry + decoder.decode(buffer.subarray(0, read), { stream: true });
          // A `\r` at the end may be the first half of a `\r\n`: it waits for the next block.
          const held = raw.endsWith("\r") ? "\r" : "";
          const body = held ? raw.slice(0, -1) : raw;
          const text = body.includes("\r") ? normaliseNewlines(body) : body;
          const cut = text.lastIndexOf("\n");
          if (cut === -1) {
            carry = text + held;
            continue;
          }
          yield text.slice(0, cut);
          carry = text.slice(cut + 1) + held;
        }
        yield normaliseNewlines(carry + decoder.decode());
      } finally {
        closeSync(fd);
      }
    },
  };
}

/** The log files of `paths` that exist, read in pieces as if joined by line ends (one log after the other). */
export function joinedFileLogs(paths: string[]): TestLog {
  const logs = paths.filter((path) => existsSync(path)).map((path) => fileTestLog(path));
  return {
    text: () => logs.map((log) => log.text()).join("\n"),
    *chunks() {
      for (const log of logs) yield* log.chunks();
    },
  };
}

/** Whether a line has nothing but whitespace (Python's `\s`: a match can cross line ends only through it). */
const BLANK = new RegExp(`^[${PY_SPACE}]*$`);

/** The last line of `text` that is not blank, or undefined. */
function lastFilledLine(text: string): string | undefined {
  let end = text.length;
  for (;;) {
    const start = end === 0 ? 0 : text.lastIndexOf("\n", end - 1) + 1;
    const line = text.slice(start, end);
    if (!BLANK.test(line)) return line;
    if (start === 0) return undefined;
    end = start - 1;
  }
}

/** `text` up to the end of its first line that is not blank (all of it when every line is blank). */
function upToFirstFilledLine(text: string): string {
  let start = 0;
  for (;;) {
    const end = text.indexOf("\n", start);
    const line = end === -1 ? text.slice(start) : text.slice(start, end);
    if (end === -1 || !BLANK.test(line)) return end === -1 ? text : text.slice(0, end);
    start = end + 1;
  }
}

/**
 * The first match in the whole log of each pattern (non-global), found piece by piece: each piece is
 * searched, and so is the seam between two pieces (the last filled line before it, a line end, the next
 * piece up to its first filled line), which holds every match that crosses it for patterns that cross line
 * ends only through whitespace, as the grading patterns do.
 */
export function firstMatches(log: TestLog, patterns: RegExp[]): Array<RegExpExecArray | undefined> {
  const found: Array<RegExpExecArray | undefined> = patterns.map(() => undefined);
  let carry: string | undefined;
  for (const chunk of log.chunks()) {
    const seam = carry === undefined ? undefined : `${carry}\n${upToFirstFilledLine(chunk)}`;
    for (const [index, pattern] of patterns.entries()) {
      if (found[index]) continue;
      // A match of the seam counts when it starts before the piece (one inside it is the piece's).
      const across = seam === undefined ? null : pattern.exec(seam);
      if (across && across.index <= (carry as string).length) found[index] = across;
      else found[index] = pattern.exec(chunk) ?? undefined;
    }
    if (found.every(Boolean)) break;
    carry = lastFilledLine(chunk) ?? carry;
  }
  return found;
}

/**
 * Where the last character of `data` starts when it is cut off (fewer bytes than its lead byte announces),
 * else `data.length`. Decoding up to there and the rest with what follows gives what decoding it all does.
 */
function completeLength(data: Buffer): number {
  for (let back = 1; back <= Math.min(3, data.length); back++) {
    const byte = data[data.length - back] as number;
    if (byte < 0x80) return data.length;
    if (byte < 0xc0) continue;
    const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return size > back ? data.length - back : data.length;
  }
  return data.length;
}

/**
 * Writes test_output.txt as the tests' output arrives: decoded as the harness decodes it (UTF-8, invalid
 * bytes replaced, a leading BOM kept), secrets redacted, into a temp file that `commit` puts in place
 * (`abort` removes it: an earlier test_output.txt stays). Valid UTF-8 with no secret to redact is written
 * as it came (decoding and encoding it again give the same bytes). Holds only the bytes of a character cut
 * by a chunk boundary and the last characters that could start a secret.
 */
export class TestLogWriter {
  readonly #redactor = new StreamRedactor();
  readonly #file: AtomicFileStream;
  #cut: Buffer = Buffer.alloc(0);

  constructor(path: string) {
    this.#file = new AtomicFileStream(path);
  }

  write(data: Buffer): void {
    const all = this.#cut.length > 0 ? Buffer.concat([this.#cut, data]) : data;
    const complete = completeLength(all);
    this.#cut = Buffer.from(all.subarray(complete));
    this.#add(all.subarray(0, complete));
  }

  /** Ends the log with `suffix` (the timeout line) and puts it in place. */
  commit(suffix = ""): void {
    this.#add(this.#cut);
    this.#cut = Buffer.alloc(0);
    this.#text(this.#redactor.push(suffix) + this.#redactor.end());
    this.#file.commit();
  }

  abort(): void {
    this.#file.abort();
  }

  #add(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (!hasSecrets() && isUtf8(bytes)) this.#file.writeBytes(bytes);
    else this.#text(this.#redactor.push(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes)));
  }

  #text(text: string): void {
    if (text) this.#file.writeBytes(Buffer.from(text, "utf8"));
  }
}
