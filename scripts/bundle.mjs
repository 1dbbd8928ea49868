// Bundles the CLI from its sources (after tsc, whose cli.js it replaces): dist/src/cli-main.js becomes one small entry file plus shared chunks in
// dist/src/chunks/, so a command loads a few files instead of ~300 (zod, yaml, nunjucks and swerun's own
// modules), which is most of a short run's start time (bench/lean.ts). Each command's module stays behind
// a dynamic import, so `--help` loads only the entry. Docker's client (dockerode, ssh2 and their native
// optional parts) and Kubernetes' (@kubernetes/client-node, ws) stay outside the bundle and are loaded from
// node_modules when a command needs them.
// The library entry (dist/src/index.js) is tsc's output, unbundled. The script of the `swerun view` page (for
// the browser) is bundled into a file of its own.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");

/**
 * zod's namespace re-exports every locale (`z.locales`), which no bundler can drop once `z` is imported;
 * swerun uses only the English messages (src/config/common.ts hands them to each parse), so the namespace holds just `en` here.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer)
        ? { path: join(args.importer, "..", "..", "locales", "en.js"), namespace: "zod-locales" }
        : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: root,
    }));
  },
};
/**
 * In the `swerun run` script, every command module but run's is one line that throws: that script only ever
 * runs `swerun run` (the bin sends the other commands to the ES modules).
 */
