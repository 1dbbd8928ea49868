import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseSync } from "oxc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../src/util/package-root.js";

const ROOT = packageRoot();
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

/**
 * A project that installed the packed tarball: `npm pack` (dist/ is built by the global setup), the
 * tarball unpacked into node_modules/swerun as npm would, and swerun's runtime dependencies linked from
 * this checkout's node_modules (offline: no registry). Dev dependencies are not there, so the package must
 * not need them at run time. `@types/node` is the app's own, as in any TypeScript project on Node, and so is
 * `@types/dockerode` (the README says to install it: swerun's declarations name dockerode's types).
 */
let app: string;
let top: string;
beforeAll(() => {
  top = mkdtempSync(join(tmpdir(), "swerun-pack-"));
  app = join(top, "app");
  const modules = join(app, "node_modules");
  mkdirSync(join(modules, "swerun"), { recursive: true });
  const packed = execFileSync(
    "npm",
    ["pack", "--ignore-scripts", "--json", "--pack-destination", dirname(app)],
    {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  const tarball = join(dirname(app), JSON.parse(packed)[0].filename);
  execFileSync("tar", ["xzf", tarball, "--strip-components=1", "-C", join(modules, "swerun")]);
  for (const name of [...Object.keys(manifest.dependencies), "@types/node", "@types/dockerode"]) {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", name), join(modules, name), "dir");
  }
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", type: "module", private: true }));
}, 120_000);
// rmSync removes the links to the dependencies, never what they point to.
afterAll(() => rmSync(top, { recursive: true, force: true }));

const node = (file: string, env?: NodeJS.ProcessEnv) =>
  spawnSync(process.execPath, [file], { cwd: app, encoding: "utf8", ...(env ? { env } : {}) });
const tsc = (project: string) =>
  spawnSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", project], {
    cwd: app,
    encoding: "utf8",
  });
/**
 * A strict TypeScript project of an ESM app on Node (NodeNext), as the README's examples assume; the
 * package's declarations are checked too (no skipLibCheck).
 */
const strictProject = (files: string[], emit: { outDir: string } | undefined) =>
  JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      types: ["node"],
      ...(emit ? { outDir: emit.outDir } : { noEmit: true }),
    },
    files,
  });

/** The README's "Use it as a library" section. */
const librarySection = () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("## Use it as a library\n");
  return readme.slice(start, readme.indexOf("\n## ", start + 1));
};

/**
 * The public API, as execa's test-d keeps it: the runtime names with their kinds (what `import * as swerun`
 * holds) and the type-only names (what the package's index.d.ts exports besides). A change here is a change
 * of the promise the package makes: update the README's library section with it.
 */
const RUNTIME_EXPORTS = [
  "Agent: class",
  "ConfigError: class",
  "DeterministicModel: class",
  "FormatError: class",
  "LOG_PARSER_NAMES: array",
  "LocalEnvironment: class",
  "LogParserError: class",
  "UserError: class",
  "createEnvironment: function",
  "createModel: function",
  "evaluatePredictions: function",
  "gradeTestLog: function",
  "loadConfig: function",
  "loadTrajectory: function",
  "openRun: function",
  "parseTestLog: function",
  "renderTemplate: function",
  "runSwebench: function",
  "runTask: function",
];
const TYPE_EXPORTS = [
  "AgentEvent",
  "ConfigOverride",
  "Environment",
  "EvalRequest",
  "EvalResult",
  "ExecOutput",
  "InstanceReport",
  "LoadedTrajectory",
  "LogGradingInstance",
  "Message",
  "Model",
  "RunHooks",
  "RunOptions",
  "RunReport",
  "RunResult",
  "RunSession",
  "SwebenchRequest",
  "SwebenchResult",
  "SwerunConfig",
];

