/**
 * Log parsers: each of the harness's 57 parser names over a 50 MB log of its own framework's output (the
 * committed fixture logs of that parser, repeated), in MB/s, against the floor of a plain line split of the
 * same log (`log.split("\n")` and a look at every line), measured alternately in the same run. Then the
 * same at 25 MB: the 50/25 time ratio shows a parser that is not linear (2 is linear; over 2.2 fails).
 * Names that stand for the same parser (astroid = pytest, react_pdf = carbon, ...) are measured once.
 * Usage: node dist/bench/parsers.js [MB, default 50] [rounds, default 3] [only the names containing this]
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ParserSpec } from "../src/eval/log-parsers/parser-spec.js";
import { LOG_PARSERS, type LogParser } from "../src/eval/log-parsers/registry.js";
import { normaliseNewlines } from "../src/eval/verdict.js";
import { packageRoot } from "../src/util/package-root.js";

const MB = Number(process.argv[2] ?? 50);
const ROUNDS = Number(process.argv[3] ?? 3);
const FIXTURES = join(packageRoot(), "test", "fixtures", "eval");

/** Which fixture logs are a parser's own output (by file-name prefix), and lines that would end its reading early. */
interface Corpus {
  files: RegExp;
  spec?: ParserSpec;
  /** Lines after which the parser stops reading (a summary): left out, so it reads the whole log. */
  drop?: RegExp;
}
const PYTEST: Corpus = { files: /^logs\/pytest/ };
const CORPORA: Record<string, Corpus> = {
  parse_log_pytest: PYTEST,
  parse_log_pytest_options: PYTEST,
  parse_log_pytest_v2: PYTEST,
  parse_log_matplotlib: PYTEST,
  parse_log_django: { files: /^logs\/django/ },
  parse_log_seaborn: { files: /^logs\/seaborn/ },
  parse_log_sympy: { files: /^logs\/sympy/ },
  parse_log_calypso: {
    files: /^parser-logs\/(calypso-(jest|two)|jest-verbose)/,
    drop: /^(Test Suites| {2}● )/,
  },
  parse_log_bpmn_js: { files: /^parser-logs\/(bpmn|karma-progress)/ },
  parse_log_carbon: { files: /^parser-logs\/jest-(default|verbose)/ },
  parse_log_eslint: { files: /^parser-logs\/mocha-spec/ },
  parse_log_grommet: { files: /^parser-logs\/jest-default/ },
  parse_log_highlightjs: { files: /^parser-logs\/mocha-spec/, drop: /passing/ },
  "parse_log_lighthouse@9.5": {
    files: /^parser-logs\/mocha-lighthouse/,
    spec: { instance_id: "lighthouse-1", version: "9.5" },
    drop: /passing/,
  },
  "parse_log_lighthouse@2.5": {
    files: /^parser-logs\/lighthouse-mocha-json/,
    spec: { instance_id: "lighthouse-1", version: "2.5" },
  },
  "parse_log_next@1.0": {
    files: /^parser-logs\/next-karma/,
    spec: { instance_id: "next-1", version: "1.0" },
    drop: /^TOTAL/,
  },
  "parse_log_next@1.27": {
    files: /^parser-logs\/next-cypress/,
    spec: { instance_id: "next-1", version: "1.27" },
  },
  parse_log_openlayers: { files: /^parser-logs\/(openlayers|mocha-spec)/ },
  parse_log_prismjs: { files: /^parser-logs\/mocha-prism-json/ },
  parse_log_quarto_cli: { files: /^parser-logs\/quarto/, drop: /ERRORS|failures:/ },
  parse_log_chart_js: { files: /^parser-logs\/(chartjs|karma-progress)/ },
  parse_log_marked: { files: /^parser-logs\/mocha-spec/ },
  parse_log_p5js: { files: /^parser-logs\/mocha-(spec|colours)/ },
  parse_log_jest: { files: /^parser-logs\/jest-(verbose|colours|one)/ },
  parse_log_jest_json: { files: /^parser-logs\/jest-json/ },
  parse_log_vitest: { files: /^parser-logs\/vitest-/ },
  parse_log_karma: { files: /^parser-logs\/karma-mocha/, drop: /^SUMMARY:/ },
  parse_log_tap: { files: /^parser-logs\/(tap-|mocha-tap)/ },
  "parse_log_immutable_js@2006": {
    files: /^parser-logs\/jest-verbose/,
    spec: { instance_id: "immutable-js__immutable-js-2006" },
  },
  parse_log_redis: { files: /^parser-logs\/redis/ },
  parse_log_jq: { files: /^parser-logs\/jq-/ },
  parse_log_doctest: { files: /^parser-logs\/doctest-xml/ },
  parse_log_micropython_test: { files: /^parser-logs\/micropython/ },
  parse_log_googletest: { files: /^parser-logs\/googletest/ },
  parse_log_gotest: { files: /^parser-logs\/go-/ },
  parse_log_maven: { files: /^parser-logs\/maven/ },
  parse_log_ant: { files: /^parser-logs\/ant-/ },
  parse_log_gradle_custom: { files: /^parser-logs\/gradle/ },
  parse_log_phpunit: { files: /^parser-logs\/phpunit/ },
  parse_log_minitest: { files: /^parser-logs\/minitest/ },
  parse_log_cucumber: { files: /^parser-logs\/cucumber/ },
  parse_log_ruby_unit: { files: /^parser-logs\/ruby-unit/ },
  parse_log_rspec_transformed_json: { files: /^parser-logs\/rspec-json/ },
  "parse_log_jekyll@9141": { files: /^parser-logs\/minitest/, spec: { instance_id: "jekyll__jekyll-9141" } },
  parse_log_cargo: { files: /^parser-logs\/cargo-/ },
};

