import { describe, expect, it } from "vitest";
import { OutputCollector } from "../../src/environments/output.js";

describe("OutputCollector", () => {
  it("keeps everything under the cap", () => {
    const collector = new OutputCollector(100);
    collector.push(Buffer.from("hello "));
    collector.push(Buffer.from("world"));
    expect(collector.result()).toEqual({ output: "hello world" });
  });

  it("keeps the head and tail over many small chunks", () => {
    const collector = new OutputCollector(10);
    for (const char of "abcdefghijklmnopqrstuvwxyz") collector.push(Buffer.from(char));
    const { output, truncated } = collector.result();
    expect(output.startsWith("abcde\n<swerun: 16 bytes")).toBe(true);
    expect(output.endsWith(">\nvwxyz")).toBe(true);
    expect(truncated).toEqual({ total_bytes: 26, elided_bytes: 16 });
  });

  it("does not split a multi-byte character into garbage beyond replacement", () => {
    const collector = new OutputCollector(1000);
    const bytes = Buffer.from("é€😀");
    for (const byte of bytes) collector.push(Buffer.from([byte]));
    expect(collector.result().output).toBe("é€😀");
  });
});
