/** A parser met a line it cannot read (the harness's parser raises there too, and the instance errors). */
export class LogParserError extends Error {
  override name = "LogParserError";
}
