import type { StatusMap } from "../harness-constants.js";
import { parseDoctest, parseGoogletest, parseJq, parseMicropythonTest, parseRedis } from "./c.js";
import { parseDjango } from "./django.js";
import { parseGotest } from "./go.js";
import { parseAnt, parseGradleCustom, parseMaven } from "./java.js";
import { parseCalypso, parseCarbon, parseGrommet } from "./js-jest-projects.js";
import { parseBpmnJs, parseChartJs, parseNext, parseOpenlayers } from "./js-karma-projects.js";
import {
  parseEslint,
  parseHighlightjs,
  parseLighthouse,
  parseMarked,
  parseP5js,
  parsePrismjs,
} from "./js-mocha-projects.js";
import {
  parseImmutableJs,
  parseJest,
  parseJestJson,
  parseKarma,
  parseTap,
  parseVitest,
} from "./js-runners.js";
import type { ParserSpec } from "./parser-spec.js";
import { parsePhpunit } from "./php.js";
import { parseMatplotlib, parsePytest, parsePytestOptions, parsePytestV2 } from "./pytest.js";
import { parseQuartoCli } from "./quarto.js";
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
 * Every parser name of the SWE-bench 5.0.2 harness's registry (a dataset row's `log_parser`), mapped to the
 * parser each name stands for there.
 */
export const LOG_PARSERS: Readonly<Record<string, LogParser>> = {
  // Python
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
  // JavaScript and TypeScript
  parse_log_calypso: parseCalypso,
  parse_log_bpmn_js: parseBpmnJs,
  parse_log_carbon: parseCarbon,
  parse_log_eslint: parseEslint,
  parse_log_grommet: parseGrommet,
  parse_log_highlightjs: parseHighlightjs,
  parse_log_lighthouse: parseLighthouse,
  parse_log_next: parseNext,
  parse_log_openlayers: parseOpenlayers,
  parse_log_prismjs: parsePrismjs,
  parse_log_quarto_cli: parseQuartoCli,
  parse_log_chart_js: parseChartJs,
  parse_log_marked: parseMarked,
  parse_log_p5js: parseP5js,
  parse_log_react_pdf: parseCarbon,
  parse_log_jest: parseJest,
  parse_log_jest_json: parseJestJson,
  parse_log_vitest: parseVitest,
  parse_log_karma: parseKarma,
  parse_log_tap: parseTap,
  parse_log_immutable_js: parseImmutableJs,
  // C and C++
  parse_log_redis: parseRedis,
  parse_log_jq: parseJq,
  parse_log_doctest: parseDoctest,
  parse_log_micropython_test: parseMicropythonTest,
  parse_log_googletest: parseGoogletest,
  // Go
  parse_log_gotest: parseGotest,
  // Java
  parse_log_maven: parseMaven,
  parse_log_ant: parseAnt,
  parse_log_gradle_custom: parseGradleCustom,
  // PHP
  parse_log_phpunit: parsePhpunit,
  // Ruby
  parse_log_minitest: parseMinitest,
  parse_log_cucumber: parseCucumber,
  parse_log_ruby_unit: parseRubyUnit,
  parse_log_rspec_transformed_json: parseRspecTransformedJson,
  parse_log_jekyll: parseJekyll,
  // Rust
  parse_log_cargo: parseCargo,
};

/**
 * The parsers that read each line on their own (no state from one line to the next, only `map.set`): a
 * log parsed in pieces cut at line ends, the maps merged in order, gives the same map as the whole log.
 */
const LINE_LOCAL: ReadonlySet<LogParser> = new Set([
  parsePytest,
  parsePytestOptions,
  parsePytestV2,
  parseMatplotlib,
  parseSeaborn,
  parseGotest,
  parseCargo,
  parseMinitest,
  parseCucumber,
  parseRubyUnit,
  parseRspecTransformedJson,
  parseJest,
  parseJestJson,
  parseVitest,
  parseTap,
  parseRedis,
  parseJq,
  parseAnt,
]);

/** Whether `parser` reads each line on its own (see LINE_LOCAL). */
export function isLineLocal(parser: LogParser): boolean {
  return LINE_LOCAL.has(parser);
}

/** The parser of a `log_parser` name (`parse_log_pytest`; the bare `pytest` is accepted too). */
export function logParser(name: string): LogParser | undefined {
  const key = name.startsWith("parse_log_") ? name : `parse_log_${name}`;
  return Object.hasOwn(LOG_PARSERS, key) ? LOG_PARSERS[key] : undefined;
}

/** Why a `log_parser` name cannot be used: the harness has no parser of that name. */
export function unsupportedParserMessage(name: string): string {
  return `unknown log parser "${name}" (the harness has no parser of that name)`;
}
