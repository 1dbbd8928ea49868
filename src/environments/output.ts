import { longestSecretBytes, redact, secretAcross } from "../util/secrets.js";

/**
 * Collects a command's output bytes under a size cap. Past the cap, the middle is dropped: the first and
 * last halves are kept and a marker says how much was cut. Decoding is UTF-8 with replacement characters,
 * then `\r\n` and a lone `\r` become `\n`, as Python's text-mode read does in mini-swe-agent.
 *
 * The output comes back with its secrets redacted: a registered secret never reaches the observation,
 * whatever cuts it later (the cut here, a template's `output[:5000]`). The cut itself never splits a secret
 * (it moves out of one, so each piece is whole on one side and redacted): a few bytes past each half are
 * kept to see one.
 */
export class OutputCollector {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  /** Bytes kept past the head's limit and before the tail's, to see a secret the cut would split. */
  readonly #margin: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #total = 0;

  constructor(maxBytes: number) {
    this.#headLimit = Math.ceil(maxBytes / 2);
    this.#tailLimit = Math.floor(maxBytes / 2);
    this.#margin = Math.max(0, longestSecretBytes() - 1);
  }

  get totalBytes(): number {
    return this.#total;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    let rest = chunk;
    const headKeep = this.#headLimit + this.#margin;
    if (this.#headBytes < headKeep) {
      const take = Math.min(rest.length, headKeep - this.#headBytes);
      this.#head.push(rest.subarray(0, take));
      this.#headBytes += take;
      rest = rest.subarray(take);
    }
    const tailKeep = this.#tailLimit + this.#margin;
    if (rest.length === 0 || tailKeep === 0) return;
    this.#tail.push(rest);
    this.#tailBytes += rest.length;
    while (this.#tailBytes - (this.#tail[0]?.length ?? 0) >= tailKeep) {
      this.#tailBytes -= this.#tail.shift()?.length ?? 0;
    }
  }

  /** The decoded output (secrets redacted), and how much was elided when the cap was hit. */
  result(): { output: string; truncated?: { total_bytes: number; elided_bytes: number } } {
    const head = Buffer.concat(this.#head);
    let tail = Buffer.concat(this.#tail);
    const tailKeep = this.#tailLimit + this.#margin;
    if (tail.length > tailKeep) tail = tail.subarray(tail.length - tailKeep);
    if (this.#total <= this.#headLimit + this.#tailLimit)
      return { output: redact(decodeText(Buffer.concat([head, tail]))) };
    // Both halves in one buffer when nothing between them was dropped (the margins overlap).
    const whole = head.length + tail.length === this.#total;
    const headBuffer = whole ? Buffer.concat([head, tail]) : head;
    const tailBuffer = whole ? headBuffer : tail;
    let headEnd = this.#headLimit;
    let tailStart = tailBuffer.length - this.#tailLimit;
    for (let span = secretAcross(headBuffer, headEnd); span; span = secretAcross(headBuffer, headEnd))
      headEnd = span.start;
    for (let span = secretAcross(tailBuffer, tailStart); span; span = secretAcross(tailBuffer, tailStart))
      tailStart = span.end;
    const kept = [headBuffer.subarray(0, headEnd), tailBuffer.subarray(tailStart)] as const;
    const elided = this.#total - kept[0].length - kept[1].length;
    const marker = `\n<swerun: ${elided} bytes of output elided from the middle (${this.#total} bytes in all)>\n`;
    return {
      output: redact(decodeText(kept[0])) + marker + redact(decodeText(kept[1])),
      truncated: { total_bytes: this.#total, elided_bytes: elided },
    };
  }
}

/** Bytes as Python's `text=True` pipes read them: UTF-8 (errors replaced), universal newlines. */
export function decodeText(bytes: Buffer): string {
  return bytes.toString("utf8").replace(/\r\n?/g, "\n");
}
