import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../util/package-root.js";
import { scriptJson } from "./embed.js";
import type { ViewPage } from "./model.js";

/** The page's style sheet, a file shipped with the package (`src/view/page/style.css`). */
const style = () => readFileSync(join(packageRoot(), "src", "view", "page", "style.css"), "utf8");

/**
 * The page's script: `src/view/page/*.ts` bundled by the build (`scripts/bundle.mjs`) into one file in
 * dist/, used from the sources too (the tests' global setup builds dist/ first).
 */
const script = () => readFileSync(join(packageRoot(), "dist", "src", "view", "page", "app.js"), "utf8");

const escapeText = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * The whole page as chunks (one per detail record, so a large run is never copied into one string).
 * `details[r][i]` is run r's packed record i; it sits in `<script type="application/gzip+base64"
 * id="d-r-i">`, which the browser never runs.
 */
export function pageChunks(page: ViewPage, details: string[][]): string[] {
  const css = style();
  const js = script();
  if (/<\/script|<!--/i.test(js + css)) throw new Error("the page's script or style would end its element");
  const chunks = [
    "<!doctype html>\n",
    '<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
    `<meta name="generator" content="swerun ${escapeText(page.swerun_version)}">\n`,
    `<title>${escapeText(page.title)} · swerun view</title>\n`,
    // No network: nothing may be fetched, and scripts run only from this file.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">\n`,
    `<style>\n${css}</style>\n</head>\n<body>\n`,
    '<noscript><p class="noscript">This page needs JavaScript to show the run.</p></noscript>\n',
    '<div id="app" aria-live="polite"><p class="loading">Loading…</p></div>\n',
    `<script type="application/json" id="swerun-view-data">${scriptJson(page)}</script>\n`,
  ];
  details.forEach((records, run) => {
    records.forEach((packed, index) => {
      chunks.push(`<script type="application/gzip+base64" id="d-${run}-${index}">${packed}</script>\n`);
    });
  });
  chunks.push(`<script>\n${js}</script>\n</body>\n</html>\n`);
  return chunks;
}
