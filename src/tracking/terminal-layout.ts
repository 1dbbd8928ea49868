// How runs' text is laid out in a terminal: colors (none when not a TTY), tables, sniffbench's boxes and dates.
import { stripVTControlCharacters } from "node:util";
import pc from "picocolors";

export type Colors = Pick<typeof pc, "green" | "red" | "bold" | "dim" | "cyan">;
export const plain: Colors = {
  green: String,
  red: String,
  bold: String,
  dim: String,
  cyan: String,
} as Colors;
export const colorsFor = (tty: boolean): Colors => (tty ? pc : plain);

const visible = (cell: string) => stripVTControlCharacters(cell);

/** Columns padded to their widest cell. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, visible(cell).length);
    });
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - visible(cell).length),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** sniffbench's box: a rounded frame, its title in the top edge, each line padded to the widest. */
export function box(content: string, title: string, colors: Colors): string {
  const lines = content.split("\n");
  const widest = Math.max(...lines.map((line) => visible(line).length));
  const width = Math.max(widest + 2, title.length + 4);
  // Every line is width + 4 columns: the corners (or bars), a space each side and the padded content.
  const top = `${colors.dim("╭─")}${colors.bold(` ${title} `)}${colors.dim(`${"─".repeat(width - title.length - 1)}╮`)}`;
  const middle = lines.map(
    (line) => `${colors.dim("│")} ${line}${" ".repeat(width - visible(line).length)} ${colors.dim("│")}`,
  );
  const bottom = colors.dim(`╰${"─".repeat(width + 2)}╯`);
  return `\n${top}\n${middle.join("\n")}\n${bottom}\n`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (value: number) => String(value).padStart(2, "0");

/** sniffbench's dates, in local time: `Dec 11, 2025`, with `time` `Dec 11, 2025, 07:34 PM`; "-" when unknown. */
export function seedDate(iso: string, time = false): string {
  if (!iso) return "-";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "Invalid date";
  const day = `${MONTHS[date.getMonth()]} ${date.getDate()}, ${date.getFullYear()}`;
  if (!time) return day;
  const hours = date.getHours();
  return `${day}, ${two(hours % 12 || 12)}:${two(date.getMinutes())} ${hours < 12 ? "AM" : "PM"}`;
}

export const padEnd = (text: string, width: number) =>
  text + " ".repeat(Math.max(0, width - visible(text).length));
export const padStart = (text: string, width: number) =>
  " ".repeat(Math.max(0, width - visible(text).length)) + text;
