import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { loadConfig } from "../../src/config/load.js";
import { DEFAULT_MULTIMODAL_REGEX, expandContent } from "../../src/models/multimodal.js";
import { pythonRegex } from "../../src/python/regex.js";
import { runCli } from "../helpers/cli.js";
import { completion, TEST_KEY, TEST_PRICES, toolCall, useOpenAIServer } from "../helpers/openai-server.js";
import { tempDir } from "../helpers/tmp.js";

const server = useOpenAIServer();

/** The first bytes of a PNG file and a little payload: what the image server serves. */
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from("swerun"),
]);

let images: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => images?.close(resolve) ?? resolve(undefined));
  images = undefined;
});

/** A local HTTP server serving PNG images under any path; returns its base URL. */
async function imageServer(): Promise<string> {
  images = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "image/png", "content-length": PNG.length });
    response.end(PNG);
  });
  await new Promise<void>((resolve) => images?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
}

const tag = (url: string) =>
  `<MSWEA_MULTIMODAL_CONTENT><CONTENT_TYPE>image_url</CONTENT_TYPE>${url}</MSWEA_MULTIMODAL_CONTENT>`;

describe("model.multimodal_regex", () => {
  it("reads Python's inline flags and named groups; a regex JavaScript cannot run is a config error", () => {
    expect(pythonRegex("(?s)a.b").test("a\nb")).toBe(true);
    expect(pythonRegex("a.b").test("a\nb")).toBe(false);
    expect(pythonRegex("(?P<k>x)(?P=k)").test("xy")).toBe(false);
    expect(pythonRegex("(?i)(?P<k>x)(?P=k)").test("XX")).toBe(true);
    expect(expandContent(`a${tag(" u ")}`, DEFAULT_MULTIMODAL_REGEX)).toEqual([
      { type: "text", text: "a" },
      { type: "image_url", image_url: { url: "u" } },
    ]);
    const dir = tempDir();
    const path = join(dir, "c.yaml");
    writeFileSync(path, "model:\n  multimodal_regex: '(?x)a b'\n");
    let message = "";
    try {
      loadConfig(["default", path]);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toMatch(/model\.multimodal_regex: not a usable regex: the inline flag \(\?x\)/);
  });

  it("sends the task's and the outputs' images to the model as image parts (swerun run, real HTTP)", async () => {
    const base = await imageServer();
    const dir = tempDir("swerun-multimodal-");
    const registry = join(dir, "prices.json");
    writeFileSync(registry, JSON.stringify(TEST_PRICES));
    const config = join(dir, "multimodal.yaml");
    writeFileSync(
      config,
      `model:\n  multimodal_regex: '${DEFAULT_MULTIMODAL_REGEX}'\n  model_kwargs:\n    api_base: ${server.url}\n`,
    );
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    server.push(
      {
        body: completion({
          toolCalls: [toolCall("c1", { command: `echo '${tag(`${base}/after.png`)}'` })],
          usage,
        }),
      },
      {
        body: completion({
          toolCalls: [toolCall("c2", { command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" })],
          usage,
        }),
      },
    );
    const out = join(dir, "x.traj.json");
    const result = await runCli(
      [
        "run",
        "-m",
        "openai/test-model",
        "-c",
        "default",
        "-c",
        config,
        "-c",
        `environment.cwd=${dir}`,
        "-t",
        `The button looks wrong: ${tag(`${base}/before.png`)} Fix it.`,
        "--yolo",
        "-o",
        out,
      ],
      {
        cwd: dir,
        env: {
          OPENAI_API_KEY: TEST_KEY,
          SWERUN_GLOBAL_CONFIG_DIR: dir,
          LITELLM_MODEL_REGISTRY_PATH: registry,
        },
      },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests.map((request) => request.body.messages);
    expect(first[0].content).toEqual([{ type: "text", text: expect.any(String) }]);
    const task = first[1].content;
    expect(task.map((part: { type: string }) => part.type)).toEqual(["text", "image_url", "text"]);
    expect(task[1]).toEqual({ type: "image_url", image_url: { url: `${base}/before.png` } });
    const observation = second.at(-1);
    expect(observation.role).toBe("tool");
    expect(observation.tool_call_id).toBe("c1");
    expect(observation.content).toContainEqual({
      type: "image_url",
      image_url: { url: `${base}/after.png` },
    });
    const sentByUs = second.filter((message: { role: string }) => message.role !== "assistant");
    expect(JSON.stringify(sentByUs)).not.toContain("MSWEA_MULTIMODAL_CONTENT");
    // Every image the model is sent is there to be fetched.
    const urls = [task[1].image_url.url, `${base}/after.png`];
    for (const url of urls) {
      const response = await fetch(url);
      expect(response.headers.get("content-type")).toBe("image/png");
      expect(Buffer.from(await response.arrayBuffer())).toEqual(PNG);
    }
  });
});
