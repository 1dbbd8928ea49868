/**
 * Jinja2's StrictUndefined: a missing variable or attribute evaluates to a `JinjaUndefined` value that
 * fails (with an UndefinedError) as soon as it is printed, iterated, compared, tested for truth, used in
 * arithmetic or looked into; only `is defined`/`is undefined`, `default` and a few type tests accept it.
 */

export class UndefinedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UndefinedError";
  }
}

export class JinjaUndefined {
  /**
   * @param describe builds the message lazily (most undefined values are only tested with `is defined`)
   */
  constructor(private readonly describe: () => string) {}

  get message(): string {
    return this.describe();
  }

  /** Raises the UndefinedError this value stands for. */
  fail(): never {
    throw new UndefinedError(this.describe());
  }
}

export function isUndefined(x: unknown): x is JinjaUndefined {
  return x instanceof JinjaUndefined;
}

/** Throws if `x` is undefined, otherwise returns it. */
export function checkDefined<T>(x: T): Exclude<T, JinjaUndefined> {
  if (x instanceof JinjaUndefined) x.fail();
  return x as Exclude<T, JinjaUndefined>;
}

/** An undefined value carrying a fixed message (Jinja's `undefined(hint)`). */
export function undefinedWithHint(hint: string): JinjaUndefined {
  return new JinjaUndefined(() => hint);
}
