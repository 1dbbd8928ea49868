/** One entry of a tar archive: a directory, a regular file or a symbolic link. */
export type TarEntry =
  | { type: "dir"; path: string; mode: number }
  | { type: "file"; path: string; mode: number; content: Buffer }
  | { type: "symlink"; path: string; target: string };

/** A fixed modification time, so the same entries always give the same bytes. */
const MTIME = 1_700_000_000;
const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(name: string, type: string, mode: number, size: number, linkname = ""): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, "utf8");
  block.write(octal(mode & 0o7777, 8), 100, "ascii");
  block.write(octal(0, 8), 108, "ascii");
  block.write(octal(0, 8), 116, "ascii");
  block.write(octal(size, 12), 124, "ascii");
  block.write(octal(MTIME, 12), 136, "ascii");
  block.write("        ", 148, "ascii");
  block.write(type, 156, "ascii");
  block.write(linkname, 157, 100, "utf8");
  block.write("ustar\u000000", 257, "ascii");
  block.write("root", 265, "ascii");
  block.write("root", 297, "ascii");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return block;
}

function padded(content: Buffer): Buffer[] {
  const rest = content.length % BLOCK;
  return rest === 0 ? [content] : [content, Buffer.alloc(BLOCK - rest)];
}

/** A PAX record `"<len> key=value\n"`, whose length counts its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  while (`${length}${body}`.length !== length) length = Buffer.byteLength(`${length}${body}`);
  return `${length}${body}`;
}

/** Writes a POSIX tar archive (PAX headers for long names), owned by root with a fixed mtime. */
export function writeTar(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const name = entry.type === "dir" ? `${entry.path.replace(/\/$/, "")}/` : entry.path;
    const linkname = entry.type === "symlink" ? entry.target : "";
    if (Buffer.byteLength(name) > 99 || Buffer.byteLength(linkname) > 99) {
      let pax = paxRecord("path", name);
      if (linkname) pax += paxRecord("linkpath", linkname);
      const body = Buffer.from(pax);
      parts.push(header("././@PaxHeader", "x", 0o644, body.length), ...padded(body));
    }
    const short = name.slice(0, 99);
    if (entry.type === "dir") parts.push(header(short, "5", entry.mode, 0));
    else if (entry.type === "symlink") parts.push(header(short, "2", 0o777, 0, linkname.slice(0, 99)));
    else parts.push(header(short, "0", entry.mode, entry.content.length), ...padded(entry.content));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}
