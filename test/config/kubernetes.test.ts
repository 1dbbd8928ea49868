import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { loadConfig } from "../../src/config/load.js";

const BASE = ["demo", "environment.environment_class=kubernetes", "environment.image=img:1"];

function errorOf(specs: string[]): string {
  try {
    loadConfig(specs);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("environment_class: kubernetes", () => {
  it("takes mini-swe-agent's Docker keys where they mean the same, and the cluster's own, with defaults", () => {
    const config = loadConfig([
      ...BASE,
      "environment.namespace=ns",
      'environment.resources={"limits":{"cpu":2}}',
    ]);
    expect(config.environment).toMatchObject({
      environment_class: "kubernetes",
      image: "img:1",
      cwd: "/",
      interpreter: ["bash", "-lc"],
      container_timeout: "2h",
      pull_timeout: 120,
      exec_mode: "session",
      image_pull_policy: "IfNotPresent",
      namespace: "ns",
      resources: { limits: { cpu: "2" } },
      node_loss_toleration_seconds: 30,
    });
  });

  it("refuses Docker-only keys in one line saying what to use instead", () => {
    expect(errorOf([...BASE, 'environment.run_args=["--rm"]'])).toMatch(
      /environment.run_args is a Docker key; on Kubernetes use pod_template \(spec\) and resources/,
    );
    expect(errorOf([...BASE, "environment.docker_hosts=[]"])).toMatch(/the cluster places the pods/);
  });

  it("refuses pod_template keys swerun sets, unknown keys and bad variable names, naming the field", () => {
    expect(errorOf([...BASE, 'environment.pod_template={"spec":{"containers":[]}}'])).toMatch(
      /environment.pod_template.spec.containers: is set by swerun/,
    );
    expect(errorOf([...BASE, "environment.namespaces=x"])).toMatch(/environment.namespaces: unknown key/);
    expect(errorOf([...BASE, 'environment.forward_env=["A-B"]'])).toMatch(
      /environment.forward_env.0: "A-B" is not a variable name/,
    );
    expect(errorOf([...BASE, "environment.image_pull_policy=Sometimes"])).toMatch(
      /environment.image_pull_policy/,
    );
  });
});
