import { LogParserError } from "./parser-error.js";

/**
 * What a few of the harness's parsers read of the instance besides its log: the instance id (`jekyll`,
 * `immutable_js` pick a runner by pull-request number) and the dataset row's `version` (`next`, `lighthouse`).
 */
export interface ParserSpec {
  instance_id: string;
  version?: string | undefined;
}

/** The spec a parser cannot do without, or a one-line error naming the parser. */
export function requireSpec(parser: string, spec: ParserSpec | undefined): ParserSpec {
  if (!spec) throw new LogParserError(`log parser ${parser} needs the instance (its id and version)`);
  return spec;
}
