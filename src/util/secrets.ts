/**
 * The process-wide set of secret values (API keys, credential headers, forwarded environment values) and
 * the one place where they are taken out of text. Everything swerun writes (trajectories, preds.json,
 * run.json, swerun.log, reports) passes through `redact`; the CLI also routes stdout and stderr through it
 * (`guardOutputStreams`).
 */
const secrets = new Set<string>();
let pattern: RegExp | undefined;
let longestSecret = 0;
/** The secrets as UTF-8 bytes, for cuts made in raw output (`secretAcross`). */
let secretBuffers: Buffer[] = [];
/** How many times the set has grown: text redacted at one version is redacted as now while it stays. */
let version = 0;

/** Short values are not registered: redacting "1" or "yes" everywhere would garble output. */
const MIN_SECRET_LENGTH = 6;

/**
 * The one rule for "this name holds a credential", for HTTP headers and environment variables alike
 * (`Authorization`, `X-Api-Token`, `Cookie`, `OPENAI_API_KEY`, `DB_PASSWORD`, ...; not `GIT_AUTHOR_NAME`).
 */
const CREDENTIAL_NAME = /key|token|secret|auth(?!or(?!iz))|passw|cookie|credential/i;

export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

function add(value: string): boolean {
  if (value.length < MIN_SECRET_LENGTH || secrets.has(value)) return false;
  secrets.add(value);
  return true;
}

