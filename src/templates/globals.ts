/**
 * Jinja2's global functions, available to every template: `range`, `dict`, `cycler`, `joiner`,
 * `namespace` and `lipsum`. To add one, add a line to `makeGlobals`.
 */

import { splitArgs } from "../python/args.js";
import { typeError, valueError } from "../python/errors.js";
import { Markup } from "../python/markup.js";
import { Namespace } from "../python/namespace.js";
import { isIntNumber, isNumeric, numValue, PyFloat } from "../python/number.js";
import { iterate } from "../python/ops.js";
import { checkDefined } from "../python/undefined.js";
import { isDict, pyStr, typeName } from "../python/values.js";
import { RENDER_LIMITS, RenderLimitError } from "./render-limits.js";

function range(...args: unknown[]): number[] {
  const ints = args.map((a) => {
    checkDefined(a);
    if (!isNumeric(a) || !isIntNumber(numValue(a)) || a instanceof PyFloat) {
      throw typeError(`'${typeName(a)}' object cannot be interpreted as an integer`);
    }
    return numValue(a);
  });
  const [start, stop, step] =
    ints.length === 1 ? [0, ints[0] ?? 0, 1] : [ints[0] ?? 0, ints[1] ?? 0, ints[2] ?? 1];
  if (step === 0) throw valueError("range() arg 3 must not be zero");
  const count = Math.max(0, Math.ceil((stop - start) / step));
  if (count > RENDER_LIMITS.rangeItems)
    throw new RenderLimitError(
      `range() of ${count} numbers is more than a template may loop over (${RENDER_LIMITS.rangeItems})`,
    );
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}

/** Python's `dict(mapping_or_pairs, **kwargs)`. */
export function pyDict(args: unknown[]): Record<string, unknown> {
  const { positional, kwargs } = splitArgs(args);
  if (positional.length > 1) throw typeError(`dict expected at most 1 argument, got ${positional.length}`);
  const out: Record<string, unknown> = {};
  const [source] = positional;
  if (isDict(source)) Object.assign(out, source);
  else if (source !== undefined && source !== null) {
    for (const pair of iterate(checkDefined(source))) {
      const [k, v, ...rest] = iterate(pair);
      if (rest.length > 0 || v === undefined)
        throw valueError("dictionary update sequence element has the wrong length; 2 is required");
      out[pyStr(k)] = v;
    }
  }
  for (const [k, v] of kwargs) out[k] = v;
  return out;
}

/** Jinja2's `cycler(*items)`. */
class Cycler {
  /** The class name Jinja2 error messages use. */
  static readonly pyQualName = "jinja2.utils.Cycler";
  readonly #items: unknown[];
  #pos = 0;
  constructor(items: unknown[]) {
    if (items.length === 0) throw typeError("at least one item has to be provided");
    this.#items = items;
  }
  get current(): unknown {
    return this.#items[this.#pos];
  }
  next(): unknown {
    const v = this.current;
    this.#pos = (this.#pos + 1) % this.#items.length;
    return v;
  }
  reset(): void {
    this.#pos = 0;
  }
}

const LOREM = (
  "a ac accumsan ad adipiscing aenean aliquam aliquet amet ante aptent arcu at auctor augue bibendum " +
  "blandit class commodo condimentum congue consectetuer consequat conubia convallis cras cubilia curabitur " +
  "curae cursus dapibus diam dictum dictumst dignissim dis dolor donec dui duis egestas eget eleifend elementum " +
  "elit enim erat eros est et etiam eu euismod facilisi facilisis fames faucibus felis fermentum feugiat " +
  "fringilla fusce gravida habitant habitasse hac hendrerit hymenaeos iaculis id imperdiet in inceptos integer " +
  "interdum ipsum justo lacinia lacus laoreet lectus leo libero ligula litora lobortis lorem luctus maecenas " +
  "magna magnis malesuada massa mattis mauris metus mi molestie mollis montes morbi mus nam nascetur natoque " +
  "nec neque netus nibh nisi nisl non nonummy nostra nulla nullam nunc odio orci ornare parturient pede " +
  "pellentesque penatibus per pharetra phasellus placerat platea porta porttitor posuere potenti praesent " +
  "pretium primis proin pulvinar purus quam quis quisque rhoncus ridiculus risus rutrum sagittis sapien " +
  "scelerisque sed sem semper senectus sit sociis sociosqu sodales sollicitudin suscipit suspendisse taciti " +
  "tellus tempor tempus tincidunt torquent tortor tristique turpis ullamcorper ultrices ultricies urna ut " +
  "varius vehicula vel velit venenatis vestibulum vitae vivamus viverra volutpat vulputate"
).split(" ");

function randInt(lo: number, hi: number): number {
  return lo + Math.floor(Math.random() * (hi - lo + 1));
}

/**
 * Jinja2's `lipsum(n, html, min, max)`: `n` paragraphs of `min`..`max` random lorem-ipsum words, as
 * `<p>` elements or separated by blank lines. The words are random, as in Jinja2.
 */
function lipsum(
  n: unknown = 5,
  html: unknown = true,
  min: unknown = 20,
  max: unknown = 100,
): string | Markup {
  const paragraphs: string[] = [];
  for (let p = 0; p < numValue(n as number); p++) {
    const words: string[] = [];
    let sentenceStart = true;
    let sinceComma = 0;
    let sinceStop = 0;
    const count = randInt(numValue(min as number), numValue(max as number));
    for (let i = 0; i < count; i++) {
      let word = LOREM[Math.floor(Math.random() * LOREM.length)] ?? "lorem";
      if (sentenceStart) word = word.charAt(0).toUpperCase() + word.slice(1);
      sentenceStart = false;
      sinceComma++;
      sinceStop++;
      if (i < count - 1 && sinceStop > randInt(10, 20)) {
        word += ".";
        sentenceStart = true;
        sinceStop = sinceComma = 0;
      } else if (i < count - 1 && sinceComma > randInt(3, 8)) {
        word += ",";
        sinceComma = 0;
      }
      words.push(word);
    }
    paragraphs.push(`${words.join(" ")}.`);
  }
  return html === false
    ? paragraphs.join("\n\n")
    : new Markup(paragraphs.map((p) => `<p>${p}</p>`).join("\n"));
}

/** The globals every template sees. */
export function makeGlobals(): ReadonlyMap<string, unknown> {
  return new Map<string, unknown>([
    ["range", range],
    ["dict", (...args: unknown[]) => pyDict(args)],
    ["cycler", (...items: unknown[]) => new Cycler(items)],
    [
      "joiner",
      (sep: unknown = ", ") => {
        let used = false;
        return () => {
          const out = used ? pyStr(sep) : "";
          used = true;
          return out;
        };
      },
    ],
    ["namespace", (...args: unknown[]) => new Namespace(pyDict(args))],
    [
      "lipsum",
      (...args: unknown[]) => {
        const { positional, kwargs } = splitArgs(args);
        const [
          n = kwargs.get("n"),
          html = kwargs.get("html"),
          min = kwargs.get("min"),
          max = kwargs.get("max"),
        ] = positional;
        return lipsum(n ?? 5, html ?? true, min ?? 20, max ?? 100);
      },
    ],
  ]);
}
