import { describe, expect, it } from "vitest";
import { invalidUtf8Offset } from "../../src/util/utf8.js";

const bytes = (...values: number[]) => Uint8Array.from(values);

describe("invalidUtf8Offset", () => {
  it("accepts valid UTF-8 of every length", () => {
    expect(invalidUtf8Offset(Buffer.from("a é € 𝄞 \u{10FFFF}"))).toBeUndefined();
    expect(invalidUtf8Offset(bytes())).toBeUndefined();
  });

  it.each([
    ["a Latin-1 é", bytes(0x63, 0x61, 0x66, 0xe9, 0x0a), 3],
    ["a lone continuation byte", bytes(0x41, 0x80), 1],
    ["an overlong encoding", bytes(0x41, 0xc0, 0xaf), 1],
    ["a surrogate", bytes(0x41, 0x42, 0xed, 0xa0, 0x80), 2],
    ["a sequence cut off at the end", bytes(0x41, 0xe2, 0x82), 1],
    ["a code point past U+10FFFF", bytes(0xf4, 0x90, 0x80, 0x80), 0],
  ])("finds %s", (_name, input, offset) => {
    expect(invalidUtf8Offset(input)).toBe(offset);
  });
});
