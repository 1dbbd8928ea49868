/** Where the second byte of a sequence may lie, by lead byte (overlongs, surrogates and > U+10FFFF excluded). */
function secondByteRange(lead: number): [number, number] {
  if (lead === 0xe0) return [0xa0, 0xbf];
  if (lead === 0xed) return [0x80, 0x9f];
  if (lead === 0xf0) return [0x90, 0xbf];
  if (lead === 0xf4) return [0x80, 0x8f];
  return [0x80, 0xbf];
}

/** The byte offset of the first sequence in `bytes` that is not valid UTF-8, or undefined when all of it is. */
export function invalidUtf8Offset(bytes: Uint8Array): number | undefined {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return undefined;
  } catch {
    // find where
  }
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index] ?? 0;
    const continuation =
      lead < 0x80 ? 0 : lead <= 0xc1 ? -1 : lead <= 0xdf ? 1 : lead <= 0xef ? 2 : lead <= 0xf4 ? 3 : -1;
    if (continuation < 0) return index;
    const [low, high] = secondByteRange(lead);
    for (let k = 1; k <= continuation; k++) {
      const byte = bytes[index + k];
      const [min, max] = k === 1 ? [low, high] : [0x80, 0xbf];
      if (byte === undefined || byte < min || byte > max) return index;
    }
    index += continuation + 1;
  }
  return undefined;
}

/**
 * `bytes` decoded as UTF-8; text that is not valid UTF-8 is refused with `describe`'s message, which
 * gets the byte offset and line (from 1) of the first bad byte.
 */
export function decodeUtf8(bytes: Uint8Array, describe: (offset: number, line: number) => Error): string {
  const offset = invalidUtf8Offset(bytes);
  if (offset === undefined)
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line += 1;
  throw describe(offset, line);
}
