import { pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { NS, S, W } from "./python-text.js";

/** `test tests::name ... ok`: libtest's line of one test (ok, FAILED, ignored). */
const CARGO_RESULT = new RegExp(`^test${S}+(${NS}+)${S}+\\.\\.\\.${S}+(${W}+)$`, "u");

/** The harness's `cargo` parser (`cargo test`): `ok` passed, `FAILED` failed; ignored tests are left out. */
export function parseCargo(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("...")) continue;
    const match = CARGO_RESULT.exec(pyStrip(line));
    if (match?.[2] === "ok") map.set(match[1] ?? "", "PASSED");
    else if (match?.[2] === "FAILED") map.set(match[1] ?? "", "FAILED");
  }
  return map;
}
