import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import { delimiter, join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { UserError } from "../../errors.js";

/** Where a pod finds its own service account (in-cluster credentials). */
const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** What a kubernetes environment says about its cluster: the file, context and namespace to use. */
export interface ClusterSettings {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  namespace?: string | undefined;
}

/** A cluster swerun talks to: its kubeconfig, the CoreV1 API, the namespace of swerun's objects. */
export interface KubeClient {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly namespace: string;
  /** How the cluster was found, for messages: "in-cluster", the kubeconfig path, with its context. */
  readonly source: string;
  /** The API server's URL. */
  readonly server: string;
}

/** The cluster cannot be reached or refused swerun's request: an infrastructure error of the run. */
export class KubernetesUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KubernetesUnavailableError";
  }
}

/** The kubeconfig files to read when none is given: $KUBECONFIG's, else ~/.kube/config. */
function defaultKubeconfigFiles(env: NodeJS.ProcessEnv): string[] {
  const listed = (env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
  if (listed.length > 0) return listed;
  const home = join(os.homedir(), ".kube", "config");
  return existsSync(home) ? [home] : [];
}

/** Whether this process runs in a pod with a service account (KUBERNETES_SERVICE_HOST and its token). */
function inCluster(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST) && existsSync(join(SERVICE_ACCOUNT_DIR, "token"));
}

function loadKubeConfig(
  settings: ClusterSettings,
  env: NodeJS.ProcessEnv,
): { config: KubeConfig; source: string } {
  const config = new KubeConfig();
  if (!settings.kubeconfig && inCluster(env)) {
    config.loadFromCluster();
    return { config, source: "in-cluster" };
  }
  const files = settings.kubeconfig ? [settings.kubeconfig] : defaultKubeconfigFiles(env);
  const [first, ...rest] = files;
  if (!first)
    throw new UserError(
      "environment.kubeconfig: no cluster to use: not in a pod, $KUBECONFIG unset and no ~/.kube/config (set environment.kubeconfig or KUBECONFIG)",
    );
  const origin = settings.kubeconfig ? "environment.kubeconfig" : "KUBECONFIG";
  for (const file of files) {
    if (!existsSync(file)) throw new UserError(`${origin}: ${file}: no such file`);
  }
  try {
    config.loadFromFile(first);
    for (const file of rest) {
      const more = new KubeConfig();
      more.loadFromFile(file);
      config.mergeConfig(more);
    }
  } catch (error) {
    throw new UserError(`${origin}: ${first}: not a readable kubeconfig: ${(error as Error).message}`);
  }
  if (settings.context) {
    if (!config.getContextObject(settings.context))
      throw new UserError(
        `environment.context: "${settings.context}" is not a context of ${files.join(", ")} (contexts: ${config.contexts.map((context) => context.name).join(", ") || "none"})`,
      );
    config.setCurrentContext(settings.context);
  }
  if (!config.getCurrentCluster())
    throw new UserError(`${origin}: ${first}: its current context names no cluster`);
  return { config, source: `${files.join(delimiter)} (context ${config.getCurrentContext()})` };
}

/** The namespace to use: the setting, else the context's, else the pod's own (in-cluster), else "default". */
function namespaceOf(config: KubeConfig, settings: ClusterSettings): string {
  if (settings.namespace) return settings.namespace;
  const context = config.getContextObject(config.getCurrentContext());
  if (context?.namespace) return context.namespace;
  try {
    return readFileSync(join(SERVICE_ACCOUNT_DIR, "namespace"), "utf8").trim() || "default";
  } catch {
    return "default";
  }
}

const clients = new Map<string, KubeClient>();

/**
 * The client of the cluster `settings` name: `kubeconfig` (else in-cluster credentials, then $KUBECONFIG,
 * then ~/.kube/config), its `context`, the `namespace`. One per settings in a process (its connections are
 * shared by every pod of a batch). A missing or unreadable file or an unknown context is a UserError.
 */
export function kubeClient(settings: ClusterSettings, env: NodeJS.ProcessEnv = process.env): KubeClient {
  const key = JSON.stringify([settings.kubeconfig, settings.context, settings.namespace, env.KUBECONFIG]);
  const known = clients.get(key);
  if (known) return known;
  const { config, source } = loadKubeConfig(settings, env);
  const client: KubeClient = {
    config,
    core: config.makeApiClient(CoreV1Api),
    namespace: namespaceOf(config, settings),
    source,
    server: config.getCurrentCluster()?.server ?? "",
  };
  clients.set(key, client);
  return client;
}

/** The HTTP status of an API error, if it has one. */
export function apiStatus(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" && code >= 100 && code < 600 ? code : undefined;
}

/** An API error in one line: the server's Status message when it sent one, else the error's own. */
export function apiMessage(error: unknown): string {
  const body = (error as { body?: unknown } | null)?.body;
  let parsed: unknown = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
  }
  const message = (parsed as { message?: unknown } | undefined)?.message;
  if (typeof message === "string" && message) return message;
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0] ?? text;
}

/** Whether an error means the API server could not be reached (no HTTP answer at all). */
export function isUnreachable(error: unknown): boolean {
  if (apiStatus(error) !== undefined) return false;
  const causes: unknown[] = [error, (error as { cause?: unknown } | null)?.cause];
  return (
    causes.some((cause) => {
      const code = (cause as NodeJS.ErrnoException | null)?.code ?? "";
      return /^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|UND_ERR_)/.test(
        code,
      );
    }) || /fetch failed|socket hang up/i.test(error instanceof Error ? error.message : "")
  );
}

/** The error a failed API call becomes: the cluster unreachable, forbidden (with the RBAC hint), or the server's reason. */
export function clusterError(client: KubeClient, what: string, error: unknown): Error {
  const status = apiStatus(error);
  if (isUnreachable(error))
    return new KubernetesUnavailableError(
      `Kubernetes API server ${client.server} (${client.source}) does not answer while ${what}: ${apiMessage(error)}`,
    );
  if (status === 401 || (status === 403 && /\bcannot \w+ resource\b/.test(apiMessage(error))))
    return new UserError(
      `Kubernetes refused ${what} in namespace ${client.namespace} (HTTP ${status}): ${apiMessage(error)}. swerun's Role needs pods (create, get, list, watch, delete, deletecollection), pods/exec (get, create), configmaps (create, get, list, delete), events (list, watch): see the README`,
    );
  // A quota exceeded, an admission webhook's refusal, a conflict: the server's own words.
  return new KubernetesUnavailableError(
    `Kubernetes: ${what} failed${status ? ` (HTTP ${status})` : ""}: ${apiMessage(error)}`,
  );
}