const allLogs = ["logs", "parser-logs"].flatMap((folder) =>
  readdirSync(join(FIXTURES, folder)).map((file) => `${folder}/${file}`),
);

/** The corpus repeated to `megabytes` (UTF-16 length as a proxy of size); doctest's XML as one report. */
function bigLog(corpus: Corpus, megabytes: number, name: string): string {
  const files = allLogs.filter((file) => corpus.files.test(file)).sort();
  if (files.length === 0) throw new Error(`${name}: no fixture log matches ${corpus.files}`);
  let text = files.map((file) => normaliseNewlines(readFileSync(join(FIXTURES, file), "utf8"))).join("\n");
  if (corpus.drop) {
    const drop = corpus.drop;
    text = text
      .split("\n")
      .filter((line) => !drop.test(line))
      .join("\n");
  }
  const target = megabytes * 1024 * 1024;
  if (name === "parse_log_doctest") {
    const start = text.indexOf("<TestSuite>") + "<TestSuite>".length;
    const end = text.indexOf("</TestSuite>");
    const body = text.slice(start, end);
    return `${text.slice(0, start)}${body.repeat(Math.ceil(target / body.length))}${text.slice(end)}`;
  }
  return `${text}\n`.repeat(Math.ceil(target / (text.length + 1)));
}

/** The floor: split into lines and look at each (its first character), as every line parser must. */
function lineSplit(log: string): number {
  let seen = 0;
  for (const line of log.split("\n")) seen += line.charCodeAt(0) & 1;
  return seen;
}

function time(run: () => unknown): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

/** Fastest of the rounds (the least disturbed by other work on the machine) of each: the floor and the parser on
 * the full log and on its first half, in turn. */
function measure(parse: LogParser, full: string, half: string, spec: ParserSpec | undefined) {
  const times = {
    floor: [] as number[],
    halfFloor: [] as number[],
    parser: [] as number[],
    halfParser: [] as number[],
  };
  for (let round = 0; round < ROUNDS; round++) {
    times.floor.push(time(() => lineSplit(full)));
    times.halfFloor.push(time(() => lineSplit(half)));
    times.parser.push(time(() => parse(full, spec)));
    times.halfParser.push(time(() => parse(half, spec)));
  }
  return {
    floor: Math.min(...times.floor) / 1000,
    halfFloor: Math.min(...times.halfFloor) / 1000,
    parser: Math.min(...times.parser) / 1000,
    halfParser: Math.min(...times.halfParser) / 1000,
  };
}

const byFunction = new Map<LogParser, string[]>();
for (const [name, parse] of Object.entries(LOG_PARSERS))
  byFunction.set(parse, [...(byFunction.get(parse) ?? []), name]);
const aliasesOf = (key: string) => {
  const parse = LOG_PARSERS[key.split("@")[0] ?? ""];
  return (parse ? (byFunction.get(parse) ?? []) : []).filter((name) => name !== key.split("@")[0]);
};

process.stdout.write(
  `| parser (also) | MB/s | floor MB/s | × floor | time ${MB}/${MB / 2} MB | floor's ${MB}/${MB / 2} MB |\n| --- | ---: | ---: | ---: | ---: | ---: |\n`,
);
let slowest = Number.POSITIVE_INFINITY;
let worstRatio = 0;
const only = process.argv[4];
for (const [key, corpus] of Object.entries(CORPORA)) {
  if (only && !key.includes(only)) continue;
  const parse = LOG_PARSERS[key.split("@")[0] ?? ""];
  if (!parse) throw new Error(`no parser ${key}`);
  const full = bigLog(corpus, MB, key);
  const half = bigLog(corpus, MB / 2, key);
  const megabytes = Buffer.byteLength(full) / (1024 * 1024);
  const times = measure(parse, full, half, corpus.spec);
  const speed = megabytes / times.parser;
  const floor = megabytes / times.floor;
  const ratio = times.parser / times.halfParser;
  const floorRatio = times.floor / times.halfFloor;
  slowest = Math.min(slowest, speed / floor);
  worstRatio = Math.max(worstRatio, ratio);
  const aliases = aliasesOf(key);
  const label = aliases.length > 0 ? `${key} (${aliases.join(", ").replaceAll("parse_log_", "")})` : key;
  process.stdout.write(
    `| ${label} | ${speed.toFixed(0)} | ${floor.toFixed(0)} | ${(speed / floor).toFixed(2)} | ${ratio.toFixed(2)} | ${floorRatio.toFixed(2)} |\n`,
  );
}
process.stdout.write(
  `\nslowest: ${slowest.toFixed(2)}× the floor (goal ≥ 0.25); worst 50/25 MB time ratio: ${worstRatio.toFixed(2)} (goal ≤ 2.2)\n`,
);
