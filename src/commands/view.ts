import { UserError } from "../errors.js";
import { registerKnownKeys } from "../models/known-keys.js";
import { checkOutputFile } from "../run/output.js";
import { writeOutput } from "../util/output-file.js";
import { buildView, viewTarget } from "../view/build.js";
import { browserOpener, openInBrowser } from "../view/open.js";
import type { DetailCache } from "../view/run-view.js";
import { watchFolders } from "../view/watch.js";

/** `swerun view` flags, as cac hands them over. */
export interface ViewFlags {
  output?: string;
  open?: boolean;
  watch?: boolean;
}

/**
 * `swerun view <run folder | two run folders | trajectories...>`: writes one self-contained HTML page
 * (default `<folder>/index.html`, `<name>.html` next to one trajectory) and says where. `--watch` rewrites
 * it whenever the folder changes until Ctrl-C; `--open` opens it in the default browser.
 */
export async function viewCommand(paths: string[], flags: ViewFlags): Promise<number> {
  const target = viewTarget(paths);
  const output = flags.output ? checkOutputFile(flags.output, "-o") : target.defaultOutput;
  if (!output) throw new UserError(`${paths.length} trajectory files given: say where the page goes with -o`);
  if (output === "-" && (flags.open || flags.watch))
    throw new UserError(`-o -: ${flags.open ? "--open" : "--watch"} needs the page in a file`);
  if (!flags.output) checkOutputFile(output, "the page");
  registerKnownKeys();
  const cache: DetailCache = new Map();
  const write = () => {
    const started = Date.now();
    const { chunks, summary } = buildView(target, cache);
    writeOutput(output, chunks);
    return `${summary}, ${((Date.now() - started) / 1000).toFixed(1)} s`;
  };
  process.stderr.write(`wrote ${output === "-" ? "the page to standard output" : output} (${write()})\n`);
  if (flags.open) {
    const opener = browserOpener();
    if (opener) openInBrowser(opener, output);
    else
      process.stderr.write(
        `no program to open a browser with was found (xdg-open); open ${output} yourself\n`,
      );
  }
  if (!flags.watch) return 0;
  process.stderr.write("watching for changes; Ctrl-C stops\n");
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await watchFolders(
      target.paths,
      [output],
      () => {
        try {
          process.stderr.write(`updated ${output} (${write()})\n`);
        } catch (error) {
          process.stderr.write(`not updated: ${error instanceof Error ? error.message : String(error)}\n`);
        }
      },
      stop.signal,
    );
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  process.stderr.write("stopped watching\n");
  return 0;
}
