import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify as toYaml } from "yaml";
import { type CliResult, runCli } from "../helpers/cli.js";
import { describeDocker, dockerFixture, TEST_RUN_ARGS } from "../helpers/docker.js";
import { completion, TEST_PRICES, toolCall, useOpenAIServer } from "../helpers/openai-server.js";
import { tempDir } from "../helpers/tmp.js";

/**
 * Secrets planted in every channel a user can give one through, each distinct, so a leak names its channel.
 * Every byte swerun writes or prints is searched for each of them (and for the Basic header's base64).
 */
const PLANTED = {
  environmentKey: "sk-planted-environment-key-4f1a",
  dotenvKey: "sk-planted-dotenv-key-8c2e",
  globalConfigKey: "sk-planted-global-config-key-3b7d",
  kwargsApiKey: "sk-planted-kwargs-api-key-9e5c",
  bearerToken: "planted-bearer-token-2d8f",
  basicPassword: "planted-basic-password-6a3b",
  apiToken: "planted-api-token-header-1c9e",
  xApiToken: "planted-x-api-token-header-7f4a",
  xAuthToken: "planted-x-auth-token-header-5b2d",
  cookie: "planted-cookie-value-0e6c",
  envValue: "planted-environment-env-value-4d1f",
  forwardedValue: "planted-forward-env-value-8a7b",
};
const BASIC = Buffer.from(`planted-user:${PLANTED.basicPassword}`).toString("base64");
/** Secrets of every channel but forward_env (Docker only: in the local environment the variable is not secret). */
const LOCAL_SECRETS = [...Object.values(PLANTED).filter((value) => value !== PLANTED.forwardedValue), BASIC];
const ALL_SECRETS = [...LOCAL_SECRETS, PLANTED.forwardedValue];
/** The environment's variables that hold secrets; the commands print them. */
const LOCAL_VARIABLES = "OPENAI_API_KEY DEPLOY_TOKEN";

/**
 * Every place swerun writes or prints for one command (event logs are written under the searched folder or to
 * stdout): add reports or exports here as they appear.
 */
interface Outputs {
  /** Folders and files swerun wrote (searched recursively, every file). */
  paths: string[];
  result: CliResult;
}

function filesUnder(path: string): string[] {
  if (!statSync(path, { throwIfNoEntry: false })) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => filesUnder(join(path, name)));
}

function expectNoSecret(outputs: Outputs, secrets = LOCAL_SECRETS): void {
  const places: Array<[string, string]> = [
    ["stdout", outputs.result.stdout],
    ["stderr", outputs.result.stderr],
    ...outputs.paths
      .flatMap(filesUnder)
      .map((file): [string, string] => [file, readFileSync(file, "latin1")]),
  ];
  expect(places.length, "no output file found").toBeGreaterThan(2);
  const leaks = places.flatMap(([place, text]) =>
    secrets.filter((secret) => text.includes(secret)).map((secret) => `${secret} in ${place}`),
  );
  expect(leaks).toEqual([]);
}

const server = useOpenAIServer();

/** The inputs of a run: a config with credentials, `.env` files, the environment; kept apart from the outputs. */
function setUp() {
  const dir = tempDir("swerun-leaks-");
  const inputs = join(dir, "in");
  const globalDir = join(dir, "global");
  const out = join(dir, "out");
  for (const folder of [inputs, globalDir, out]) mkdirSync(folder);
  writeFileSync(join(inputs, ".env"), `ANTHROPIC_API_KEY=${PLANTED.dotenvKey}\n`);
  writeFileSync(join(globalDir, ".env"), `GROQ_API_KEY=${PLANTED.globalConfigKey}\n`);
  const prices = join(inputs, "prices.json");
  writeFileSync(prices, JSON.stringify(TEST_PRICES));
  const config = join(inputs, "credentials.yaml");
  writeFileSync(
    config,
    toYaml({
      model: {
        model_name: "openai/test-model",
        cost_tracking: "ignore_errors",
        retry_min_wait: 0.01,
        retry_max_wait: 0.02,
        model_kwargs: {
          api_base: server.url,
          api_key: PLANTED.kwargsApiKey,
          extra_headers: {
            Authorization: `Bearer ${PLANTED.bearerToken}`,
            "Proxy-Authorization": `Basic ${BASIC}`,
            "Api-Token": PLANTED.apiToken,
            "X-Api-Token": PLANTED.xApiToken,
            "X-Auth-Token": PLANTED.xAuthToken,
            Cookie: `session=${PLANTED.cookie}; theme=dark`,
          },
        },
      },
      environment: { env: { DEPLOY_TOKEN: PLANTED.envValue } },
    }),
  );
  const env = {
    OPENAI_API_KEY: PLANTED.environmentKey,
    PROJECT_SETTING: PLANTED.forwardedValue,
    SWERUN_GLOBAL_CONFIG_DIR: globalDir,
    LITELLM_MODEL_REGISTRY_PATH: prices,
  };
  return { dir, inputs, out, config, env };
}

