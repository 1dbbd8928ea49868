import { afterEach, describe, expect, it } from "vitest";
import { OutputCollector } from "../../src/environments/output.js";
import { clearSecretsForTests, REDACTED, registerSecret } from "../../src/util/secrets.js";

/** Every piece of `secret` of `length` characters (the test: none of 8 or more may be left anywhere). */
function piecesOf(secret: string, length = 8): string[] {
  return Array.from({ length: secret.length - length + 1 }, (_, i) => secret.slice(i, i + length));
}

afterEach(() => clearSecretsForTests());

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

  it("never cuts a secret in two: for every position of the cut in it, both sides keep no piece of it", () => {
    const key = "sk-proj-Abc123Def456Ghi789Jkl0";
    registerSecret(key);
    const line = `${key}\n`;
    for (const cap of [64, 100, 1000]) {
      for (let shift = 0; shift < line.length; shift++) {
        for (const chunk of [1, 7, 4096]) {
          const collector = new OutputCollector(cap);
          const text = "x".repeat(shift) + line.repeat(Math.ceil((3 * cap) / line.length) + 2);
          const bytes = Buffer.from(text);
          for (let at = 0; at < bytes.length; at += chunk) collector.push(bytes.subarray(at, at + chunk));
          const { output, truncated } = collector.result();
          const where = `cap ${cap}, shift ${shift}, chunks of ${chunk}`;
          expect(truncated?.total_bytes, where).toBe(bytes.length);
          expect(
            piecesOf(key).filter((piece) => output.includes(piece)),
            where,
          ).toEqual([]);
          expect(output, where).toContain(REDACTED);
          // The cut moves at most one secret's length out of the cap.
          const [head = "", tail = ""] = output.split(/\n<swerun: \d+ bytes of output elided[^>]*>\n/);
          expect(head.replaceAll(REDACTED, key).length, where).toBeGreaterThan(cap / 2 - key.length - 1);
          expect(head.replaceAll(REDACTED, key).length, where).toBeLessThanOrEqual(Math.ceil(cap / 2));
          expect(tail.replaceAll(REDACTED, key).length, where).toBeLessThanOrEqual(Math.floor(cap / 2));
          expect(truncated?.elided_bytes).toBe(
            bytes.length -
              Buffer.byteLength(head.replaceAll(REDACTED, key)) -
              Buffer.byteLength(tail.replaceAll(REDACTED, key)),
          );
        }
      }
    }
  });

  it("redacts the output it returns, cut or not", () => {
    registerSecret("secret-value-123456");
    const collector = new OutputCollector(1000);
    collector.push(Buffer.from("token=secret-value-123456\n"));
    expect(collector.result()).toEqual({ output: `token=${REDACTED}\n` });
  });
});
