import * as z from "zod/mini";

/**
 * One Docker daemon of a batch's host pool (`--docker-host URL[:workers]`, `environment.docker_hosts`).
 * Holds addresses and paths only: credentials stay in ssh's own config and in the certificate files.
 */
export interface DockerHostConfig {
  /** The daemon's address as DOCKER_HOST writes it: unix:///path, tcp://host:port or ssh://[user@]host[:port]. */
  host: string;
  /** How many instances run on this daemon at once. */
  workers: number;
  /** tcp: use TLS (as DOCKER_TLS=1; also implied by port 2376 or tls_verify). Default: from the environment. */
  tls?: boolean;
  /** tcp: use TLS and check the daemon's certificate against ca.pem (as DOCKER_TLS_VERIFY=1). */
  tls_verify?: boolean;
  /** tcp with TLS: the folder holding ca.pem, cert.pem and key.pem (as DOCKER_CERT_PATH). */
  cert_path?: string;
}

/** More workers than this on one host is refused: `ssh://box:2222` meant a port, not 2222 workers. */
export const MAX_HOST_WORKERS = 256;

const SCHEMES = "unix:///path, tcp://host:port or ssh://[user@]host";

/** An address cut into its scheme, `scheme://[user@]host` and the `:N` numbers after the host. */
function cut(text: string): { scheme: string; base: string; numbers: string[] } {
  const scheme = /^([a-z]+):\/\//.exec(text)?.[1];
  if (!scheme) throw new Error(`expected ${SCHEMES}`);
  if (scheme === "unix") {
    const match = /^(unix:\/\/.*?)((?::\d+)*)$/.exec(text);
    return { scheme, base: match?.[1] ?? text, numbers: (match?.[2] ?? "").split(":").slice(1) };
  }
  if (scheme !== "ssh" && scheme !== "tcp")
    throw new Error(`${scheme}:// is not a Docker address swerun can use (${SCHEMES})`);
  const rest = text.slice(scheme.length + 3);
  const at = rest.lastIndexOf("@");
  const user = at >= 0 ? rest.slice(0, at + 1) : "";
  if (user.includes(":")) throw new Error("a password in the address is not supported: use ssh keys");
  const hostPart = rest.slice(at + 1);
  // An IPv6 address is bracketed: [::1]:2375.
  const name = hostPart.startsWith("[")
    ? hostPart.slice(0, hostPart.indexOf("]") + 1)
    : (hostPart.split(":")[0] ?? "");
  if (!name || name === "[]" || name.includes("/")) throw new Error(`"${hostPart}" names no host`);
  const tail = hostPart.slice(name.length);
  if (tail && !tail.startsWith(":")) throw new Error(`unexpected "${tail}" after the host name`);
  const numbers = tail ? tail.split(":").slice(1) : [];
  const bad = numbers.find((part) => !/^\d+$/.test(part));
  if (bad !== undefined) throw new Error(`"${bad}" is not a port or a worker count (a whole number)`);
  return { scheme, base: `${scheme}://${user}${name}`, numbers };
}

function workerCount(value: string, portHint: string): number {
  const workers = Number(value);
  if (workers < 1) throw new Error("the worker count must be at least 1");
  if (workers > MAX_HOST_WORKERS)
    throw new Error(`${workers} workers is more than ${MAX_HOST_WORKERS} on one host${portHint}`);
  return workers;
}

/**
 * Splits `URL[:workers]` into the daemon address and its worker count (undefined when not given). The rule:
 * - `unix:///path[:N]`: a trailing `:N` is the worker count.
 * - `ssh://[user@]host[:port][:N]`: one trailing `:N` is the worker count; with two, the first is the ssh
 *   port (`ssh://me@box:2222:8`). A port alone goes in ~/.ssh/config (or a docker_hosts entry's `host`).
 * - `tcp://host[:port[:N]]`: the first `:N` is always the port, so a worker count needs the port before it
 *   (`tcp://box:2376:4`).
 * Throws an Error saying what is wrong (without the flag or field name).
 */
export function splitHostSpec(spec: string): { host: string; workers: number | undefined } {
  const text = spec.trim();
  const { scheme, base, numbers } = cut(text);
  const max = scheme === "unix" ? 1 : 2;
  if (numbers.length > max)
    throw new Error(
      scheme === "unix"
        ? "expected at most a worker count after the path"
        : "expected at most a port and a worker count after the host",
    );
  const [first, second] = numbers;
  if (scheme === "tcp")
    return {
      host: first === undefined ? base : `${base}:${first}`,
      workers: second === undefined ? undefined : workerCount(second, ""),
    };
  if (second !== undefined) return { host: `${base}:${first}`, workers: workerCount(second, "") };
  const hint =
    scheme === "ssh" ? `; an ssh port goes before the worker count (${text}:N) or in ~/.ssh/config` : "";
  return { host: base, workers: first === undefined ? undefined : workerCount(first, hint) };
}

/** Parses `--docker-host URL[:workers]`; the worker count defaults to 1. */
export function parseDockerHostFlag(spec: string): DockerHostConfig {
  const { host, workers } = splitHostSpec(spec);
  return { host, workers: workers ?? 1 };
}

/** Why a docker_hosts entry's `host` (an address as DOCKER_HOST writes it, no worker count) is wrong, if it is. */
function addressProblem(host: string): string | undefined {
  try {
    const { scheme, numbers } = cut(host.trim());
    if (scheme !== "unix" && numbers.length > 1)
      return "expected at most a port after the host (the worker count is the `workers` key)";
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const hostEntry = z
  .strictObject({
    host: z.string().check(z.minLength(1)),
    workers: z._default(z.int().check(z.minimum(1), z.maximum(MAX_HOST_WORKERS)), 1),
    tls: z.optional(z.boolean()),
    tls_verify: z.optional(z.boolean()),
    cert_path: z.optional(z.string().check(z.minLength(1))),
  })
  .check(
    z.superRefine((entry, context) => {
      const problem = addressProblem(entry.host);
      if (problem)
        context.addIssue({ code: "custom", path: ["host"], message: `"${entry.host}": ${problem}` });
    }),
  );

/** An entry of `environment.docker_hosts`: "URL[:workers]" as on the command line, or `{host, workers, ...}`. */
export const dockerHostSchema = z.pipe(
  z.transform((value: unknown, context) => {
    if (typeof value === "string") {
      try {
        return parseDockerHostFlag(value);
      } catch (error) {
        context.issues.push({
          code: "custom",
          message: `"${value}": ${(error as Error).message}`,
          input: value,
        });
        return z.NEVER;
      }
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      context.issues.push({
        code: "custom",
        message: 'expected "URL[:workers]" or {host, workers}',
        input: value,
      });
      return z.NEVER;
    }
    return value;
  }),
  hostEntry,
);