export function registerSecret(value: string | undefined): void {
  if (!value) return;
  let changed = add(value);
  // In JSON text a value with quotes, backslashes or control characters appears escaped.
  const escaped = JSON.stringify(value).slice(1, -1);
  if (escaped !== value) changed = add(escaped) || changed;
  if (!changed) return;
  version += 1;
  const alternatives = [...secrets]
    .sort((a, b) => b.length - a.length)
    .map((secret) => secret.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  pattern = new RegExp(alternatives.join("|"), "g");
  longestSecret = Math.max(...[...secrets].map((secret) => secret.length));
  secretBuffers = [...secrets].map((secret) => Buffer.from(secret, "utf8"));
}

/** Grows whenever a secret is registered: what `redact` did at an equal version it does now. */
export function secretsVersion(): number {
  return version;
}

/** The longest registered secret in UTF-8 bytes (0 with none): how far around a cut of raw bytes to look. */
export function longestSecretBytes(): number {
  return secretBuffers.reduce((longest, secret) => Math.max(longest, secret.length), 0);
}

/**
 * The registered secrets that a cut of `bytes` at `at` would split (one starts before `at` and ends after it),
 * as the span from the first one's start to the last one's end; undefined when the cut splits none. A cut
 * moved out of that span leaves each secret whole on one side, where `redact` finds it.
 */
export function secretAcross(bytes: Buffer, at: number): { start: number; end: number } | undefined {
  let span: { start: number; end: number } | undefined;
  for (const secret of secretBuffers) {
    let index = bytes.indexOf(secret, Math.max(0, at - secret.length + 1));
    while (index !== -1 && index < at) {
      const end = index + secret.length;
      if (end > at)
        span = { start: Math.min(span?.start ?? index, index), end: Math.max(span?.end ?? end, end) };
      index = bytes.indexOf(secret, index + 1);
    }
  }
  return span;
}

/**
 * Registers a credential and the parts of it that work on their own: the token after an auth scheme
 * (`Bearer <token>`, `Basic <base64>` and its decoded `user:password` and password), and each cookie value.
 */
export function registerCredential(value: string | undefined): void {
  if (!value) return;
  registerSecret(value);
  const trimmed = value.trim();
  registerSecret(trimmed);
  const scheme = /^([A-Za-z][\w-]*)\s+(\S+)$/.exec(trimmed);
  if (scheme?.[1] && scheme[2]) {
    registerSecret(scheme[2]);
    if (scheme[1].toLowerCase() === "basic") {
      const decoded = Buffer.from(scheme[2], "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon > 0 && isBase64Of(scheme[2], decoded)) {
        registerSecret(decoded);
        registerSecret(decoded.slice(colon + 1));
      }
    }
  }
  if (trimmed.includes("=")) {
    for (const part of trimmed.split(";")) {
      const equals = part.indexOf("=");
      if (equals > 0) registerSecret(part.slice(equals + 1).trim());
    }
  }
}

function isBase64Of(encoded: string, decoded: string): boolean {
  return Buffer.from(decoded, "utf8").toString("base64").replace(/=+$/, "") === encoded.replace(/=+$/, "");
}

/** Registers the values of every credential-looking entry of a header map or variable map. */
export function registerCredentialEntries(entries: Record<string, unknown> | undefined): void {
  for (const [name, value] of Object.entries(entries ?? {}))
    if (typeof value === "string" && isCredentialName(name)) registerCredential(value);
}

export const REDACTED = "[REDACTED]";

/** `text` with every registered secret replaced by [REDACTED]. */
export function redact(text: string): string {
  if (!pattern) return text;
  pattern.lastIndex = 0;
  return pattern.test(text) ? text.replace(pattern, REDACTED) : text;
}

/** Whether any secret is registered (text with none needs no redaction). */
export function hasSecrets(): boolean {
  return pattern !== undefined;
}

/**
 * `redact` for text that comes in pieces: what `push` and `end` return, joined, is `redact` of the pieces
 * joined. Only the last characters that could start a secret wait (fewer than the longest secret).
 */
export class StreamRedactor {
  #pending = "";

  push(text: string): string {
    if (!pattern) {
      const all = this.#pending + text;
      this.#pending = "";
      return all;
    }
    const all = this.#pending + text;
    // A match that starts before `safe` is whole (the longest secret fits); one that starts later waits.
    let safe = Math.max(0, all.length - (longestSecret - 1));
    pattern.lastIndex = 0;
    let match = pattern.exec(all);
    let out = "";
    let from = 0;
    while (match && match.index < safe) {
      out += all.slice(from, match.index) + REDACTED;
      from = match.index + match[0].length;
      if (from > safe) safe = from;
      pattern.lastIndex = from;
      match = pattern.exec(all);
    }
    // A character of two UTF-16 units is never cut: each piece is encoded on its own.
    const unit = all.charCodeAt(safe - 1);
    if (safe > from && safe < all.length && unit >= 0xd800 && unit <= 0xdbff) safe -= 1;
    out += all.slice(from, safe);
    this.#pending = all.slice(safe);
    return out;
  }

  end(): string {
    const rest = redact(this.#pending);
    this.#pending = "";
    return rest;
  }
}

/** `value` serialized as JSON (2-space indent, trailing newline), with every secret redacted. */
export function redactedJson(value: unknown): string {
  return redact(`${JSON.stringify(value, null, 2)}\n`);
}

function containsSecret(buffer: Uint8Array): boolean {
  const view = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  for (const secret of secrets) if (view.includes(secret)) return true;
  return false;
}

const guarded = new WeakSet<NodeJS.WriteStream>();

/**
 * Routes everything written to `streams` (default stdout and stderr) through `redact`, whoever writes it:
 * console printers, progress displays, warnings, error messages. Installed once by the CLI.
 */
export function guardOutputStreams(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    if (guarded.has(stream)) continue;
    guarded.add(stream);
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (pattern && typeof chunk === "string") return write(redact(chunk), ...rest);
      if (pattern && chunk instanceof Uint8Array && containsSecret(chunk))
        return write(redact(Buffer.from(chunk).toString("utf8")), ...rest);
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}

/** Forgets all secrets (tests only). */
export function clearSecretsForTests(): void {
  secrets.clear();
  pattern = undefined;
  longestSecret = 0;
  secretBuffers = [];
}
