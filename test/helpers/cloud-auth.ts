/**
 * How the clouds authenticate a request, checked as they check it: AWS Signature Version 4 (Bedrock) and
 * Google's token exchange for application-default credentials (Vertex AI).
 */
import { createHash, createHmac } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/** RFC 3986 encoding of one path segment or query item, as SigV4 canonicalises them. */
function encode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * Why AWS would refuse this request's SigV4 signature (for `secretKey`, service `service`), or undefined when
 * it is valid. `rawUrl` is the path and query as sent; the path's segments are encoded once more, as AWS
 * does for every service but S3.
 */
export function sigV4Problem(
  method: string,
  rawUrl: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
  credentials: { accessKey: string; secretKey: string; service: string },
): string | undefined {
  const auth = String(headers.authorization ?? "");
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!match) return "MissingAuthenticationToken: the request has no valid SigV4 Authorization header";
  const [, accessKey, day, region, service, signedHeaders, signature] = match as unknown as string[];
  if (accessKey !== credentials.accessKey)
    return "UnrecognizedClientException: The security token included in the request is invalid.";
  if (service !== credentials.service) return `the credential scope names service ${service}`;
  const amzDate = String(headers["x-amz-date"] ?? "");
  if (!amzDate.startsWith(day as string)) return "the x-amz-date header does not match the credential scope";
  const [path = "", query = ""] = rawUrl.split("?");
  // The path as sent, each segment encoded once more (so a `%3A` sent becomes `%253A`).
  const canonicalUri = path.split("/").map(encode).join("/");
  const canonicalQuery = query
    .split("&")
    .filter(Boolean)
    .map((item) =>
      item
        .split("=")
        .map((part) => encode(decodeURIComponent(part ?? "")))
        .join("="),
    )
    .sort()
    .join("&");
  const names = (signedHeaders as string).split(";");
  const canonicalHeaders = names
    .map(
      (name) =>
        `${name}:${String(headers[name] ?? "")
          .trim()
          .replace(/\s+/g, " ")}\n`,
    )
    .join("");
  const payload =
    typeof headers["x-amz-content-sha256"] === "string" ? headers["x-amz-content-sha256"] : sha256(body);
  const canonical = [method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaders, payload].join(
    "\n",
  );
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonical)].join("\n");
  const key = ["aws4_request"].reduce(
    (k, part) => hmac(k, part),
    hmac(hmac(hmac(`AWS4${credentials.secretKey}`, day as string), region as string), service as string),
  );
  const expected = createHmac("sha256", key).update(toSign).digest("hex");
  return expected === signature
    ? undefined
    : "SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided.";
}

/** The audience of the test's workload identity pool provider. */
export const TEST_AUDIENCE =
  "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/swerun/providers/test";

/**
 * An application-default credentials file of type `external_account` (workload identity federation, as
 * `gcloud iam workload-identity-pools create-cred-config` writes it): the token in `subjectTokenFile` is
 * exchanged for an access token at `tokenUrl` (Google's STS endpoint, here a local server). Google's client
 * libraries take this endpoint from the file; they do not for service-account keys, whose endpoint is fixed.
 */
export function externalAccount(tokenUrl: string, subjectTokenFile: string) {
  return {
    type: "external_account",
    audience: TEST_AUDIENCE,
    subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
    token_url: tokenUrl,
    credential_source: { file: subjectTokenFile },
  };
}

/**
 * Why Google's STS endpoint would refuse this token exchange (form body), or undefined: an RFC 8693 exchange
 * of the expected subject token for the pool's audience, asking for the cloud-platform scope.
 */
export function stsGrantProblem(form: string, expected: { subjectToken: string }): string | undefined {
  const params = new URLSearchParams(form);
  if (params.get("grant_type") !== "urn:ietf:params:oauth:grant-type:token-exchange")
    return "unsupported_grant_type";
  if (params.get("audience") !== TEST_AUDIENCE) return "invalid_target: wrong audience";
  if (params.get("subject_token") !== expected.subjectToken)
    return "invalid_grant: the subject token is not valid";
  if (!String(params.get("scope") ?? "").includes("https://www.googleapis.com/auth/cloud-platform"))
    return "invalid_scope";
  return undefined;
}

/** The access token the local STS endpoints (`/token`) issue. */
export const GOOGLE_TOKEN = "ya29.swerun-test-access-token";

/**
 * Google's STS endpoint's answer to a token exchange (form body): an access token (GOOGLE_TOKEN) for the
 * expected subject token, its error otherwise (and always when no workload identity pool is set up).
 */
export function stsTokenReply(form: string, expected: { subjectToken: string } | undefined) {
  const problem = expected ? stsGrantProblem(form, expected) : "no workload identity pool";
  return problem
    ? { status: 400, headers: {}, body: { error: problem } }
    : {
        status: 200,
        headers: {},
        body: { access_token: GOOGLE_TOKEN, expires_in: 3600, token_type: "Bearer" },
      };
}
