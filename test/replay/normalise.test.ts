import { describe, expect, it } from "vitest";
import { normaliseOutput } from "../../src/replay/normalise.js";

describe("normaliseOutput", () => {
  it("replaces timestamps, dates and clock times", () => {
    expect(normaliseOutput("at 2025-08-01T10:00:03Z and 2026-11-22 14:30:05.123+01:00")).toBe(
      "at <TIMESTAMP> and <TIMESTAMP>",
    );
    expect(normaliseOutput("Tue Nov 22 14:30:05 UTC 2026\n")).toBe("<DATE>\n");
    expect(normaliseOutput("Date: Sat, 1 Aug 2025 10:00:03 +0000")).toBe("Date: <DATE>");
    expect(normaliseOutput("-rw-r--r-- 1 root root 13 Aug  1 10:00 greeting.txt")).toBe(
      "-rw-r--r-- 1 root root 13 <DATE> greeting.txt",
    );
    expect(normaliseOutput("-rw-r--r-- 1 root root 13 Aug  1  2024 old.txt")).toBe(
      "-rw-r--r-- 1 root root 13 <DATE> old.txt",
    );
    expect(normaliseOutput("started 09:15:02.5")).toBe("started <TIME>");
  });

  it("replaces durations", () => {
    expect(normaliseOutput("===== 5 passed in 0.12s =====")).toBe("===== 5 passed in <DURATION> =====");
    expect(normaliseOutput("Ran 3 tests in 1.2 seconds")).toBe("Ran 3 tests in <DURATION>");
    expect(normaliseOutput("real\t0m0.003s")).toBe("real\t<DURATION>");
    expect(normaliseOutput("took 15ms, then 2 min")).toBe("took <DURATION>, then <DURATION>");
  });

  it("replaces temp directories, container names and ids, and the working directory", () => {
    expect(normaliseOutput("at Object.<anonymous> (/tmp/swerun-IeWDjV/test.js:5:8)")).toBe(
      "at Object.<anonymous> (<TMP>/test.js:5:8)",
    );
    expect(normaliseOutput("/private/var/folders/ab/cd123/T/swerun-x1/a")).toBe("<TMP>/a");
    expect(normaliseOutput("swerun-astropy__astropy-12907-1a2b3c4d is up")).toBe("<CONTAINER> is up");
    expect(normaliseOutput(`${"a1".repeat(32)} ${"0f".repeat(20)} 4f2d9c1e8b7a`)).toBe("<ID> <ID> <ID>");
    expect(normaliseOutput("/home/me/checkout/src/a.py", "/home/me/checkout")).toBe("<CWD>/src/a.py");
  });

  it("leaves ordinary output alone", () => {
    const text =
      "calc.js\ntest.js\n13\nexit code 1\nversion 1.2.3\nadd(2, 3) should be 5\n/usr/bin/env node\n";
    expect(normaliseOutput(text)).toBe(text);
    expect(normaliseOutput("/", "/")).toBe("/");
    expect(normaliseOutput("deadbeef")).toBe("deadbeef");
  });
});
