/** How many bytes of output may wait behind a stream's last bytes before those are taken as the script's. */
const WAIT_LIMIT = 4 * 1024 * 1024;

/** A piece of output waiting in arrival order: bytes of one stream from `start` (its offset in that stream). */
interface Piece {
  data: Buffer;
  stderr: boolean;
  start: number;
}

interface StreamState {
  /** Bytes seen so far. */
  total: number;
  /** Where the token line starts (once seen). */
  cut?: number;
  /** Bytes known to come before the token line. */
  safe: number;
  /** The last bytes seen (fewer than the token line), where a token line cut by a chunk boundary starts. */
  tail: Buffer;
}

/**
 * The tests' exec output split as it arrives (see `splitEvalOutput`): the eval script's own output, each
 * stream cut at its token line and the two merged in arrival order, goes to `onTest` as soon as it is
 * known to be the script's; stdout after its token line (the diff) is kept. Only bytes that could still be
 * the start of a token line, and output that arrived after them, wait; nothing else is held.
 */
export class EvalOutputSplitter {
  readonly #line: Buffer;
  readonly #onTest: (data: Buffer) => void;
  readonly #streams: [StreamState, StreamState];
  readonly #queue: Piece[] = [];
  readonly #diff: Buffer[] = [];
  /** Bytes in the queue. */
  #queued = 0;

  constructor(token: string, onTest: (data: Buffer) => void) {
    this.#line = Buffer.from(`\n${token}\n`);
    this.#onTest = onTest;
    const state = (): StreamState => ({ total: 0, safe: 0, tail: Buffer.alloc(0) });
    this.#streams = [state(), state()];
  }

  /** One chunk of the exec's output as it arrived. */
  push(data: Buffer, stderr: boolean): void {
    if (data.length === 0) return;
    const state = this.#streams[stderr ? 1 : 0];
    const piece = { data, stderr, start: state.total };
    state.total += data.length;
    if (state.cut === undefined) this.#findToken(state, data);
    this.#queue.push(piece);
    this.#queued += data.length;
    this.#drain();
    this.#unblock();
    // What waits may be a view of a chunk the stream reuses: it keeps a copy.
    if (this.#queue.at(-1) === piece) piece.data = Buffer.from(piece.data);
  }

  /**
   * The end of the output. When both streams printed their token line, the diff after stdout's; otherwise
   * (the script never finished) everything not given yet goes to `onTest`, in arrival order, and no diff.
   */
  end(): { diff?: Buffer } {
    const [out, err] = this.#streams;
    if (out.cut !== undefined && err.cut !== undefined) {
      this.#drain();
      return { diff: Buffer.concat(this.#diff) };
    }
    for (const piece of this.#queue) this.#onTest(piece.data);
    this.#queue.length = 0;
    return {};
  }

  #findToken(state: StreamState, data: Buffer): void {
    const line = this.#line;
    const seen = state.total - data.length;
    const keep = line.length - 1;
    // A token line that starts in the bytes before this chunk, then one inside it.
    const seam = Buffer.concat([state.tail, data.subarray(0, keep)]);
    const across = seam.indexOf(line);
    const inside = across !== -1 && across < state.tail.length ? -1 : data.indexOf(line);
    if (across !== -1 && across < state.tail.length) state.cut = seen - state.tail.length + across;
    else if (inside !== -1) state.cut = seen + inside;
    if (state.cut !== undefined) {
      state.safe = state.cut;
      state.tail = Buffer.alloc(0);
      return;
    }
    const last =
      data.length >= keep
        ? data.subarray(data.length - keep)
        : Buffer.concat([state.tail, data]).subarray(-keep);
    // The longest end of what was seen that a token line could start with waits.
    let open = Math.min(keep, last.length);
    while (open > 0 && !line.subarray(0, open).equals(last.subarray(last.length - open))) open -= 1;
    state.safe = state.total - open;
    state.tail = Buffer.from(last);
  }

  /**
   * Bytes that could start a token line wait for their stream's next chunk, and the other stream's output
   * waits behind them, to keep the arrival order. When more than WAIT_LIMIT bytes wait so, the few bytes
   * are taken as the script's (a token line would have to be cut in two with megabytes of the other
   * stream's output in between, from one `printf`; then no token is found and the grading is an error).
   */
  #unblock(): void {
    const front = this.#queue[0];
    if (!front || this.#queued <= WAIT_LIMIT) return;
    const state = this.#streams[front.stderr ? 1 : 0];
    if (state.cut !== undefined || front.start < state.safe) return;
    state.safe = state.total;
    state.tail = Buffer.alloc(0);
    this.#drain();
  }

  /** Gives the script's output from the front of the queue, up to the first bytes not yet known. */
  #drain(): void {
    const queue = this.#queue;
    const [out, err] = this.#streams;
    const finished = out.cut !== undefined && err.cut !== undefined;
    let taken = 0;
    while (taken < queue.length) {
      const piece = queue[taken] as Piece;
      const state = piece.stderr ? err : out;
      if (piece.start < state.safe) {
        const take = Math.min(piece.data.length, state.safe - piece.start);
        this.#onTest(piece.data.subarray(0, take));
        this.#queued -= take;
        piece.data = piece.data.subarray(take);
        piece.start += take;
        if (piece.data.length === 0) {
          taken += 1;
          continue;
        }
      }
      if (!finished) break;
      // After the token line: stdout's rest is the diff; stderr's is dropped.
      if (!piece.stderr) {
        const from = Math.max(0, (state.cut as number) + this.#line.length - piece.start);
        if (from < piece.data.length) this.#diff.push(Buffer.from(piece.data.subarray(from)));
      }
      this.#queued -= piece.data.length;
      taken += 1;
    }
    queue.splice(0, taken);
  }
}
