import { gzipSync } from "node:zlib";
import { redact } from "../util/secrets.js";

/**
 * How data travels inside the page. The overview is JSON in a `<script type="application/json">` element;
 * each instance's details are gzip-compressed JSON in base64 (unpacked in the browser with
 * DecompressionStream), so a large run stays small and only the overview is parsed at load.
 * Everything passes through `redact` on the way in.
 */

/** JSON that can sit inside a `<script>` element: no `<`, `>` or `&` can end it or start markup. */
export function scriptJson(value: unknown): string {
  return redact(JSON.stringify(value))
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026");
}

/**
 * A detail record as it is embedded: base64 of gzip of its redacted JSON (base64 holds no markup). Level 3
 * compresses 2.7 times faster than the default 6 for a page about 15% larger (bench/view.ts).
 */
export function packDetail(value: unknown): string {
  return gzipSync(Buffer.from(redact(JSON.stringify(value)), "utf8"), { level: 3 }).toString("base64");
}
