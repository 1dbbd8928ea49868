import { describe, expect, it } from "vitest";
import { englishMessages } from "../../src/config/common.js";
import { dockerEnvironmentSchema } from "../../src/config/docker.js";
import { parseMemory, translateRunArgs } from "../../src/config/docker-run-args.js";
import { loadConfig } from "../../src/config/load.js";

describe("run_args: docker run flags translated for the Engine API", () => {
  it("translates the common flags, in both --flag value and --flag=value forms", () => {
    const translated = translateRunArgs(
      [
        "--rm",
        "--network",
        "none",
        "--platform=linux/amd64",
        "-v",
        "/data:/data:ro",
        "--volume=/cache:/root/.cache",
        "-e",
        "A=1",
        "--env=B=two=2",
        "-e",
        "FROM_HOST",
        "-e",
        "NOT_ON_HOST",
        "--memory",
        "1.5g",
        "--cpus=2.5",
        "--pids-limit",
        "256",
        "-u",
        "1000:1000",
        "--label",
        "team=infra",
        "--init",
      ],
      { hostEnv: { FROM_HOST: "host-value" } },
    );
    expect(translated).toEqual({
      hostConfig: {
        AutoRemove: true,
        NetworkMode: "none",
        Binds: ["/data:/data:ro", "/cache:/root/.cache"],
        Memory: 1610612736,
        NanoCpus: 2_500_000_000,
        PidsLimit: 256,
        Init: true,
      },
      env: ["A=1", "B=two=2", "FROM_HOST=host-value"],
      labels: { team: "infra" },
      platform: "linux/amd64",
      user: "1000:1000",
    });
  });

  it("parses Docker memory sizes", () => {
    expect(parseMemory("512m")).toBe(512 * 1024 ** 2);
    expect(parseMemory("2GB")).toBe(2 * 1024 ** 3);
    expect(parseMemory("1048576")).toBe(1048576);
    expect(() => parseMemory("lots")).toThrow(
      'run_args: --memory "lots" is not a size (use e.g. 512m or 2g)',
    );
  });

  it("takes --pids-limit as docker run does: a count, or -1 for no limit", () => {
    expect(translateRunArgs(["--pids-limit=-1"]).hostConfig.PidsLimit).toBe(-1);
    expect(() => translateRunArgs(["--pids-limit", "many"])).toThrow(
      'run_args: --pids-limit "many" is not a process count (use e.g. 512, or -1 for no limit)',
    );
  });

  it("refuses --privileged unless allow_privileged is set", () => {
    expect(() => translateRunArgs(["--privileged"])).toThrow(
      /--privileged .* set environment.allow_privileged: true/,
    );
    expect(translateRunArgs(["--privileged"], { allowPrivileged: true }).hostConfig.Privileged).toBe(true);
  });

  it("rejects flags it does not translate, and flags missing their value, with a clear message", () => {
    expect(() => translateRunArgs(["--cap-add", "SYS_PTRACE"])).toThrow(
      'run_args: "--cap-add" is not supported (swerun translates --rm, --network, --platform, -v/--volume, -e/--env, -m/--memory, --cpus, --pids-limit, -u/--user, -l/--label, --init, --privileged); set Engine API options in environment.container_options instead',
    );
    expect(() => translateRunArgs(["--network"])).toThrow("run_args: --network needs a value");
    expect(() => translateRunArgs(["-v", "/just-a-path"])).toThrow(/needs the form host-path:container-path/);
  });
});

describe("the docker environment config", () => {
  it("has mini-swe-agent's defaults", () => {
    expect(dockerEnvironmentSchema.parse({ environment_class: "docker", image: "python:3.12" })).toEqual({
      environment_class: "docker",
      image: "python:3.12",
      cwd: "/",
      env: {},
      forward_env: [],
      timeout: 30,
      interpreter: ["bash", "-lc"],
      max_output_bytes: 1_048_576,
      container_timeout: "2h",
      pull_timeout: 120,
      run_args: ["--rm"],
      allow_privileged: false,
      container_options: {},
      exec_mode: "session",
      keep_container: false,
    });
  });

  it("takes image_budget as a size, and refuses what is not one", () => {
    const parse = (value: unknown) =>
      dockerEnvironmentSchema.safeParse(
        { environment_class: "docker", image: "x", image_budget: value },
        { error: englishMessages() },
      );
    expect(parse("120G").data?.image_budget).toBe("120G");
    expect(parse(5e9).data?.image_budget).toBe(5e9);
    expect(parse("lots").error?.issues.map((issue) => [issue.path, issue.message])).toEqual([
      [["image_budget"], 'must be a size such as "120G", "1.5T", "500Gi" or a number of bytes'],
    ]);
  });

  it("refuses env and forward_env names a shell cannot export, naming each", () => {
    const result = dockerEnvironmentSchema.safeParse({
      environment_class: "docker",
      image: "x",
      env: { GOOD_1: "a", "BAD-NAME": "b" },
      forward_env: ["OK", "2BAD"],
    });
    expect(result.error?.issues.map((issue) => [issue.path, issue.message])).toEqual([
      [
        ["env", "BAD-NAME"],
        '"BAD-NAME" is not a variable name (letters, digits and _, not starting with a digit)',
      ],
      [
        ["forward_env", 1],
        '"2BAD" is not a variable name (letters, digits and _, not starting with a digit)',
      ],
    ]);
  });

  it("takes exec_mode session or exec, and names the choices otherwise", () => {
    const parse = (exec_mode: string) =>
      dockerEnvironmentSchema.safeParse(
        { environment_class: "docker", image: "x", exec_mode },
        { error: englishMessages() },
      );
    expect(parse("exec").data?.exec_mode).toBe("exec");
    expect(parse("fork").error?.issues[0]).toMatchObject({ path: ["exec_mode"] });
    expect(parse("fork").error?.issues[0]?.message).toMatch(/"session".*"exec"/);
  });

  it("validates run_args and container_timeout when the config is read", () => {
    const result = dockerEnvironmentSchema.safeParse({
      environment_class: "docker",
      image: "x",
      run_args: ["--pid=host"],
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({
      path: ["run_args"],
      message: expect.stringMatching(/^"--pid=host" is not supported/),
    });
    expect(
      dockerEnvironmentSchema.parse({ environment_class: "docker", image: "x", container_timeout: 600 })
        .container_timeout,
    ).toBe("600");
    expect(
      dockerEnvironmentSchema.safeParse({
        environment_class: "docker",
        image: "x",
        container_timeout: "2 hours",
      }).success,
    ).toBe(false);
  });

  it("names the flag and where it was set when swerun run loads the config", () => {
    const spec = 'environment.run_args=["--rm", "--cap-add", "SYS_ADMIN"]';
    expect(() =>
      loadConfig(["demo", "environment.environment_class=docker", "environment.image=x", spec]),
    ).toThrow(`-c ${spec}: environment.run_args: "--cap-add" is not supported`);
  });
});
