import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { clearSecretsForTests, registerSecret } from "../../src/util/secrets.js";
import { packDetail, scriptJson } from "../../src/view/embed.js";

describe("embedded page data", () => {
  afterEach(() => clearSecretsForTests());

  it("cannot end its <script> element or start markup, and parses back to the same value", () => {
    const value = { output: "</script><script>alert(1)</script><!-- & -->", ok: "a > b" };
    const text = scriptJson(value);
    expect(text).not.toMatch(/[<>&]/);
    expect(JSON.parse(text)).toEqual(value);
  });

  it("packs details as base64 gzip JSON with secrets redacted", () => {
    registerSecret("sk-embed-secret-123456");
    const packed = packDetail({ output: "key=sk-embed-secret-123456" });
    expect(packed).toMatch(/^[A-Za-z0-9+/=]+$/);
    expect(JSON.parse(gunzipSync(Buffer.from(packed, "base64")).toString("utf8"))).toEqual({
      output: "key=[REDACTED]",
    });
    expect(JSON.parse(scriptJson({ title: "sk-embed-secret-123456" }))).toEqual({ title: "[REDACTED]" });
  });
});
