import { describe, expect, it } from "vitest";
import { checkSubmission } from "../../src/agent/submission.js";
import { Submitted } from "../../src/errors.js";

const submission = (output: string, returncode = 0) => {
  try {
    checkSubmission({ output, returncode, exception_info: "" });
    return undefined;
  } catch (error) {
    if (error instanceof Submitted) return error.messages[0]?.extra;
    throw error;
  }
};

describe("checkSubmission", () => {
  it("submits the lines after the marker", () => {
    expect(submission("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\ndiff --git a b\n+x\n")).toEqual({
      exit_status: "Submitted",
      submission: "diff --git a b\n+x\n",
    });
  });

  it("allows leading whitespace and an empty submission", () => {
    expect(submission("\n  COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT  ")).toEqual({
      exit_status: "Submitted",
      submission: "",
    });
  });

  it("ignores the marker on a later line, inside a line, or with a failing exit code", () => {
    expect(submission("hello\nCOMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n")).toBeUndefined();
    expect(submission("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n")).toBeUndefined();
    expect(submission("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n", 1)).toBeUndefined();
  });
});
