/**
 * A Python `re` pattern as a JavaScript RegExp (global): leading inline flags (`(?s)`, `(?i)`, `(?m)`,
 * `(?u)`) become flags, `(?P<name>` and `(?P=name)` become `(?<name>` and `\k<name>`. Throws a SyntaxError
 * naming what JavaScript refused (a flag it lacks, such as `(?x)`, or a construct it does not know).
 */
export function pythonRegex(pattern: string): RegExp {
  let source = pattern;
  const flags = new Set(["g"]);
  for (let match = /^\(\?([a-zA-Z]+)\)/.exec(source); match; match = /^\(\?([a-zA-Z]+)\)/.exec(source)) {
    for (const flag of match[1] ?? "") {
      if (flag === "s" || flag === "i" || flag === "m") flags.add(flag);
      else if (flag !== "u") throw new SyntaxError(`the inline flag (?${flag}) has no JavaScript equivalent`);
    }
    source = source.slice(match[0].length);
  }
  source = source.replaceAll("(?P<", "(?<").replace(/\(\?P=(\w+)\)/g, "\\k<$1>");
  return new RegExp(source, [...flags].join(""));
}
