import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";

// biome-ignore lint/suspicious/noExplicitAny: the page's data is read as JSON
type Json = Record<string, any>;

/** A `swerun view` page's overview data and its detail records (gzip+base64), as the browser unpacks them. */
export function viewPageData(file: string): { page: Json; details: Json[] } {
  const html = readFileSync(file, "utf8");
  const page = JSON.parse(
    /<script type="application\/json" id="swerun-view-data">(.*?)<\/script>/s.exec(html)?.[1] ?? "null",
  );
  const details = [
    ...html.matchAll(/<script type="application\/gzip\+base64" id="d-0-\d+">(.*?)<\/script>/gs),
  ].map((match) => JSON.parse(gunzipSync(Buffer.from(match[1] ?? "", "base64")).toString("utf8")));
  return { page, details };
}
