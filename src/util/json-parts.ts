import { closeSync, openSync, readSync } from "node:fs";

/**
 * Reads a JSON file whose top level is an object without ever holding its whole text: it reads the file a
 * chunk at a time and parses each top-level member on its own, and each element of the arrays named in
 * `arrays` on its own (a long trajectory's messages). JSON.parse of a whole file holds its text (as large as
 * the file) beside what it builds; here only one value's text is held at a time, so reading a 6 MB
 * trajectory back at the end of a run costs ~6 MB less at its peak (bench/lean.ts).
 *
 * The result is what JSON.parse of the whole text gives. Undefined when the file is not such an object, or
 * a part of it is not JSON: the caller reads it whole, whose error says where.
 */
export function readJsonInParts(
  path: string,
  arrays: ReadonlySet<string>,
  chunk = CHUNK,
): Record<string, unknown> | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    return new Parts(fd, chunk).object(arrays);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

const CHUNK = 1 << 20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x7b, 0x5b]); // { [
const CLOSE = new Set([0x7d, 0x5d]); // } ]
const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Not JSON, or not an object whose parts this reads. */
class NotParts extends Error {}

/** A window on the file: the bytes from the start of the value being read to what has been read so far. */
class Parts {
  readonly #fd: number;
  readonly #chunk: number;
  #bytes: Buffer = Buffer.alloc(0);
  /** Where in the file the next read starts. */
  #read = 0;
  #ended = false;
  /** The next byte to look at, in `#bytes`. */
  #at = 0;
  /** Where the value being read starts, in `#bytes`: what reading on keeps. */
  #mark = 0;

  constructor(fd: number, chunk: number) {
    this.#fd = fd;
    this.#chunk = chunk;
  }

  /** Reads more of the file, keeping the bytes from the mark on (which moves to 0); false at its end. */
  #more(): boolean {
    if (this.#ended) return false;
    const chunk = Buffer.allocUnsafe(this.#chunk);
    const count = readSync(this.#fd, chunk, 0, this.#chunk, this.#read);
    if (count === 0) {
      this.#ended = true;
      return false;
    }
    this.#read += count;
    this.#bytes = Buffer.concat([this.#bytes.subarray(this.#mark), chunk.subarray(0, count)]);
    this.#at -= this.#mark;
    this.#mark = 0;
    return true;
  }

  /** The byte at the cursor after any white space (read on as needed); -1 at the end of the file. */
  #peek(): number {
    for (;;) {
      while (this.#at < this.#bytes.length && SPACE.has(this.#bytes[this.#at] as number)) this.#at += 1;
      if (this.#at < this.#bytes.length) return this.#bytes[this.#at] as number;
      this.#mark = this.#at;
      if (!this.#more()) return -1;
    }
  }

  #expect(byte: number): void {
    if (this.#peek() !== byte) throw new NotParts();
    this.#at += 1;
  }

  /** The text of the JSON value at the cursor (after white space), the cursor moved past it. */
  #valueText(): string {
    this.#peek();
    this.#mark = this.#at;
    let depth = 0;
    for (;;) {
      if (this.#at >= this.#bytes.length && !this.#more()) {
        if (depth > 0) throw new NotParts();
        return this.#text();
      }
      const byte = this.#bytes[this.#at] as number;
      if (byte === QUOTE) {
        this.#skipString();
        if (depth === 0) return this.#text();
      } else if (OPEN.has(byte)) {
        depth += 1;
        this.#at += 1;
      } else if (CLOSE.has(byte)) {
        if (depth === 0) return this.#text();
        depth -= 1;
        this.#at += 1;
        if (depth === 0) return this.#text();
      } else if (depth === 0 && (byte === 0x2c || SPACE.has(byte))) {
        return this.#text();
      } else {
        this.#at += 1;
      }
    }
  }

  /** The bytes from the mark to the cursor, as text: one value, or nothing (not JSON). */
  #text(): string {
    if (this.#at === this.#mark) throw new NotParts();
    return this.#bytes.toString("utf8", this.#mark, this.#at);
  }

  /** Moves the cursor past the string that starts at it (reading on as needed). */
  #skipString(): void {
    let from = this.#at + 1;
    for (;;) {
      const quote = this.#bytes.indexOf(QUOTE, from);
      if (quote < 0) {
        const searched = this.#bytes.length - this.#mark;
        if (!this.#more()) throw new NotParts();
        from = searched;
        continue;
      }
      let backslashes = 0;
      while (this.#bytes[quote - 1 - backslashes] === BACKSLASH) backslashes += 1;
      if (backslashes % 2 === 0) {
        this.#at = quote + 1;
        return;
      }
      from = quote + 1;
    }
  }

  #parse(): unknown {
    return JSON.parse(this.#valueText());
  }

  /** The top-level object, the arrays named in `arrays` parsed element by element. */
  object(arrays: ReadonlySet<string>): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    this.#expect(0x7b);
    if (this.#peek() === 0x7d) {
      this.#at += 1;
    } else {
      for (;;) {
        const key = this.#parse();
        if (typeof key !== "string") throw new NotParts();
        this.#expect(0x3a);
        const value = arrays.has(key) && this.#peek() === 0x5b ? this.#array() : this.#parse();
        // As JSON.parse: an own property even for "__proto__", the last of repeated keys.
        Object.defineProperty(result, key, { value, writable: true, enumerable: true, configurable: true });
        if (this.#peek() !== 0x2c) break;
        this.#at += 1;
      }
      this.#expect(0x7d);
    }
    if (this.#peek() !== -1) throw new NotParts();
    return result;
  }

  #array(): unknown[] {
    const list: unknown[] = [];
    this.#expect(0x5b);
    if (this.#peek() === 0x5d) {
      this.#at += 1;
      return list;
    }
    for (;;) {
      list.push(this.#parse());
      if (this.#peek() !== 0x2c) break;
      this.#at += 1;
    }
    this.#expect(0x5d);
    return list;
  }
}
