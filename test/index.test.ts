import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../src/util/package-root.js";

const ROOT = packageRoot();
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

/**
 * A project that installed the packed tarball: `npm pack` (dist/ is built by the global setup), the
 * tarball unpacked into node_modules/swerun as npm would, and swerun's runtime dependencies linked from
 * this checkout's node_modules (offline: no registry). Dev dependencies are not there, so the package must
 * not need them at run time. `@types/node` is the app's own, as in any TypeScript project on Node.
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
  for (const name of [...Object.keys(manifest.dependencies), "@types/node"]) {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", name), join(modules, name), "dir");
  }
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", type: "module", private: true }));
}, 120_000);
// rmSync removes the links to the dependencies, never what they point to.
afterAll(() => rmSync(top, { recursive: true, force: true }));

const node = (file: string) => spawnSync(process.execPath, [file], { cwd: app, encoding: "utf8" });

describe("the packed package (npm pack, installed, imported by name)", () => {
  it("imports from plain JavaScript and runs the demo task with a custom model", () => {
    writeFileSync(
      join(app, "main.mjs"),
      `import { Agent, LocalEnvironment, loadConfig, runTask, EventBus, renderTemplate, UserError } from "swerun";
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
  agent: typeof Agent, env: typeof LocalEnvironment, bus: typeof EventBus, user: typeof UserError,
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
      bus: "function",
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
