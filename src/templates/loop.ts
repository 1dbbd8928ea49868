/** Jinja2's `loop` variable inside `{% for %}`: one object per loop, advanced on each iteration. */

import { typeError } from "./py-errors.js";
import { pyEq } from "./py-ops.js";
import { undefinedWithHint } from "./undefined.js";

export class LoopContext {
  readonly #items: readonly unknown[];
  #index0 = 0;
  #lastChanged: unknown[] | undefined;
  readonly depth = 1;
  readonly depth0 = 0;

  constructor(items: readonly unknown[]) {
    this.#items = items;
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
