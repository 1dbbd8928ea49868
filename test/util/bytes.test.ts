import { describe, expect, it } from "vitest";
import { formatBytes, parseSize } from "../../src/util/bytes.js";

describe("parseSize / formatBytes", () => {
  it("reads sizes in powers of 1000 and of 1024, and refuses what is not a size", () => {
    expect(parseSize("120G")).toBe(120e9);
    expect(parseSize("1.5T")).toBe(1.5e12);
    expect(parseSize("500MB")).toBe(500e6);
    expect(parseSize("120GiB")).toBe(120 * 1024 ** 3);
    expect(parseSize("2gi")).toBe(2 * 1024 ** 3);
    expect(parseSize("4096")).toBe(4096);
    expect(parseSize(1e9)).toBe(1e9);
    for (const bad of ["lots", "", "-1G", "0", "12X", "1.2.3G"]) expect(parseSize(bad)).toBeUndefined();
    expect(parseSize(-5)).toBeUndefined();
  });

  it("shows sizes as Docker does", () => {
    expect(formatBytes(1.5e9)).toBe("1.50 GB");
    expect(formatBytes(29_971_285)).toBe("30.0 MB");
    expect(formatBytes(999)).toBe("999 B");
  });
});
