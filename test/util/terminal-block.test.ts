import { describe, expect, it } from "vitest";
import { terminalEvalDisplay } from "../../src/eval/grading-display.js";
import { formatSeconds, progressBar, terminalBlock } from "../../src/util/terminal-block.js";

/** A stand-in terminal stream that keeps what was written (a real object, not a mock of a module). */
function screen() {
  const written: string[] = [];
  const stream = { columns: 100, write: (text: string) => written.push(text) > 0 };
  return { stream: stream as unknown as NodeJS.WriteStream, written };
}

describe("terminal blocks", () => {
  it("replaces the block it drew last, and a printed line stays above the next block", () => {
    const { stream, written } = screen();
    const block = terminalBlock(stream);
    block.draw(["a", "b"]);
    block.draw(["c", "d", "e"]);
    block.print("message");
    block.draw(["f"]);
    expect(written).toEqual(["a\nb\n", "\x1b[2F\x1b[Jc\nd\ne\n", "\x1b[3F\x1b[Jmessage\n", "f\n"]);
  });

  it("formats times and bars", () => {
    expect([formatSeconds(5.4), formatSeconds(65), formatSeconds(3600)]).toEqual(["5s", "1m05s", "60m00s"]);
    const bar = [...progressBar(1, 4, 8)].filter((c) => c === "█" || c === "░").join("");
    expect(bar).toBe("██░░░░░░");
  });

  it("the grading display shows graded counts, workers and verdict counts", () => {
    const { stream, written } = screen();
    const display = terminalEvalDisplay(stream, 2);
    display.start(2, 0);
    display.begin(1, "a__b-1");
    display.phase(1, "tests");
    display.end(2, {
      instance_id: "a__b-2",
      status: "resolved",
      resolved: true,
      logDir: "/tmp/x",
      testSeconds: 1,
      totalSeconds: 2,
    });
    display.message("graded before: 0");
    display.stop();
    const text = written.join("");
    const last = text.slice(text.lastIndexOf("\x1b[J") + 3);
    expect(last).toMatch(/1\/2 graded {2}resolved 1/);
    expect(last).toMatch(/w1 a__b-1 {2}.*tests/);
    expect(last).toMatch(/w2 idle/);
    expect(last).toMatch(/resolved 1/);
    expect(text).toContain("graded before: 0\n");
  });
});