const onlyTheRunCommand = {
  name: "only-the-run-command",
  setup(builder) {
    builder.onResolve({ filter: /^\.\/commands\/[\w-]+\.js$/ }, (args) =>
      args.kind === "dynamic-import" &&
      args.importer === join(root, "src", "cli.ts") &&
      args.path !== "./commands/run.js"
        ? { path: args.path, namespace: "swerun-elsewhere" }
        : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: "swerun-elsewhere" }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`dist/src/cli-run.cjs runs only \`swerun run\`, not ${args.path}`)});`,
      loader: "js",
    }));
  },
};
/**
 * Model prices (470 KB, for a real model's cost only) and the Anthropic, Bedrock and Vertex SDKs (for those
 * providers only; the clouds' pull in the AWS SDK and Google's auth library) stay out of the `swerun run`
 * script: their CommonJS builds are required from node_modules where the sources import() them (a script run
 * by vm.Script has no import()).
 */
const REQUIRED_AT_USE = /^(@pydantic\/genai-prices|@google\/genai|@anthropic-ai\/(sdk|bedrock-sdk|vertex-sdk)|google-auth-library|@aws-sdk\/credential-providers)$/;
/** Packages the ES build leaves to node_modules too (loaded only by the commands and providers that use them). */
const EXTERNAL = ["dockerode", "ssh2", "cpu-features", "playwright-core", "@google/genai", "@anthropic-ai/bedrock-sdk", "@anthropic-ai/vertex-sdk", "google-auth-library", "@aws-sdk/credential-providers", "@kubernetes/client-node", "ws"];
const pricesFromNodeModules = {
  name: "prices-from-node-modules",
  setup(builder) {
    builder.onResolve({ filter: REQUIRED_AT_USE }, (args) =>
      args.kind === "dynamic-import" ? { path: args.path, namespace: "required" } : { path: args.path, external: true },
    );
    builder.onLoad({ filter: /.*/, namespace: "required" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: "js",
      resolveDir: root,
    }));
  },
};
const out = join(root, "dist", "src");
rmSync(join(out, "chunks"), { recursive: true, force: true });
rmSync(join(out, "cli.js"), { force: true });
rmSync(join(out, "cli.cjs"), { force: true });
rmSync(join(out, "cli-run.cjs"), { force: true });
await build({
  entryPoints: { "cli-main": join(root, "src", "cli.ts") },
  outdir: out,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  chunkNames: "chunks/[name]-[hash]",
  external: EXTERNAL,
  // Bundled CommonJS dependencies (nunjucks) call require() for Node's own modules.
  banner: {
    js: 'import { createRequire as __swerunCreateRequire } from "node:module"; const require = __swerunCreateRequire(import.meta.url);',
  },
  // Whitespace and syntax only: names stay, so errors and stack traces read as in the sources.
  minifyWhitespace: true,
  minifySyntax: true,
  plugins: [zodEnglishOnly],
  sourcemap: false,
  logLevel: "warning",
});

// `swerun run` as one CommonJS script, dist/src/cli-run.cjs (the same src/cli.ts, every other command left
// out): the bin runs it through vm.Script with V8's code cache (src/util/code-cache.ts), which ES modules
// cannot have on Node 20; compiling the ES chunks was a third of a short run's start. The file is the body
// of a function (the bin passes require, module, its path and its URL, which stands for import.meta.url),
// in ASCII only, so it reads into a one-byte string.
const runScript = join(out, "cli-run.cjs");
const runBuild = await build({
  entryPoints: [join(root, "src", "cli.ts")],
  outfile: runScript,
  allowOverwrite: true,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  external: EXTERNAL,
  define: { "import.meta.url": "__swerunScriptUrl" },
  banner: { js: "(function (exports, require, module, __filename, __dirname, __swerunScriptUrl) {" },
  footer: { js: "})" },
  charset: "ascii",
  minifyWhitespace: true,
  minifySyntax: true,
  plugins: [zodEnglishOnly, onlyTheRunCommand, pricesFromNodeModules],
  metafile: true,
  sourcemap: false,
  logLevel: "warning",
});
// An import() left in the script (of a package or a Node module outside it) would throw when it runs there.
for (const output of Object.values(runBuild.metafile.outputs))
  for (const { path, kind, external } of output.imports)
    if (kind === "dynamic-import" && external)
      throw new Error(`${runScript}: import("${path}") cannot run in a vm.Script; require it (see pricesFromNodeModules)`);
const runSource = readFileSync(runScript);
if (runSource.some((byte) => byte > 0x7f)) throw new Error(`${runScript}: a byte outside ASCII`);
const runScriptHash = createHash("sha256").update(runSource).digest("hex").slice(0, 16);

// The bin (src/bin.ts as dist/src/cli.cjs): `--help` and `--version` without loading the CLI, their text taken
// from the CLI just built. CommonJS: an ES module as the main file costs Node's ES module loader, ~8 ms.
const help = execFileSync(process.execPath, [join(out, "cli-main.js"), "--help"], { encoding: "utf8" });
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
await build({
  entryPoints: [join(root, "src", "bin.ts")],
  outfile: join(out, "cli.cjs"),
  allowOverwrite: true,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  define: {
    SWERUN_HELP: JSON.stringify(help),
    SWERUN_VERSION: JSON.stringify(version),
    SWERUN_RUN_SCRIPT_HASH: JSON.stringify(runScriptHash),
    "import.meta.url": "__swerunBinUrl",
  },
  banner: { js: 'var __swerunBinUrl = require("node:url").pathToFileURL(__filename).href;' },
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: false,
  logLevel: "warning",
});
for (const name of ["bin.js", "bin.d.ts", "bin.js.map"]) rmSync(join(out, name), { force: true });
chmodSync(join(out, "cli.cjs"), 0o755);

// The built-in configs as swerun reads them (src/config/config-file.ts uses this reading while a file keeps the
// text read here, and so needs no YAML parser for them): only readings that JSON keeps exactly.
{
  const { BUILTIN_READINGS, parseConfigText } = await import("../dist/src/config/config-file.js");
  const readings = {};
  for (const name of readdirSync(join(root, "config"))) {
    if (!/\.ya?ml$/.test(name)) continue;
    const text = readFileSync(join(root, "config", name), "utf8");
    const data = parseConfigText(text);
    if (isDeepStrictEqual(JSON.parse(JSON.stringify(data)), data)) readings[name] = { text, data };
  }
  writeFileSync(join(root, BUILTIN_READINGS), JSON.stringify(readings));
}

// The `swerun view` page's script (src/view/page/*.ts, type-checked by tsconfig.page.json): one script for
// the browser, which src/view/page.ts puts into every page it writes.
await build({
  entryPoints: [join(root, "src", "view", "page", "app.ts")],
  outfile: join(out, "view", "page", "app.js"),
  allowOverwrite: true,
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2022",
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: false,
  logLevel: "warning",
});
