import { describe, expect, it } from "vitest";
import {
  compareObservation,
  compareStep,
  compareSubmissions,
  type ReplayedObservation,
} from "../../src/replay/divergence.js";
import type { RecordedObservation, RecordedStep } from "../../src/replay/recorded.js";

const recorded = (output: string, returncode: number | null = 0, rendered = false): RecordedObservation => ({
  returncode,
  output,
  exception_info: "",
  rendered,
});
const replayed = (output: string, returncode = 0, content = ""): ReplayedObservation => ({
  returncode,
  output,
  exception_info: "",
  content,
});

describe("compareObservation", () => {
  it("is exact for the same exit code and output, normalised when only volatile parts differ", () => {
    expect(compareObservation(recorded("ok\n"), replayed("ok\n"))).toBe("exact");
    expect(compareObservation(recorded("done in 0.12s"), replayed("done in 0.31s"))).toBe("normalised");
    expect(
      compareObservation(recorded("/tmp/a/x"), replayed("/work/b/x"), {
        recorded: "/tmp/a",
        replayed: "/work/b",
      }),
    ).toBe("normalised");
  });

  it("is DIFFERENT for another exit code, other output, or an action that ran in only one of the runs", () => {
    expect(compareObservation(recorded("ok\n", 0), replayed("ok\n", 1))).toBe("DIFFERENT");
    expect(compareObservation(recorded("5 passed"), replayed("4 passed"))).toBe("DIFFERENT");
    expect(compareObservation(recorded("x"), null)).toBe("DIFFERENT");
    expect(compareObservation(null, replayed("x"))).toBe("DIFFERENT");
    expect(compareObservation(null, null)).toBe("exact");
    const timedOut = { ...replayed("", -1), exception_info: "timed out" };
    expect(compareObservation(recorded("", -1), timedOut)).toBe("DIFFERENT");
  });

  it("compares the rendered observation when only that is recorded, and ignores an unknown exit code", () => {
    expect(
      compareObservation(recorded("Observation: hi", null, true), replayed("hi", 0, "Observation: hi")),
    ).toBe("exact");
    expect(
      compareObservation(recorded("Observation: hi", null, true), replayed("hi", 0, "Observation: ho")),
    ).toBe("DIFFERENT");
    expect(compareObservation(recorded("hi", null), replayed("hi", 7))).toBe("exact");
  });
});

describe("compareStep", () => {
  const step: RecordedStep = {
    step: 3,
    kind: "actions",
    before: [],
    actions: [{ command: "a" }, { command: "b" }, { command: "c" }],
    observations: [recorded("1"), recorded("took 1s"), recorded("3")],
    after: [],
  };

  it("compares each action and takes the worst as the step's status", () => {
    const exact = compareStep(step, [replayed("1"), replayed("took 1s"), replayed("3")]);
    expect(exact.status).toBe("exact");
    const normalised = compareStep(step, [replayed("1"), replayed("took 2s"), replayed("3")]);
    expect(normalised.actions.map((a) => a.status)).toEqual(["exact", "normalised", "exact"]);
    expect(normalised.status).toBe("normalised");
    const stopped = compareStep(step, [replayed("1"), replayed("took 2s")]);
    expect(stopped.actions.map((a) => a.status)).toEqual(["exact", "normalised", "DIFFERENT"]);
    expect(stopped.status).toBe("DIFFERENT");
  });

  it("marks steps that ran nothing as replayed", () => {
    expect(compareStep({ ...step, kind: "format_error", actions: [], observations: [] }, [])).toEqual({
      step: 3,
      kind: "format_error",
      status: "replayed",
      actions: [],
    });
  });
});

describe("compareSubmissions", () => {
  it("is same, or different with a unified diff from the recorded to the replayed submission", () => {
    expect(compareSubmissions("patch\n", "patch\n")).toEqual({
      status: "same",
      recorded: "patch\n",
      replayed: "patch\n",
      diff: "",
    });
    const different = compareSubmissions("a\nb\n", "a\nc\n");
    expect(different.status).toBe("different");
    expect(different.diff).toBe(
      ["--- recorded submission", "+++ replayed submission", "@@ -1,2 +1,2 @@", " a", "-b", "+c"].join("\n"),
    );
  });
});