describe("the packed package (npm pack, installed, imported by name)", () => {
  it("imports from plain JavaScript and runs the demo task with a custom model", () => {
    writeFileSync(
      join(app, "main.mjs"),
      `import { Agent, LocalEnvironment, loadConfig, runTask, renderTemplate, UserError } from "swerun";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const cwd = mkdtempSync(join(tmpdir(), "app-"));
writeFileSync(join(cwd, "calc.sh"), "echo $(( $1 - $2 ))\\n");
const commands = ["sed -i 's/-/+/' calc.sh && bash calc.sh 2 3", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && bash calc.sh 2 3"];
const model = {
  name: "my-model",
  async query() {
    const command = commands.shift();
    return { role: "assistant", content: command, extra: { actions: [{ command }], cost: 0.5 } };
  },
  formatObservations(_message, outputs) {
    return outputs.map((o) => ({ role: "user", content: "rc=" + o.returncode + "\\n" + o.output }));
  },
  templateVars: () => ({}),
  serialize: () => ({ model: { model_name: "my-model" }, model_type: "app.MyModel" }),
};
const config = loadConfig(["default", "environment.cwd=" + cwd, "agent.mode=yolo"]);
const steps = [];
const result = await runTask("fix the sum", {
  config, model, output: join(cwd, "out.traj.json"),
  subscribers: [(event) => { if (event.type === "action_end") steps.push(event.returncode); }],
});
console.log(JSON.stringify({
  agent: typeof Agent, env: typeof LocalEnvironment, user: typeof UserError,
  render: renderTemplate("{{ a }}!", { a: 1 }, "t"),
  exit_status: result.exit_status, submission: result.submission, cost: result.cost, steps, trajectory: result.trajectory,
}));
`,
    );
    const result = node("main.mjs");
    expect(result.stderr).toBe("");
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({
      agent: "function",
      env: "function",
      user: "function",
      render: "1!",
      exit_status: "Submitted",
      submission: "5\n",
      cost: 1,
      steps: [0, 0],
    });
    expect(JSON.parse(readFileSync(out.trajectory, "utf8")).info.config.model_type).toBe("app.MyModel");
  });

  it("grades a test log without containers: parseTestLog and gradeTestLog", () => {
    const fixtures = join(ROOT, "test", "fixtures", "eval");
    const expected = JSON.parse(readFileSync(join(fixtures, "expected", "log-grading.json"), "utf8"));
    const cases = JSON.parse(readFileSync(join(fixtures, "log-grading-cases.json"), "utf8"));
    const jest = cases.find((c: { id: string }) => c.id === "js__jest-6");
    writeFileSync(
      join(app, "case.json"),
      JSON.stringify({ ...jest, instance_id: jest.id, ...expected[jest.id] }),
    );
    writeFileSync(
      join(app, "grade.mjs"),
      `import { gradeTestLog, LOG_PARSER_NAMES, parseTestLog, UserError } from "swerun";
import { readFileSync } from "node:fs";
const c = JSON.parse(readFileSync("case.json", "utf8"));
let unknown;
try { parseTestLog("parse_log_nope", ""); } catch (error) { unknown = [error instanceof UserError, error.message]; }
console.log(JSON.stringify({
  names: LOG_PARSER_NAMES.length,
  map: Object.fromEntries(parseTestLog("jest", c.test_output)),
  report: gradeTestLog(c, c.test_output),
  unknown,
}));
`,
    );
    const result = node("grade.mjs");
    expect(result.stderr).toBe("");
    const out = JSON.parse(result.stdout);
    expect(out.names).toBe(57);
    expect(out.map).toMatchObject({
      "fails to add": "FAILED",
      "ünïcode ✓ name": "PASSED",
      "skipped is skipped": "SKIPPED",
    });
    expect(out.report).toEqual(expected[jest.id].report);
    expect(out.unknown).toEqual([
      true,
      'unknown log parser "parse_log_nope" (the harness has no parser of that name)',
    ]);
  });

  it("exports the documented names and nothing else (a snapshot of the list, runtime names and types)", () => {
    writeFileSync(
      join(app, "names.mjs"),
      `import * as swerun from "swerun";
const kind = (value) =>
  typeof value === "function" ? (/^class\\b/.test(Function.prototype.toString.call(value)) ? "class" : "function")
  : Array.isArray(value) ? "array" : typeof value;
console.log(JSON.stringify(Object.keys(swerun).sort().map((name) => name + ": " + kind(swerun[name]))));
`,
    );
    const result = node("names.mjs");
    expect(result.stderr).toBe("");
    const runtime: string[] = JSON.parse(result.stdout);
    expect(runtime).toEqual(RUNTIME_EXPORTS);
    const declarations = join(app, "node_modules", "swerun", "dist", "src", "index.d.ts");
    const parsed = parseSync("index.d.ts", readFileSync(declarations, "utf8"));
    const declared = parsed.module.staticExports.flatMap((entry) =>
      entry.entries.map((exported) => exported.exportName.name ?? ""),
    );
    const runtimeNames = runtime.map((entry) => entry.split(":")[0]);
    expect(declared.filter((name) => !runtimeNames.includes(name)).sort()).toEqual(TYPE_EXPORTS);
    expect(new Set(declared)).toEqual(new Set([...runtimeNames, ...TYPE_EXPORTS]));
    // Every name is in the README's library section, in backticks.
    const section = librarySection();
    expect([...runtimeNames, ...TYPE_EXPORTS].filter((name) => !section.includes(`\`${name}`))).toEqual([]);
    expect(section).toContain(`Its ${runtimeNames.length + TYPE_EXPORTS.length} names`);
  });

  it("does no work when imported: no listeners, no files, nothing set in zod's global config", () => {
    const home = mkdtempSync(join(top, "home-"));
    writeFileSync(
      join(app, "quiet.mjs"),
      `import { readdirSync } from "node:fs";
import * as zod from "zod/mini";
const events = ["SIGINT", "SIGTERM", "SIGHUP", "exit", "beforeExit", "uncaughtException", "unhandledRejection", "warning"];
const state = () => ({
  listeners: events.map((event) => event + "=" + process.listenerCount(event)),
  files: [readdirSync("."), readdirSync(process.env.HOME)],
  zod: Object.keys(zod.config()),
  env: Object.keys(process.env).sort(),
});
const before = state();
await import("swerun");
console.log(JSON.stringify({ before, after: state() }));
`,
    );
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CACHE_HOME: join(home, ".cache"),
      XDG_CONFIG_HOME: join(home, ".config"),
    };
    const result = node("quiet.mjs", env);
    expect(result.stderr).toBe("");
    const { before, after } = JSON.parse(result.stdout);
    expect(after).toEqual(before);
    expect(after.zod).toEqual([]);
    expect(after.files[1]).toEqual([]);
  });

  it("type-checks the README's library examples with tsc --strict, and runs those that need no Docker", () => {
    const examples = [...librarySection().matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");
    expect(examples.length).toBe(4);
    const files = examples.map((code, index) => {
      writeFileSync(join(app, `example-${index + 1}.ts`), code);
      return `example-${index + 1}.ts`;
    });
    writeFileSync(join(app, "tsconfig.examples.json"), strictProject(files, { outDir: "examples" }));
    const checked = tsc("tsconfig.examples.json");
    expect(checked.stdout + checked.stderr).toBe("");
    expect(checked.status).toBe(0);
    // The log the grading example reads: a Go test log of the harness's parser corpus.
    const expected = JSON.parse(
      readFileSync(join(ROOT, "test", "fixtures", "eval", "expected", "log-grading.json"), "utf8"),
    );
    writeFileSync(join(app, "test_output.txt"), expected["go__calc-1"].test_output);
    const outputs = examples.map((code, index) => {
      if (/needs a Docker daemon/i.test(code)) return undefined;
      const run = node(join("examples", `example-${index + 1}.js`));
      expect(run.status, run.stderr).toBe(0);
      return run.stdout.trim().split("\n").at(-1);
    });
    expect(outputs).toEqual([
      'Submitted "diff --git a/calc.js b/calc.js"',
      `${join(app, "runs", "demo-batch")} { Submitted: 3 }`,
      undefined,
      "57 FAILED true",
    ]);
    const batch = JSON.parse(readFileSync(join(app, "runs", "demo-batch", "preds.json"), "utf8"));
    expect(Object.keys(batch).sort()).toEqual([
      "swerun-demo__calc-1",
      "swerun-demo__count-3",
      "swerun-demo__greet-2",
    ]);
  });

  it("exposes only its entry point", () => {
    writeFileSync(join(app, "deep.mjs"), 'await import("swerun/dist/src/cli.js");\n');
    expect(node("deep.mjs").stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it("type-checks a TypeScript file importing { Agent } and implementing Model", () => {
    writeFileSync(
      join(app, "main.ts"),
      `import { Agent, type AgentEvent, type Environment, type Message, type Model, type RunOptions } from "swerun";

class Echo implements Model {
  readonly name = "echo";
  async query(messages: Message[]): Promise<Message> {
    return { role: "assistant", content: String(messages.length), extra: { actions: [] } };
  }
  formatObservations(): Message[] {
    return [];
  }
  templateVars(): Record<string, unknown> {
    return {};
  }
  serialize() {
    return { model: {}, model_type: "app.Echo" };
  }
}
export function make(env: Environment, config: RunOptions["config"]): Agent {
  const seen: AgentEvent["type"][] = [];
  return new Agent({ model: new Echo(), env, config: config.agent, subscribers: [(e) => seen.push(e.type)] });
}
// @ts-expect-error the counters are read-only outside the loop
export const broken = (agent: Agent) => (agent.nCalls = 3);
`,
    );
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"],
        },
        files: ["main.ts"],
      }),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const result = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: app, encoding: "utf8" });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });
});
