import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Agent } from "../../src/agent/agent.js";
import type { Interaction } from "../../src/agent/interaction.js";
import { InteractiveAgent } from "../../src/agent/interactive.js";
import { exitMessage, UserInterruption } from "../../src/errors.js";
import { act, SUBMIT, scriptedAgent } from "../helpers/agent.js";
import { waitFor } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

/** The agent of a scenario with an interaction is an InteractiveAgent. */
function interactive(agent: Agent): InteractiveAgent {
  if (!(agent instanceof InteractiveAgent)) throw new Error("expected an InteractiveAgent");
  return agent;
}

describe("InteractiveAgent: a person confirms, interrupts, and sends the agent back to work", () => {
  it("sends a rejection reason to the model in confirm mode", async () => {
    const asked: string[][] = [];
    const interaction: Interaction = {
      confirmActions: async (actions) => {
        asked.push(actions.map((action) => action.command));
        return asked.length === 1 ? "do not delete things" : null;
      },
      onInterrupt: async () => "",
      confirmExit: async () => null,
    };
    const { agent } = scriptedAgent({ outputs: [act("rm -rf something"), SUBMIT], interaction });
    await agent.run("confirm");
    expect(asked).toEqual([
      ["rm -rf something"],
      ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo the-patch"],
    ]);
    expect(agent.messages[3]).toMatchObject({
      role: "user",
      content: "The user rejected your command: do not delete things",
    });
  });

  it("lets the user send the agent back to work instead of accepting the submission", async () => {
    let exits = 0;
    const interaction: Interaction = {
      confirmActions: async () => null,
      onInterrupt: async () => "",
      confirmExit: async () => (++exits === 1 ? "also add a test" : null),
    };
    const { agent } = scriptedAgent({ outputs: [SUBMIT, SUBMIT], interaction });
    expect((await agent.run("exit")).exit_status).toBe("Submitted");
    expect(agent.messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "exit",
    ]);
    expect(agent.messages[3]).toMatchObject({
      content: "The user added a new task: also add a test",
      extra: { interrupt_type: "UserNewTask" },
    });
  });

  it("on interrupt stops the running command and asks the user, whose note goes to the model", async () => {
    const started = join(tempDir(), "started");
    const interaction: Interaction = {
      confirmActions: async () => null,
      onInterrupt: async () => "please try something faster",
      confirmExit: async () => null,
    };
    const { agent, events } = scriptedAgent({
      outputs: [act(`echo started; touch '${started}'; sleep 300`), SUBMIT],
      interaction,
    });
    events.length = 0;
    // Interrupted once the command has printed its line (the flag file follows the echo).
    waitFor(() => existsSync(started)).then(() => interactive(agent).interrupt());
    expect((await agent.run("interrupt")).exit_status).toBe("Submitted");
    expect(agent.messages[3]?.extra).toMatchObject({ returncode: -1, raw_output: "started\n" });
    expect(agent.messages[4]).toMatchObject({ role: "user", content: "please try something faster" });
  });

  it("ends with UserInterruption when the user quits at the interrupt prompt", async () => {
    const quitting: Interaction = {
      confirmActions: async () => null,
      onInterrupt: async () => {
        throw new UserInterruption(exitMessage("UserInterruption"));
      },
      confirmExit: async () => null,
    };
    const quit = scriptedAgent({ outputs: [act("sleep 300"), SUBMIT], interaction: quitting });
    quit.agent.bus.subscribe((event) => {
      if (event.type === "action_start") interactive(quit.agent).interrupt();
    });
    expect((await quit.agent.run("quit")).exit_status).toBe("UserInterruption");
  });
});
