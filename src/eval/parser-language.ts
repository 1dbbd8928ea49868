/** The language of the test suites each harness log parser reads (its name without `parse_log_`). */
const LANGUAGE_PARSERS: Record<string, string> = {
  Python: `pytest pytest_options pytest_v2 django sympy seaborn matplotlib astroid flask marshmallow pvlib pyvista
    sqlfluff xarray pydicom requests pylint astropy scikit sphinx`,
  "JavaScript/TypeScript": `calypso bpmn_js carbon eslint grommet highlightjs lighthouse next openlayers prismjs
    quarto_cli chart_js marked p5js react_pdf jest jest_json vitest karma tap immutable_js`,
  "C/C++": "redis jq doctest micropython_test googletest",
  Go: "gotest",
  Java: "maven ant gradle_custom",
  PHP: "phpunit",
  Ruby: "minitest cucumber ruby_unit rspec_transformed_json jekyll",
  Rust: "cargo",
};

const BY_PARSER = new Map(
  Object.entries(LANGUAGE_PARSERS).flatMap(([language, names]) =>
    names
      .trim()
      .split(/\s+/)
      .map((name) => [name, language] as const),
  ),
);

/**
 * An instance's language: the row's `language` when it names one, else the language of its log parser's
 * test runner (`parse_log_gotest` → Go), else undefined.
 */
export function instanceLanguage(row: Record<string, unknown>, logParser: string): string | undefined {
  const given = row.language;
  if (typeof given === "string" && given.trim() !== "") return given.trim();
  return BY_PARSER.get(logParser.replace(/^parse_log_/, ""));
}
