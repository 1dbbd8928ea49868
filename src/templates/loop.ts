/**
 * Jinja2's `loop` variable inside `{% for %}`: one object per loop, advanced on each iteration. In a
 * `recursive` loop, `loop(items)` renders the loop body for `items` one level deeper.
 */

import { PyError, typeError } from "../python/errors.js";
import { pyEq } from "../python/ops.js";
import { undefinedWithHint } from "../python/undefined.js";

export class LoopContext {
  /** The class name Jinja2 error messages use. */
  static readonly pyQualName = "jinja2.runtime.LoopContext";
  readonly #items: readonly unknown[];
  readonly #recurse: ((items: unknown, depth: number) => string) | undefined;
  #index0 = 0;
  #lastChanged: unknown[] | undefined;
  readonly depth: number;

  constructor(items: readonly unknown[], depth = 1, recurse?: (items: unknown, depth: number) => string) {
    this.#items = items;
    this.depth = depth;
    this.#recurse = recurse;
  }

  get depth0(): number {
    return this.depth - 1;
  }

  /** `loop(items)` in a recursive loop. */
  __call__(args: unknown[]): string {
    if (!this.#recurse)
      throw typeError("The loop must have the 'recursive' marker to be called recursively.");
    if (args.length !== 1)
      throw new PyError("TypeError", `loop() takes exactly 1 argument (${args.length} given)`);
    return this.#recurse(args[0], this.depth + 1);
  }

  /** Moves to iteration `i` (0-based); returns this. */
  advance(i: number): this {
    this.#index0 = i;
    return this;
  }

  get length(): number {
    return this.#items.length;
  }
  get index0(): number {
    return this.#index0;
  }
  get index(): number {
    return this.#index0 + 1;
  }
  get revindex(): number {
    return this.#items.length - this.#index0;
  }
  get revindex0(): number {
    return this.#items.length - this.#index0 - 1;
  }
  get first(): boolean {
    return this.#index0 === 0;
  }
  get last(): boolean {
    return this.#index0 === this.#items.length - 1;
  }
  get previtem(): unknown {
    return this.#index0 > 0 ? this.#items[this.#index0 - 1] : undefinedWithHint("there is no previous item");
  }
  get nextitem(): unknown {
    const i = this.#index0 + 1;
    return i < this.#items.length ? this.#items[i] : undefinedWithHint("there is no next item");
  }

  cycle(...args: unknown[]): unknown {
    if (args.length === 0) throw typeError("no items for cycling given");
    return args[this.#index0 % args.length];
  }

  changed(...args: unknown[]): boolean {
    if (this.#lastChanged !== undefined && pyEq(args, this.#lastChanged)) return false;
    this.#lastChanged = args;
    return true;
  }

  __repr__(): string {
    return `<LoopContext ${this.index}/${this.length}>`;
  }
}
