/** A scripted model's outputs for benchmarks: `steps` text actions running `command`, then a submission. */
export function scriptedOutputs(command: string, steps: number): Array<Record<string, unknown>> {
  const say = (text: string) => ({
    role: "assistant",
    content: `\`\`\`mswea_bash_command\n${text}\n\`\`\``,
    extra: { actions: [{ command: text }], cost: 0 },
  });
  return [
    ...Array.from({ length: steps }, () => say(command)),
    say("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
  ];
}
