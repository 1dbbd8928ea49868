import { pyStrip } from "../../python/string.js";
import { indentOf } from "./python-text.js";

/**
 * The suites a line belongs to, from indentation, as several of the harness's JavaScript parsers track
 * them: an indented line that is not a test closes every open suite indented as deep or deeper, then opens
 * itself.
 */
export class IndentSuites {
  private readonly open: Array<[name: string, indent: number]> = [];

  /** Takes an indented line that is not a test. */
  enter(line: string): void {
    const indent = indentOf(line);
    while (this.open.length > 0 && (this.open.at(-1)?.[1] ?? 0) >= indent) this.open.pop();
    this.open.push([pyStrip(line), indent]);
  }

  names(): string[] {
    return this.open.map(([name]) => name);
  }
}
