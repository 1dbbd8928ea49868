import { afterEach, describe, expect, it } from "vitest";
import { withoutSecrets } from "../../src/util/sanitize.js";
import {
  clearSecretsForTests,
  isCredentialName,
  REDACTED,
  redact,
  redactedJson,
  registerCredential,
  registerCredentialEntries,
  registerSecret,
} from "../../src/util/secrets.js";

afterEach(() => clearSecretsForTests());

describe("credential names: one rule for headers and variables", () => {
  it.each([
    "Authorization",
    "Proxy-Authorization",
    "Api-Token",
    "X-Api-Token",
    "X-Auth-Token",
    "Cookie",
    "X-Api-Key",
    "OPENAI_API_KEY",
    "HF_TOKEN",
    "DB_PASSWORD",
    "CLIENT_SECRET",
  ])("%s holds a credential", (name) => expect(isCredentialName(name)).toBe(true));

  it.each(["Content-Type", "User-Agent", "GIT_AUTHOR_NAME", "XAUTHORITY", "PAGER", "X-Request-Id"])(
    "%s does not",
    (name) => expect(isCredentialName(name)).toBe(false),
  );
});

describe("registered credentials", () => {
  it("a Bearer header: the bare token too", () => {
    registerCredential("Bearer tok-1234567890");
    expect(redact("echo tok-1234567890")).toBe(`echo ${REDACTED}`);
    expect(redact("Authorization: Bearer tok-1234567890")).toBe(`Authorization: ${REDACTED}`);
  });

  it("a Basic header: the base64, the decoded user:password, and the password", () => {
    const encoded = Buffer.from("alice:s3cret-pass").toString("base64");
    registerCredential(`Basic ${encoded}`);
    expect(redact(`x ${encoded} y`)).toBe(`x ${REDACTED} y`);
    expect(redact("login alice:s3cret-pass")).toBe(`login ${REDACTED}`);
    expect(redact("pw=s3cret-pass")).toBe(`pw=${REDACTED}`);
    expect(redact("user alice")).toBe("user alice");
  });

  it("a cookie: each value", () => {
    registerCredential("session=abcdef123456; csrf=zyxwvu987654");
    expect(redact("abcdef123456 and zyxwvu987654")).toBe(`${REDACTED} and ${REDACTED}`);
  });

  it("only the credential-looking entries of a header map", () => {
    registerCredentialEntries({ "X-Api-Token": "token-value-1", "X-Request-Id": "request-value-1" });
    expect(redact("token-value-1 request-value-1")).toBe(`${REDACTED} request-value-1`);
  });

  it("a value with quotes is redacted in JSON text too", () => {
    registerSecret('pa"ss\\word');
    expect(redactedJson({ key: 'pa"ss\\word' })).toBe(`{\n  "key": "${REDACTED}"\n}\n`);
  });
});

describe("withoutSecrets (records on disk)", () => {
  it("drops every credential-looking header, keeps the others and other keys", () => {
    const config = {
      model: {
        model_kwargs: {
          api_key: "k",
          max_tokens: 100,
          extra_headers: { "Api-Token": "a", "X-Api-Token": "b", Cookie: "c", "X-Title": "swerun" },
        },
      },
    };
    expect(withoutSecrets(config)).toEqual({
      model: { model_kwargs: { max_tokens: 100, extra_headers: { "X-Title": "swerun" } } },
    });
  });
});
