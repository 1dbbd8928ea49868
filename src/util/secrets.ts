/**
 * The process-wide set of secret values (API keys, auth headers, forwarded environment values).
 * Everything swerun writes (trajectories, logs, events, error messages) passes through `redact`.
 */
const secrets = new Set<string>();
let pattern: RegExp | undefined;

/** Short values are not registered: redacting "1" or "yes" everywhere would garble output. */
const MIN_SECRET_LENGTH = 6;

export function registerSecret(value: string | undefined): void {
  if (!value || value.length < MIN_SECRET_LENGTH || secrets.has(value)) return;
  secrets.add(value);
  const escaped = [...secrets]
    .sort((a, b) => b.length - a.length)
    .map((secret) => secret.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  pattern = new RegExp(escaped.join("|"), "g");
}

export const REDACTED = "[REDACTED]";

/** `text` with every registered secret replaced by [REDACTED]. */
export function redact(text: string): string {
  if (!pattern) return text;
  pattern.lastIndex = 0;
  return pattern.test(text) ? text.replace(pattern, REDACTED) : text;
}

/** Forgets all secrets (tests only). */
export function clearSecretsForTests(): void {
  secrets.clear();
  pattern = undefined;
}