/**
 * The model's replies: text and commands that carry every secret (as a server or model echoing what it got
 * would), commands that print the environment's variables, and a submission holding all of it.
 */
function scriptLeakyModel(secrets = LOCAL_SECRETS, variables = LOCAL_VARIABLES, steps = 2): void {
  const everything = secrets.join(" ");
  for (let i = 0; i < steps - 1; i++) {
    server.push({
      body: completion({
        content: `I know ${everything}`,
        toolCalls: [toolCall(`call_${i}`, { command: `echo ${everything}; printenv ${variables}` })],
      }),
    });
  }
  server.push({
    body: completion({
      content: `Submitting ${everything}`,
      toolCalls: [
        toolCall("call_submit", {
          command: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo ${everything} && printenv ${variables}`,
        }),
      ],
    }),
  });
}

async function swerunRun(setup: ReturnType<typeof setUp>): Promise<{ outputs: Outputs; trajectory: string }> {
  scriptLeakyModel();
  const trajectory = join(setup.out, "run.traj.json");
  const events = join(setup.out, "run.events.jsonl");
  const result = await runCli(
    [
      ...["run", "-c", "default", "-c", setup.config, "-t", "Do the task.", "--yolo", "-o", trajectory],
      ...["--events", events],
    ],
    { cwd: setup.inputs, env: setup.env },
  );
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  expect(readFileSync(events, "utf8")).toContain("[REDACTED]");
  return { outputs: { paths: [setup.out], result }, trajectory };
}

const DEMO_ONE = ["--subset", "demo", "--filter", "swerun-demo__calc-1"];

/** Every 8-character piece of `secret`: a secret cut in two leaves pieces that a search for it misses. */
function piecesOf(secret: string, length = 8): string[] {
  return Array.from({ length: secret.length - length + 1 }, (_, i) => secret.slice(i, i + length));
}

/** No piece of `secret` (8 characters or more) in anything written or printed. */
function expectNoPiece(outputs: Outputs, secret: string): void {
  const places: Array<[string, string]> = [
    ["stdout", outputs.result.stdout],
    ["stderr", outputs.result.stderr],
    ...outputs.paths
      .flatMap(filesUnder)
      .map((file): [string, string] => [file, readFileSync(file, "latin1")]),
  ];
  const pieces = piecesOf(secret);
  const leaks = places.flatMap(([place, text]) =>
    pieces.filter((piece) => text.includes(piece)).map((piece) => `${piece} in ${place}`),
  );
  expect(leaks).toEqual([]);
}

/** The key the cut tests print: no piece of it is a word that outputs hold anyway ("environment"). */
const CUT_KEY = "sk-cut-Zq8Xw3Lm9Pv2Rt7Yb4Nc6Hd1Gf5";

/** setUp's inputs with CUT_KEY as the environment's OPENAI_API_KEY. */
function setUpCut(): ReturnType<typeof setUp> {
  const setup = setUp();
  return { ...setup, env: { ...setup.env, OPENAI_API_KEY: CUT_KEY } };
}

/**
 * A model that prints the key over and over (3 MB: swerun's cut and the template's both fall inside it), then
 * submits. Whole lines: `head -c 3000000` would cut the last key itself, a piece swerun did not make.
 */
function scriptCutModel(): void {
  server.push({
    body: completion({
      content: "printing",
      toolCalls: [toolCall("call_0", { command: 'yes "$OPENAI_API_KEY" | head -n 83333' })],
    }),
  });
  server.push({
    body: completion({
      content: "done",
      toolCalls: [toolCall("call_submit", { command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" })],
    }),
  });
}

/** `swerun export` (summary and judge) and `swerun report` of a trajectory, written under `out`. */
async function exportsOf(
  trajectory: string,
  out: string,
  setup: ReturnType<typeof setUp>,
): Promise<CliResult[]> {
  const options = { cwd: setup.inputs, env: setup.env };
  return [
    await runCli(["export", trajectory, "--format", "summary", "-o", join(out, "summary.jsonl")], options),
    await runCli(["export", trajectory, "--format", "judge", "-o", join(out, "judge")], options),
    await runCli(["report", trajectory, "-o", join(out, "report.json")], options),
  ];
}

describe("planted secrets reach nothing swerun writes or prints", () => {
  it("run", async () => {
    const setup = setUp();
    const { outputs, trajectory } = await swerunRun(setup);
    const saved = readFileSync(trajectory, "utf8");
    expect(saved).toContain("[REDACTED]");
    expect(saved).not.toMatch(/Proxy-Authorization|Api-Token|Cookie/);
    expectNoSecret(outputs);
  });

  it("replay, continued by the model", async () => {
    const setup = setUp();
    const { trajectory } = await swerunRun(setup);
    scriptLeakyModel();
    const output = join(setup.out, "replay.traj.json");
    const report = join(setup.out, "report.json");
    const result = await runCli(
      [
        "replay",
        trajectory,
        "-c",
        "default",
        "-c",
        setup.config,
        "--cwd",
        setup.inputs,
        "--until",
        "1",
        "--continue",
        "--yolo",
        "--exit-immediately",
        "-o",
        output,
        "--report",
        report,
        "--events",
        join(setup.out, "replay.events.jsonl"),
      ],
      { cwd: setup.inputs, env: setup.env },
    );
    // The continued run submits what the recorded one did: both redacted where the command printed them
    // (the environment's output is redacted before anything sees it), so the replay matches (exit 0).
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/submission/);
    expect(readFileSync(output, "utf8")).toContain("[REDACTED]");
    expect(readFileSync(report, "utf8")).toContain("[REDACTED]");
    expect(readFileSync(join(setup.out, "replay.events.jsonl"), "utf8")).toContain("[REDACTED]");
    expectNoSecret({ paths: [setup.out], result });
  });

  it("swebench -v (local environment): preds.json, run.json, swerun.log, trajectories, console", async () => {
    const setup = setUp();
    scriptLeakyModel();
    const out = join(setup.out, "batch");
    const local = ["--environment-class", "local", "-c", "swebench", "-c", setup.config];
    const events = join(setup.out, "batch.events.jsonl");
    const result = await runCli(["swebench", ...DEMO_ONE, ...local, "-v", "-o", out, "--events", events], {
      cwd: setup.inputs,
      env: setup.env,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(events, "utf8")).toContain("[REDACTED]");
    expect(result.stderr).toMatch(/w1 \$ echo \[REDACTED\]/);
    expect(readFileSync(join(out, "preds.json"), "utf8")).toContain("[REDACTED]");
    // Credential headers are dropped from run.json, as from the trajectory; others stay.
    const headers = JSON.parse(readFileSync(join(out, "run.json"), "utf8")).config.model.model_kwargs
      .extra_headers;
    expect(headers).toEqual({});
    expectNoSecret({ paths: [setup.out], result });
  });

  it("swebench-single (local environment), events on standard output", async () => {
    const setup = setUp();
    scriptLeakyModel();
    const result = await runCli(
      [
        "swebench-single",
        ...DEMO_ONE.slice(0, 2),
        "-i",
        "swerun-demo__calc-1",
        "--environment-class",
        "local",
        "-c",
        "swebench",
        "-c",
        setup.config,
        "-o",
        join(setup.out, "single"),
        "--events",
        "-",
      ],
      { cwd: setup.inputs, env: setup.env },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('"type":"tool_result"');
    expect(result.stdout).toContain("[REDACTED]");
    expect(readFileSync(join(setup.out, "single", "preds.json"), "utf8")).toContain("[REDACTED]");
    expectNoSecret({ paths: [setup.out], result });
  });

  it("preds, over trajectories written without redaction (another tool, an older swerun)", async () => {
    const setup = setUp();
    const { trajectory } = await swerunRun(setup);
    // What swerun preds can know in its own process: keys in the environment, .env and the global config,
    // and the values of the variables a trajectory says it forwarded.
    const known = [
      PLANTED.environmentKey,
      PLANTED.dotenvKey,
      PLANTED.globalConfigKey,
      PLANTED.forwardedValue,
    ];
    const foreign = join(setup.dir, "foreign");
    mkdirSync(foreign);
    const data = JSON.parse(readFileSync(trajectory, "utf8"));
    data.info.submission = `diff --git a/x b/x\n+${known.join(" ")}\n`;
    data.info.config.environment.forward_env = ["PROJECT_SETTING"];
    data.instance_id = "demo__x-1";
    writeFileSync(join(foreign, "demo__x-1.traj.json"), JSON.stringify(data));
    const merged = join(setup.out, "merged.json");
    const result = await runCli(["preds", foreign, "-o", merged], { cwd: setup.inputs, env: setup.env });
    expect(result.stdout).toContain("1 instances");
    expect(readFileSync(merged, "utf8")).toContain("[REDACTED]");
    const jsonl = join(setup.out, "merged.jsonl");
    const lines = await runCli(["preds", foreign, "-o", jsonl], { cwd: setup.inputs, env: setup.env });
    expectNoSecret({ paths: [setup.out], result }, [...LOCAL_SECRETS, ...known]);
    expectNoSecret({ paths: [jsonl], result: lines }, [...LOCAL_SECRETS, ...known]);
  });
});

describe("a secret cut by the middle cut of long output leaves no piece", () => {
  it("run (local environment): trajectory, events, exports, report, console", async () => {
    const setup = setUpCut();
    scriptCutModel();
    const trajectory = join(setup.out, "cut.traj.json");
    const events = join(setup.out, "cut.events.jsonl");
    const result = await runCli(
      [
        "run",
        "-c",
        "default",
        "-c",
        setup.config,
        "-t",
        "Do the task.",
        "--yolo",
        "-o",
        trajectory,
        "--events",
        events,
      ],
      { cwd: setup.inputs, env: setup.env },
    );
    expect(result.code, result.stderr).toBe(0);
    const saved = readFileSync(trajectory, "utf8");
    expect(saved).toContain("bytes of output elided from the middle");
    expect(saved).toContain("[REDACTED]");
    for (const exported of await exportsOf(trajectory, setup.out, setup))
      expect(exported.code, exported.stderr).toBe(0);
    expectNoPiece({ paths: [setup.out], result }, CUT_KEY);
  });
});

await describeDocker("planted secrets in a Docker batch (forward_env)", () => {
  it("a secret cut by the middle cut of long output leaves no piece (swebench in Docker, exports)", async () => {
    await dockerFixture();
    const setup = setUpCut();
    scriptCutModel();
    const out = join(setup.out, "docker-cut");
    const result = await runCli(
      [
        ...["swebench", ...DEMO_ONE, "--environment-class", "docker", "-c", "swebench", "-c", setup.config],
        ...["-c", `environment.run_args=${JSON.stringify(TEST_RUN_ARGS)}`],
        ...["-c", 'environment.forward_env=["OPENAI_API_KEY"]', "-v", "-o", out],
        ...["--events", join(setup.out, "docker-cut.events.jsonl")],
      ],
      { cwd: setup.inputs, env: setup.env },
    );
    expect(result.code, result.stderr).toBe(0);
    const trajectory = join(out, "swerun-demo__calc-1", "swerun-demo__calc-1.traj.json");
    expect(readFileSync(trajectory, "utf8")).toContain("bytes of output elided from the middle");
    for (const exported of await exportsOf(out, setup.out, setup))
      expect(exported.code, exported.stderr).toBe(0);
    expectNoPiece({ paths: [setup.out], result }, CUT_KEY);
  });

  it("swebench -v in Docker", async () => {
    await dockerFixture();
    const setup = setUp();
    scriptLeakyModel(ALL_SECRETS, `${LOCAL_VARIABLES} PROJECT_SETTING`);
    const out = join(setup.out, "docker");
    const result = await runCli(
      [
        "swebench",
        ...DEMO_ONE,
        "--environment-class",
        "docker",
        "-c",
        "swebench",
        "-c",
        setup.config,
        "-c",
        `environment.run_args=${JSON.stringify(TEST_RUN_ARGS)}`,
        "-c",
        'environment.forward_env=["OPENAI_API_KEY","PROJECT_SETTING"]',
        "-v",
        "-o",
        out,
        "--events",
        join(setup.out, "docker.events.jsonl"),
      ],
      { cwd: setup.inputs, env: setup.env },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(setup.out, "docker.events.jsonl"), "utf8")).toContain("[REDACTED]");
    const trajectory = readFileSync(
      join(out, "swerun-demo__calc-1", "swerun-demo__calc-1.traj.json"),
      "utf8",
    );
    expect(trajectory).toContain('"Submitted"');
    expectNoSecret({ paths: [setup.out], result }, ALL_SECRETS);
  });
});
