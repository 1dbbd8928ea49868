import { build } from "esbuild";
import { join } from "node:path";
const root = "/work/main";
const zodEnglishOnly = { name: "z", setup(builder) { builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => /[\\/]zod[\\/]v4[\\/]/.test(args.importer) ? { path: join(args.importer, "..", "..", "locales", "en.js"), namespace: "zod-locales" } : undefined); builder.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({ contents: `export { default as en } from ${JSON.stringify(args.path)};`, resolveDir: root })); } };
const only = { name: "o", setup(b) { b.onResolve({ filter: /^\.\/commands\/[\w-]+\.js$/ }, (a) => a.kind === "dynamic-import" && a.importer === join(root, "src", "cli.ts") && a.path !== "./commands/run.js" ? { path: a.path, namespace: "else" } : undefined); b.onLoad({ filter: /.*/, namespace: "else" }, () => ({ contents: "throw new Error('x')", loader: "js" })); } };
const prices = { name: "p", setup(b) { b.onResolve({ filter: /^@pydantic\/genai-prices$/ }, (a) => a.kind === "dynamic-import" ? { path: a.path, namespace: "req" } : { path: a.path, external: true }); b.onLoad({ filter: /.*/, namespace: "req" }, (a) => ({ contents: `module.exports = require(${JSON.stringify(a.path)});`, loader: "js", resolveDir: root })); } };
await build({ entryPoints: [join(root, "src", "cli.ts")], outfile: process.argv[2], bundle: true, format: "cjs", platform: "node", target: "node20",
  external: ["dockerode", "ssh2", "cpu-features", "playwright-core"], define: { "import.meta.url": "__swerunScriptUrl" },
  banner: { js: "(function (exports, require, module, __filename, __dirname, __swerunScriptUrl) {" }, footer: { js: "})" }, charset: "ascii",
  plugins: [zodEnglishOnly, only, prices], logLevel: "error" });
