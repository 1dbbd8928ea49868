import { isAbsolute, join, relative, resolve, sep } from "node:path";

/** The longest file name the usual file systems take (ext4, xfs, btrfs, tmpfs, overlayfs): 255 bytes. */
export const NAME_MAX_BYTES = 255;

/**
 * The bytes an instance id may take: the longest name swerun makes from one is an interrupted write's temp
 * file of a trajectory's undo journal, `.<id>.traj.json.partial.undo.<pid>.<n>.tmp` (55 bytes more at most).
 */
export const ID_MAX_BYTES = 200;

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Why `name` cannot be one file or folder name inside a folder, or undefined when it can: empty, `.` or `..`,
 * a `/`, a NUL or another control character, or more than `maxBytes` bytes of UTF-8.
 */
export function nameProblem(name: string, maxBytes = NAME_MAX_BYTES): string | undefined {
  if (name === "") return "it is empty";
  if (name === "." || name === "..") return `"${name}" names a folder step, not a name`;
  if (name.includes("/")) return "it holds a /";
  if (name.includes("\0")) return "it holds a NUL character";
  if (CONTROL.test(name)) return "it holds a control character";
  const bytes = Buffer.byteLength(name, "utf8");
  if (bytes > maxBytes) return `it has ${bytes} bytes, more than ${maxBytes}`;
  return undefined;
}

/** `text` cut for a one-line message: JSON-quoted (control characters escaped), at most 80 characters of it. */
export function shownName(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}

/**
 * `join(folder, ...parts)` for parts that come from input (an instance id, a model name, a run id, a label, a
 * fixture folder), refused with a UserError unless the path stays inside `folder`: no part may be absolute,
 * be empty or `.`, hold a NUL or take a `..` step. Everything swerun names after input goes through here; the inputs are checked
 * earlier with `nameProblem` (a UserError naming the record, exit 2), so this is the last guard, not the first.
 */
export function pathInside(folder: string, ...parts: string[]): string {
  const path = join(folder, ...parts);
  const step = relative(resolve(folder), resolve(path));
  const unsafe = (part: string) =>
    part === "" ||
    part === "." ||
    part.includes("\0") ||
    isAbsolute(part) ||
    part.split("/").some((name) => name === "..");
  if (parts.some(unsafe) || step === "" || step === ".." || step.startsWith(`..${sep}`) || isAbsolute(step))
    throw new Error(`${shownName(parts.join("/"))} would be a path outside ${folder}: refused`);
  return path;
}
