import type { StatusMap } from "../harness-constants.js";
import { parseDjango } from "./django.js";
import { parseGotest } from "./go.js";
import {
  parseImmutableJs,
  parseJest,
  parseJestJson,
  parseKarma,
  parseTap,
  parseVitest,
} from "./js-runners.js";
import type { ParserSpec } from "./parser-spec.js";
import { parseMatplotlib, parsePytest, parsePytestOptions, parsePytestV2 } from "./pytest.js";
import {
  parseCucumber,
  parseJekyll,
  parseMinitest,
  parseRspecTransformedJson,
  parseRubyUnit,
} from "./ruby.js";
import { parseCargo } from "./rust.js";
import { parseSeaborn } from "./seaborn.js";
import { parseSympy } from "./sympy.js";

/**
 * Reads a test log into test name → status. A few parsers also read the instance (`spec`); without it they
 * throw, as they do on a log the harness's parser cannot read either.
 */
export type LogParser = (log: string, spec?: ParserSpec) => StatusMap;

/**
 * The harness's parser names (a dataset row's `log_parser`) that swerun has ported, mapped to the parser
 * each name stands for in the harness's registry.
 */
export const LOG_PARSERS: Readonly<Record<string, LogParser>> = {
  parse_log_pytest: parsePytest,
  parse_log_astroid: parsePytest,
  parse_log_flask: parsePytest,
  parse_log_marshmallow: parsePytest,
  parse_log_pvlib: parsePytest,
  parse_log_pyvista: parsePytest,
  parse_log_sqlfluff: parsePytest,
  parse_log_xarray: parsePytest,
  parse_log_pytest_options: parsePytestOptions,
  parse_log_pydicom: parsePytestOptions,
  parse_log_requests: parsePytestOptions,
  parse_log_pylint: parsePytestOptions,
  parse_log_pytest_v2: parsePytestV2,
  parse_log_astropy: parsePytestV2,
  parse_log_scikit: parsePytestV2,
  parse_log_sphinx: parsePytestV2,
  parse_log_django: parseDjango,
  parse_log_seaborn: parseSeaborn,
  parse_log_sympy: parseSympy,
  parse_log_matplotlib: parseMatplotlib,
  parse_log_jest: parseJest,
  parse_log_jest_json: parseJestJson,
  parse_log_vitest: parseVitest,
  parse_log_karma: parseKarma,
  parse_log_tap: parseTap,
  parse_log_immutable_js: parseImmutableJs,
  parse_log_gotest: parseGotest,
  parse_log_cargo: parseCargo,
  parse_log_minitest: parseMinitest,
  parse_log_cucumber: parseCucumber,
  parse_log_ruby_unit: parseRubyUnit,
  parse_log_rspec_transformed_json: parseRspecTransformedJson,
  parse_log_jekyll: parseJekyll,
};

/** The harness's other parser names (JavaScript, C, Go, Java, PHP, Ruby, Rust runners): not ported yet. */
export const UNPORTED_PARSERS: ReadonlySet<string> = new Set(
  `calypso bpmn_js carbon eslint grommet highlightjs lighthouse next openlayers prismjs quarto_cli chart_js marked
  p5js react_pdf redis jq doctest micropython_test googletest maven ant gradle_custom phpunit`
    .split(/\s+/)
    .map((name) => `parse_log_${name}`),
);

/** The parser of a `log_parser` name (`parse_log_pytest`; the bare `pytest` is accepted too). */
export function logParser(name: string): LogParser | undefined {
  const key = name.startsWith("parse_log_") ? name : `parse_log_${name}`;
  return Object.hasOwn(LOG_PARSERS, key) ? LOG_PARSERS[key] : undefined;
}

/** Why a `log_parser` name cannot be used: not ported yet, or not a harness parser at all. */
export function unsupportedParserMessage(name: string): string {
  const key = name.startsWith("parse_log_") ? name : `parse_log_${name}`;
  return UNPORTED_PARSERS.has(key)
    ? `log parser ${name} is not supported yet (swerun grades the harness's Python parsers: ${Object.keys(LOG_PARSERS).join(", ")})`
    : `unknown log parser "${name}" (the harness has no parser of that name)`;
}
