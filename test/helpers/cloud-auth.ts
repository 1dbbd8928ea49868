/**
 * How the clouds authenticate a request, checked as they check it: AWS Signature Version 4 (Bedrock) and
 * Google's OAuth 2.0 JWT-bearer grant for service accounts (Vertex AI's application-default credentials).
 */
import { createHash, createHmac, createVerify, generateKeyPairSync } from "node:crypto";
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
  const canonicalUri = path
    .split("/")
    .map((segment) => encode(decodeURIComponent(segment)))
    .map(encode)
    .join("/");
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

/** A service-account key file (as `gcloud iam service-accounts keys create` writes it) whose token endpoint is `tokenUri`. */
export function serviceAccount(tokenUri: string, projectId = "swerun-test-project") {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const file = {
    type: "service_account",
    project_id: projectId,
    private_key_id: "test-key",
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    client_email: `swerun-test@${projectId}.iam.gserviceaccount.com`,
    client_id: "1",
    token_uri: tokenUri,
  };
  return { file, publicKey: publicKey.export({ type: "spki", format: "pem" }).toString() };
}

/**
 * Why Google's token endpoint would refuse this JWT-bearer grant (form body), or undefined: the assertion
 * must be an RS256 JWT signed by the service account's key, issued by its email, for this endpoint.
 */
export function jwtGrantProblem(
  form: string,
  account: { email: string; publicKey: string; tokenUri: string },
): string | undefined {
  const params = new URLSearchParams(form);
  if (params.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer")
    return "unsupported_grant_type";
  const [header, claims, signature] = (params.get("assertion") ?? "").split(".");
  if (!header || !claims || !signature) return "invalid_grant: malformed assertion";
  const verify = createVerify("RSA-SHA256").update(`${header}.${claims}`);
  if (!verify.verify(account.publicKey, Buffer.from(signature, "base64url")))
    return "invalid_grant: Invalid JWT Signature.";
  const payload = JSON.parse(Buffer.from(claims, "base64url").toString("utf8"));
  if (payload.iss !== account.email) return "invalid_grant: wrong issuer";
  if (payload.aud !== account.tokenUri) return "invalid_grant: wrong audience";
  if (!String(payload.scope ?? "").includes("https://www.googleapis.com/auth/cloud-platform"))
    return "invalid_scope";
  return undefined;
}
