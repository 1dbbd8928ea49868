import { readFileSync, statSync } from "node:fs";
import { UserError } from "../errors.js";

/** Which instances to run, from `--filter`, `--instance-ids`, `--slice` and `--shuffle`. */
export interface Selection {
  /** Regex matched at the start of `instance_id` (Python `re.match`); empty keeps all. */
  filter?: string;
  /** Python slice `start:stop[:step]`; a single number is a stop, as in mini-swe-agent (`5` = `:5`). */
  slice?: string;
  /** Sort by id, then shuffle with Python's `random.seed(42)` (the same order as mini-swe-agent). */
  shuffle?: boolean;
  /** Comma-separated ids, or the path of a file with one id per line (blank lines and `#` lines skipped). */
  instanceIds?: string;
  /** `i/n`: after everything else, every n-th instance starting at the i-th (1-based). */
  shard?: string;
}

/** The seed of `--shuffle`, as in mini-swe-agent. */
export const SHUFFLE_SEED = 42;

/**
 * Applies a selection in mini-swe-agent's order (`filter_instances`): sort and shuffle, then the filter
 * regex, then the instance ids (kept in dataset order), then the slice.
 */
export function selectInstances<T extends { instance_id: string }>(
  instances: T[],
  selection: Selection,
): T[] {
  let selected = [...instances];
  if (selection.shuffle) {
    selected.sort((a, b) => (a.instance_id < b.instance_id ? -1 : a.instance_id > b.instance_id ? 1 : 0));
    shuffleLikePython(selected, SHUFFLE_SEED);
  }
  if (selection.filter) {
    const regex = filterRegex(selection.filter);
    selected = selected.filter((instance) => {
      regex.lastIndex = 0;
      return regex.test(instance.instance_id);
    });
  }
  if (selection.instanceIds !== undefined) {
    const wanted = new Set(parseInstanceIds(selection.instanceIds));
    const known = new Set(instances.map((instance) => instance.instance_id));
    const unknown = [...wanted].filter((id) => !known.has(id));
    if (unknown.length > 0) {
      const shown =
        unknown.slice(0, 10).join(", ") + (unknown.length > 10 ? `, and ${unknown.length - 10} more` : "");
      throw new UserError(`--instance-ids: not in the dataset: ${shown}`);
    }
    selected = selected.filter((instance) => wanted.has(instance.instance_id));
  }
  if (selection.slice) selected = applySlice(selected, selection.slice);
  return selection.shard ? applyShard(selected, selection.shard) : selected;
}

/** `i/n` as numbers, checked: 1 ≤ i ≤ n. */
export function parseShard(spec: string): { index: number; count: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(spec);
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (!match || count < 1 || index < 1 || index > count)
    throw new UserError(`--shard "${spec}": expected i/n with 1 ≤ i ≤ n, e.g. 2/4`);
  return { index, count };
}

/**
 * Shard `i/n` of the selected instances: the ones at positions i-1, i-1+n, i-1+2n, ... Every machine that
 * selects the same instances gets the same shards; each instance is in exactly one, and sizes differ by at
 * most one.
 */
export function applyShard<T>(items: T[], spec: string): T[] {
  const { index, count } = parseShard(spec);
  return items.filter((_, position) => position % count === index - 1);
}

function filterRegex(filter: string): RegExp {
  try {
    return new RegExp(filter, "y");
  } catch (error) {
    throw new UserError(`--filter "${filter}": invalid regular expression (${(error as Error).message})`);
  }
}

/** The ids of `--instance-ids`: a file with one id per line when `value` names a file, else a comma list. */
export function parseInstanceIds(value: string): string[] {
  const isFile = statSync(value, { throwIfNoEntry: false })?.isFile() ?? false;
  const ids = isFile
    ? readFileSync(value, "utf8")
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line !== "" && !line.startsWith("#"))
    : value
        .split(",")
        .map((id) => id.trim())
        .filter((id) => id !== "");
  if (ids.length === 0)
    throw new UserError(`--instance-ids: no instance ids in ${isFile ? value : `"${value}"`}`);
  return ids;
}

/** `items[start:stop:step]` with Python's rules (negative indices count from the end, bounds are clamped). */
export function applySlice<T>(items: T[], spec: string): T[] {
  const parts = spec.split(":");
  if (parts.length > 3) throw new UserError(`--slice "${spec}": expected start:stop or start:stop:step`);
  const numbers = parts.map((part) => {
    if (part.trim() === "") return undefined;
    if (!/^\s*[+-]?\d+\s*$/.test(part)) throw new UserError(`--slice "${spec}": "${part}" is not an integer`);
    return Number.parseInt(part, 10);
  });
  // A lone number is a stop, as Python's slice(n).
  const [start, stop, step = 1] = numbers.length === 1 ? [undefined, numbers[0]] : numbers;
  if (step === 0) throw new UserError(`--slice "${spec}": step cannot be zero`);
  const length = items.length;
  const clamp = (index: number) => {
    const value = index < 0 ? index + length : index;
    if (value < 0) return step < 0 ? -1 : 0;
    if (value >= length) return step < 0 ? length - 1 : length;
    return value;
  };
  const from = start === undefined ? (step < 0 ? length - 1 : 0) : clamp(start);
  const to = stop === undefined ? (step < 0 ? -1 : length) : clamp(stop);
  const result: T[] = [];
  for (let i = from; step > 0 ? i < to : i > to; i += step) result.push(items[i] as T);
  return result;
}

/** Shuffles in place exactly as CPython's `random.seed(seed); random.shuffle(items)` (MT19937). */
export function shuffleLikePython<T>(items: T[], seed: number): void {
  const random = new PythonRandom(seed);
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.below(i + 1);
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
}

/** CPython's Mersenne Twister, seeded from a 32-bit integer the way `random.seed(int)` does. */
class PythonRandom {
  private readonly mt = new Uint32Array(624);
  private index = 624;

  constructor(seed: number) {
    const mt = this.mt;
    mt[0] = 19650218;
    for (let i = 1; i < 624; i++) mt[i] = Math.imul(1812433253, this.prev(i)) + i;
    // init_by_array with the key [seed]
    let i = 1;
    for (let k = 624; k > 0; k--) {
      mt[i] = ((mt[i] as number) ^ Math.imul(this.prev(i), 1664525)) + (seed >>> 0);
      i = this.wrap(i + 1);
    }
    for (let k = 623; k > 0; k--) {
      mt[i] = ((mt[i] as number) ^ Math.imul(this.prev(i), 1566083941)) - i;
      i = this.wrap(i + 1);
    }
    mt[0] = 0x80000000;
  }

  /** A uniform integer in [0, n), as `_randbelow_with_getrandbits`. */
  below(n: number): number {
    const shift = Math.clz32(n);
    let r = this.next() >>> shift;
    while (r >= n) r = this.next() >>> shift;
    return r;
  }

  private prev(i: number): number {
    const value = this.mt[i - 1] as number;
    return value ^ (value >>> 30);
  }

  private wrap(i: number): number {
    if (i < 624) return i;
    this.mt[0] = this.mt[623] as number;
    return 1;
  }

  private next(): number {
    const mt = this.mt;
    if (this.index >= 624) {
      for (let k = 0; k < 624; k++) {
        const y = ((mt[k] as number) & 0x80000000) | ((mt[(k + 1) % 624] as number) & 0x7fffffff);
        mt[k] = (mt[(k + 397) % 624] as number) ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++] as number;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }
}
