import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import { startOnTerminal } from "../helpers/tty.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));
const RUN_PROMPT = /Run\? Enter runs it/;

function scriptedConfig(dir: string, commands: string[]): string {
  const outputs = commands.map((command) => ({
    role: "assistant",
    content: command,
    extra: { actions: [{ command }], cost: 0 },
  }));
  const path = join(dir, "scripted.yaml");
  writeFileSync(
    path,
    JSON.stringify({ model: { model_class: "deterministic", outputs }, run: { setup_dir: dir } }),
  );
  return path;
}

describe("swerun run on a terminal", () => {
  it("confirm mode: Enter runs a command, typed text rejects it and reaches the model, the exit is confirmed", async () => {
    const dir = tempDir();
    const out = join(dir, "t.traj.json");
    const tty = startOnTerminal(["run", "-c", "demo", "-o", out], dir);
    await tty.until(RUN_PROMPT);
    tty.type("\r");
    await tty.until(RUN_PROMPT);
    tty.type("do not run the tests yet\r");
    await tty.until(RUN_PROMPT);
    tty.type("\r");
    await tty.until(RUN_PROMPT);
    tty.type("\r");
    await tty.until(/The agent wants to finish/);
    tty.type("\r");
    expect(await tty.done, tty.output().slice(-2000)).toBe(0);
    const trajectory = readJson(out);
    expect(trajectory.info.exit_status).toBe("Submitted");
    const rejection = trajectory.messages.find((m: { content: unknown }) =>
      String(m.content).startsWith("The user rejected"),
    );
    expect(rejection.content).toBe("The user rejected your command: do not run the tests yet");
  });

  it("Ctrl-C stops the running command and asks; the answer goes to the model; a second Ctrl-C ends the run", async () => {
    const dir = tempDir();
    const out = join(dir, "c.traj.json");
    const config = scriptedConfig(dir, [
      `touch ${dir}/one; sleep 300`,
      `touch ${dir}/two; sleep 300`,
      "echo never",
    ]);
    const tty = startOnTerminal(["run", "-c", "demo", "-c", config, "-t", "t", "--yolo", "-o", out], dir);
    await waitFor(() => existsSync(join(dir, "one")));
    tty.type("\x03");
    await tty.until(/Interrupted\. Enter continues/);
    tty.type("please be quicker\r");
    await waitFor(() => existsSync(join(dir, "two")));
    tty.type("\x03");
    await tty.until(/Interrupted\. Enter continues/);
    tty.type("\x03");
    expect(await tty.done, tty.output().slice(-2000)).toBe(0);
    const trajectory = readJson(out);
    expect(trajectory.info.exit_status).toBe("UserInterruption");
    const contents = trajectory.messages.map((m: { content: unknown }) => String(m.content));
    expect(contents).toContain("please be quicker");
    const killed = trajectory.messages.filter(
      (m: { extra?: { returncode?: number } }) => m.extra?.returncode === -1,
    );
    expect(killed.map((m: { extra: { exception_info: string } }) => m.extra.exception_info)).toEqual([
      "An error occurred while executing the command: Command interrupted by the user; its process group was killed",
      "An error occurred while executing the command: Command interrupted by the user; its process group was killed",
    ]);
    expect(contents).not.toContain("never");
  });
});
