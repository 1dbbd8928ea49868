import { W } from "./python-text.js";

/**
 * p5.js's parser removes `<tag>...</tag>` blocks from a log: again and again, the leftmost `<tag>` that has a
 * `</tag>` after it, up to the first such `</tag>`, is replaced by the other `<tag>` openings it held (each
 * now without its end). Done literally (search from the start after every removal) that takes time
 * quadratic in the number of blocks; this does the same removals in one pass over the log:
 * - no block can start before the last removal (earlier openings had no end then, and removals only take
 *   ends away), except where a removal that left nothing joins text into a new tag; that case is checked,
 *   and a new end tag there starts the search over;
 * - an opening whose tag has no end in the rest of the log never will have one, so each tag name is looked
 *   for to the end of the log at most once;
 * - the text is the untouched rest of the log after a short head (what the last removal left), so a
 *   removal does not copy the log.
 */

const OPENING = new RegExp(`<(${W}+)>`, "gu");
const WORD = new RegExp(`^${W}$`, "u");
const END_TAG = new RegExp(`^<\\/${W}+>`, "u");
const START_TAG = new RegExp(`^<${W}+>`, "u");

/** Text = `head` + `source.slice(tail)`; positions are in that text. */
class Text {
  constructor(
    readonly source: string,
    public head: string,
    public tail: number,
  ) {}

  get length(): number {
    return this.head.length + this.source.length - this.tail;
  }

  charAt(index: number): string {
    return index < this.head.length
      ? (this.head[index] ?? "")
      : (this.source[this.tail + index - this.head.length] ?? "");
  }

  slice(start: number, end: number): string {
    const h = this.head.length;
    if (end <= h) return this.head.slice(start, end);
    if (start >= h) return this.source.slice(this.tail + start - h, this.tail + end - h);
    return this.head.slice(start) + this.source.slice(this.tail, this.tail + end - h);
  }

  /** The first `needle` at or after `from`. */
  indexOf(needle: string, from: number): number {
    const h = this.head.length;
    if (from < h) {
      const joined = this.head + this.source.slice(this.tail, this.tail + needle.length);
      const found = joined.indexOf(needle, from);
      if (found !== -1 && found < h) return found;
    }
    const found = this.source.indexOf(needle, this.tail + Math.max(0, from - h));
    return found === -1 ? -1 : h + found - this.tail;
  }
}

/** The end of the run of word characters from `index`. */
function wordRun(text: Text, index: number): number {
  let end = index;
  while (end < text.length && WORD.test(text.charAt(end))) end++;
  return end;
}

/** The leftmost block at or after `from`: [start, end) and its tag; names without an end go in `endless`. */
function findBlock(text: Text, from: number, endless: Set<string>): [number, number, string] | undefined {
  const h = text.head.length;
  const tryOpening = (name: string, start: number, openEnd: number): [number, number, string] | undefined => {
    if (endless.has(name)) return undefined;
    const close = `</${name}>`;
    const at = text.indexOf(close, openEnd);
    if (at === -1) {
      endless.add(name);
      return undefined;
    }
    return [start, at + close.length, name];
  };
  if (from < h) {
    // Openings that start in the head (one may run on into the source).
    const runEnd = wordRun(text, h);
    const window = text.head + (text.charAt(runEnd) === ">" ? text.slice(h, runEnd + 1) : "");
    OPENING.lastIndex = from;
    for (let match = OPENING.exec(window); match && match.index < h; match = OPENING.exec(window)) {
      const found = tryOpening(match[1] ?? "", match.index, match.index + match[0].length);
      if (found) return found;
    }
  }
  OPENING.lastIndex = text.tail + Math.max(0, from - h);
  for (let match = OPENING.exec(text.source); match; match = OPENING.exec(text.source)) {
    const start = h + match.index - text.tail;
    const found = tryOpening(match[1] ?? "", start, start + match[0].length);
    if (found) return found;
  }
  return undefined;
}

export function withoutXmlBlocks(log: string): string {
  let text = new Text(log, "", 0);
  const done: string[] = [];
  const endless = new Set<string>();
  let from = 0;
  for (;;) {
    const block = findBlock(text, from, endless);
    if (!block) break;
    const [start, end, name] = block;
    const opening = `<${name}>`;
    const kept = Math.max(text.slice(start, end).split(opening).length - 2, 0);
    const inserted = opening.repeat(kept);
    // Where the next block may start: here, or earlier where the join made a tag.
    let resume = start;
    if (kept === 0) {
      let back = start;
      while (back > 0 && WORD.test(text.charAt(back - 1))) back--;
      if (back > 0 && text.charAt(back - 1) === "/") back--;
      if (back > 0 && text.charAt(back - 1) === "<") {
        const left = text.slice(back - 1, start);
        // What follows the removed block that could finish a tag: `/`, word characters, `>`.
        const afterSlash = text.charAt(end) === "/" ? end + 1 : end;
        const runEnd = wordRun(text, afterSlash);
        const right = text.slice(end, text.charAt(runEnd) === ">" ? runEnd + 1 : runEnd);
        const joined = left + right;
        const endTag = END_TAG.exec(joined);
        const startTag = START_TAG.exec(joined);
        if (endTag && endTag[0].length > left.length) {
          // A new end tag: blocks may start anywhere before it now. Start over on the joined text.
          const whole = done.join("") + text.slice(0, start) + text.slice(end, text.length);
          text = new Text(whole, "", 0);
          done.length = 0;
          endless.clear();
          from = 0;
          continue;
        }
        if (startTag && startTag[0].length > left.length && !left.includes("/")) resume = back - 1;
      }
    }
    done.push(text.slice(0, resume));
    const h = text.head.length;
    const head = text.slice(resume, start) + inserted + (end < h ? text.head.slice(end) : "");
    const tail = end < h ? text.tail : text.tail + end - h;
    text = new Text(text.source, head, tail);
    from = 0;
  }
  done.push(text.slice(0, text.length));
  return done.join("");
}
