/** Control characters (C0 but tab and newline, DEL, C1): never printed raw. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL_OR_NEWLINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;

const escaped = (char: string) =>
  char === "\n" ? "\\n" : char === "\r" ? "\\r" : `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`;

/** `text` with control characters (an ESC from a label or a corrupt file) shown as `\xHH`; newlines kept. */
export function printable(text: string): string {
  return text.replace(CONTROL, escaped);
}

/** `text` on one line: control characters and newlines shown escaped (`\n`, `\xHH`). */
export function printableLine(text: string): string {
  return text.replace(CONTROL_OR_NEWLINE, escaped);
}

/** Whether `text` holds a control character or a line break (a label must not). */
export function hasControlCharacters(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  return /[\u0000-\u001f\u007f-\u009f]/.test(text);
}

/** A label as a safe part of a folder name: no `/`, no `..` path step, nothing but letters, digits, `.`, `_`, `-`. */
export function labelSlug(label: string): string {
  return label.replace(/[^\w.-]+/g, "_");
}
