/**
 * Collects a command's output bytes under a size cap. Past the cap, the middle is dropped: the first and
 * last halves are kept and a marker says how much was cut. Decoding is UTF-8 with replacement characters,
 * then `\r\n` and a lone `\r` become `\n`, as Python's text-mode read does in mini-swe-agent.
 */
export class OutputCollector {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #total = 0;

  constructor(maxBytes: number) {
    this.#headLimit = Math.ceil(maxBytes / 2);
    this.#tailLimit = Math.floor(maxBytes / 2);
  }

  get totalBytes(): number {
    return this.#total;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#headLimit) {
      const take = Math.min(rest.length, this.#headLimit - this.#headBytes);
      this.#head.push(rest.subarray(0, take));
      this.#headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.#tailLimit === 0) return;
    this.#tail.push(rest);
    this.#tailBytes += rest.length;
    while (this.#tailBytes - (this.#tail[0]?.length ?? 0) >= this.#tailLimit) {
      this.#tailBytes -= this.#tail.shift()?.length ?? 0;
    }
  }

  /** The decoded output, and how much was elided when the cap was hit. */
  result(): { output: string; truncated?: { total_bytes: number; elided_bytes: number } } {
    const head = Buffer.concat(this.#head);
    let tail = Buffer.concat(this.#tail);
    if (tail.length > this.#tailLimit) tail = tail.subarray(tail.length - this.#tailLimit);
    const elided = this.#total - head.length - tail.length;
    if (elided <= 0) return { output: decodeText(Buffer.concat([head, tail])) };
    const marker = `\n<swerun: ${elided} bytes of output elided from the middle (${this.#total} bytes in all)>\n`;
    return {
      output: decodeText(head) + marker + decodeText(tail),
      truncated: { total_bytes: this.#total, elided_bytes: elided },
    };
  }
}

/** Bytes as Python's `text=True` pipes read them: UTF-8 (errors replaced), universal newlines. */
export function decodeText(bytes: Buffer): string {
  return bytes.toString("utf8").replace(/\r\n?/g, "\n");
}
