import { describe, expect, it } from "vitest";
import { INTERRUPTED_OK, INTERRUPTED_OK_TEXT, interruptedOk } from "../../src/eval/log-parsers/django.js";
import { parseEslint } from "../../src/eval/log-parsers/js-mocha-projects.js";
import { PY_SPACE, squash } from "../../src/eval/log-parsers/python-text.js";
import { withoutXmlBlocks } from "../../src/eval/log-parsers/xml-blocks.js";

/** The harness's loop read literally: search from the start after every removal (quadratic, but plainly right). */
function literally(log: string): string {
  const block = /<([\p{L}\p{N}_]+)>[\s\S]*?<\/\1>/u;
  let text = log;
  for (let match = block.exec(text); match; match = block.exec(text)) {
    const opening = `<${match[1]}>`;
    const kept = Math.max(match[0].split(opening).length - 2, 0);
    text = text.slice(0, match.index) + opening.repeat(kept) + text.slice(match.index + match[0].length);
  }
  return text;
}

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  "<a>",
  "</a>",
  "<b>",
  "</b>",
  "<ab>",
  "</ab>",
  "<",
  "</",
  ">",
  "/",
  "a",
  "b",
  "x",
  " ",
  "\n",
  "é",
];

describe("p5.js's XML block removal in one pass", () => {
  it("removes what the harness's loop removes, on 5000 random texts of tags and their pieces", () => {
    const next = random(20);
    for (let round = 0; round < 5000; round++) {
      const length = Math.floor(next() * 30);
      let text = "";
      for (let i = 0; i < length; i++) text += PIECES[Math.floor(next() * PIECES.length)];
      expect(withoutXmlBlocks(text), JSON.stringify(text)).toBe(literally(text));
    }
  });

  it("handles the joins that make new tags", () => {
    for (const text of [
      "</<a>x</a>b>",
      "<<a></a>b>c</b>",
      "<a<b>x</b>>y</a>",
      "</a<a>.</a>>",
      "<a><a>x</a>y</a>",
    ])
      expect(withoutXmlBlocks(text), text).toBe(literally(text));
  });
});

/** The harness's eslint pattern as a regex (backtracking; slow on long logs, plainly right). */
function eslintByRegex(log: string): Array<[string, string]> {
  const S = `[${PY_SPACE}]`;
  const pattern = new RegExp(`(${S}{2}\\p{Nd}+\\))([\\s\\S]*?)${S}+(?:([^\\n]*)Error)`, "gu");
  const map = new Map<string, string>();
  for (const match of log.matchAll(pattern)) map.set(squash(match[2] ?? ""), "FAILED");
  return [...map];
}

describe("eslint's failures read without backtracking", () => {
  const ESLINT_PIECES = [
    "  1)",
    "  22)",
    " ",
    "  ",
    "\n",
    "\t",
    "Error",
    "Err",
    "or",
    "x",
    "1",
    ")",
    ":",
    "é",
  ];
  it("finds what the harness's pattern finds, on 5000 random texts", () => {
    const next = random(7);
    for (let round = 0; round < 5000; round++) {
      const length = Math.floor(next() * 24);
      let text = "";
      for (let i = 0; i < length; i++) text += ESLINT_PIECES[Math.floor(next() * ESLINT_PIECES.length)];
      expect([...parseEslint(text)], JSON.stringify(text)).toEqual(eslintByRegex(text));
    }
  });
});

describe("django's interrupted-ok patterns searched only near their text", () => {
  const PIECES = [
    "\n",
    " ",
    "...",
    " ... ",
    "x",
    "ok",
    "\nok",
    "Internal Server Error: /",
    "a/",
    "/\nok",
    "\t",
    "System check identified no issues (0 silenced)\nok",
    "Testing against Django installed in ",
    " silenced).\nok",
  ];
  it("finds what matching the whole log finds, on 5000 random texts", () => {
    const next = random(11);
    for (let round = 0; round < 5000; round++) {
      const length = Math.floor(next() * 14);
      let text = "";
      for (let i = 0; i < length; i++) text += PIECES[Math.floor(next() * PIECES.length)];
      INTERRUPTED_OK.forEach((pattern, index) => {
        const whole = [...text.matchAll(new RegExp(pattern.source, "gu"))].map((match) => match[1] ?? "");
        expect(interruptedOk(text, pattern, INTERRUPTED_OK_TEXT[index] ?? ""), JSON.stringify(text)).toEqual(
          whole,
        );
      });
    }
  });
});
