import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { DEFAULT_OBSERVATION_TEMPLATE } from "../../src/config/model.js";
import { tempDir } from "../helpers/tmp.js";

const TEMPLATES = 'agent:\n  system_template: "s"\n  instance_template: "i"\n';

/** A config file: the agent's two templates, then `text` (which may continue the agent section). */
function config(text: string): string {
  const path = join(tempDir(), "c.yaml");
  writeFileSync(path, TEMPLATES + text);
  return path;
}

describe("configs mini-swe-agent 2.x accepts", () => {
  it("fills mini-swe-agent's model defaults: observation and format-error templates, cost_per_call 1.0", () => {
    const loaded = loadConfig([config("model:\n  model_class: deterministic\n  outputs: []\n")]);
    expect(loaded.model.observation_template).toBe(DEFAULT_OBSERVATION_TEMPLATE);
    expect(loaded.model.format_error_template).toBe("{{ error }}");
    expect(loaded.model.cost_per_call).toBe(1);
    const text = loadConfig([config("model:\n  model_class: litellm_textbased\n  model_name: openai/x\n")]);
    expect(text.model.format_error_template).toBe(
      "Please always provide EXACTLY ONE action in triple backticks, found {{actions|length}} actions.",
    );
  });

  it("maps mini-swe-agent's class paths and short names", () => {
    const loaded = loadConfig([
      config(
        "  agent_class: minisweagent.agents.default.DefaultAgent\n" +
          "environment:\n  environment_class: minisweagent.environments.local.LocalEnvironment\n" +
          "model:\n  model_class: minisweagent.models.test_models.DeterministicToolcallModel\n  outputs: []\n",
      ),
    ]);
    expect(loaded.agent.agent_class).toBe("default");
    expect(loaded.environment.environment_class).toBe("local");
    expect(loaded.model.model_class).toBe("deterministic_toolcall");
    const interactive = loadConfig([
      config("  agent_class: interactive\nmodel:\n  model_class: deterministic_toolcall\n  outputs: []\n"),
    ]);
    expect(interactive.agent.agent_class).toBe("interactive");
    expect(() => loadConfig([config("  agent_class: my.Agent\nmodel:\n  outputs: []\n")])).toThrow(
      /agent.agent_class: "my.Agent" is not supported/,
    );
  });

  it("ignores Docker keys with the local environment, and refuses executable with docker", () => {
    const local = loadConfig([
      config(
        "environment:\n  environment_class: local\n  executable: podman\n  image: x\n  forward_env: [HOME]\n" +
          "  run_args: [--rm]\n  container_timeout: 1h\n  pull_timeout: 5\n" +
          "model:\n  model_class: deterministic\n  outputs: []\n",
      ),
    ]);
    expect(local.environment).not.toHaveProperty("executable");
    expect(local.environment).not.toHaveProperty("image");
    expect(() =>
      loadConfig([
        config(
          "environment:\n  environment_class: docker\n  image: x\n  executable: podman\nmodel:\n  outputs: []\n",
        ),
      ]),
    ).toThrow(/environment.executable is not supported: swerun talks to the Docker Engine API/);
  });

  it("runs bubblewrap with mini-swe-agent's keys, ignoring Docker's and local's others", () => {
    const loaded = loadConfig([
      config(
        "environment:\n  environment_class: minisweagent.environments.extra.bubblewrap.BubblewrapEnvironment\n" +
          "  executable: /usr/bin/bwrap\n  wrapper_args: [--unshare-user-try]\n  forward_env: [HOME]\n" +
          "  image: x\n  interpreter: [bash, -lc]\n  run_args: [--rm]\n  local_interpreter: [sh, -c]\n" +
          "model:\n  model_class: deterministic\n  outputs: []\n",
      ),
    ]);
    expect(loaded.environment).toEqual({
      environment_class: "bubblewrap",
      cwd: "",
      env: {},
      timeout: 30,
      max_output_bytes: 1_048_576,
      executable: "/usr/bin/bwrap",
      wrapper_args: ["--unshare-user-try"],
      forward_env: ["HOME"],
    });
    const local = loadConfig([
      config(
        "environment:\n  environment_class: local\n  wrapper_args: [--bogus]\n" +
          "model:\n  model_class: deterministic\n  outputs: []\n",
      ),
    ]);
    expect(local.environment).not.toHaveProperty("wrapper_args");
  });

  it("refuses mini-swe-agent's environments that cannot run here in one line saying what to use", () => {
    const classes = {
      singularity: "Singularity/Apptainer",
      "minisweagent.environments.singularity.SingularityEnvironment": "Singularity/Apptainer",
      swerex_docker: "SWE-ReX in Docker",
      "minisweagent.environments.extra.swerex_docker.SwerexDockerEnvironment": "SWE-ReX in Docker",
      swerex_modal: "SWE-ReX on Modal",
      "minisweagent.environments.extra.swerex_modal.SwerexModalEnvironment": "SWE-ReX on Modal",
      contree: "ConTree",
      "minisweagent.environments.extra.contree.ContreeEnvironment": "ConTree",
    };
    for (const [name, what] of Object.entries(classes)) {
      const path = config(`environment:\n  environment_class: ${name}\nmodel:\n  outputs: []\n`);
      expect(() => loadConfig([path])).toThrow(
        `${path}: environment.environment_class: "${name}" (mini-swe-agent's ${what}) does not run in swerun: use docker, bubblewrap or kubernetes`,
      );
    }
    const path = config("environment:\n  environment_class: podman\nmodel:\n  outputs: []\n");
    expect(() => loadConfig([path])).toThrow(
      `${path}: environment.environment_class: "podman" is not supported (supported: local, docker, bubblewrap, kubernetes)`,
    );
  });

  it("reads YAML with more than 100 aliases, as PyYAML writes it, but stops a billion laughs", () => {
    const aliases = Array.from({ length: 150 }, () => "  - *step").join("\n");
    const step = "  - &step {role: assistant, content: again, extra: {actions: [{command: echo}]}}";
    const many = loadConfig([
      config(`model:\n  model_class: deterministic\n  outputs:\n${step}\n${aliases}\n`),
    ]);
    expect(many.model.outputs).toHaveLength(151);
    const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [name, previous] of ["ba", "cb", "dc", "ed", "fe", "gf", "hg", "ih"].map((pair) => [
      ...pair,
    ])) {
      laughs.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(",")}]`);
    }
    const bomb = join(tempDir(), "bomb.yaml");
    writeFileSync(bomb, `${laughs.join("\n")}\n`);
    expect(() => loadConfig([bomb])).toThrow(/malformed YAML: Excessive alias count/);
  });
});
