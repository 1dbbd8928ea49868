import { registryAuth, registryOf } from "./pull.js";

/** The registry, repository and tag (or digest) of an image reference. */
interface Reference {
  registry: string;
  repository: string;
  reference: string;
}

function parseReference(image: string): Reference {
  const registry = registryOf(image);
  const hub = registry.startsWith("https://index.docker.io");
  let rest = hub ? image.replace(/^docker\.io\//, "") : image.slice(registry.length + 1);
  let reference = "latest";
  const at = rest.indexOf("@");
  if (at >= 0) {
    reference = rest.slice(at + 1);
    rest = rest.slice(0, at);
  } else {
    const colon = rest.lastIndexOf(":");
    if (colon > rest.lastIndexOf("/")) {
      reference = rest.slice(colon + 1);
      rest = rest.slice(0, colon);
    }
  }
  if (hub && !rest.includes("/")) rest = `library/${rest}`;
  return { registry: hub ? "docker.io" : registry, repository: rest, reference };
}

const MANIFEST_TYPES = [
  "application/vnd.docker.distribution.manifest.v2+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.oci.image.index.v1+json",
].join(", ");

interface Manifest {
  config?: { size?: number };
  layers?: Array<{ size?: number }>;
  manifests?: Array<{ digest: string; platform?: { os?: string; architecture?: string } }>;
}

/** Docker's name for this machine's architecture (the default platform of a pull). */
function dockerArchitecture(): string {
  return process.arch === "x64" ? "amd64" : process.arch === "ia32" ? "386" : process.arch;
}

async function getJson(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Response> {
  return fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
}

/** A bearer token for pulling `repository`, asked of the realm a 401 names (anonymously or with the login in config.json). */
async function bearerToken(challenge: string, ref: Reference, image: string, timeoutMs: number) {
  const params = Object.fromEntries(
    [...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1] ?? "", match[2] ?? ""]),
  );
  if (!params.realm) return undefined;
  const url = new URL(params.realm);
  if (params.service) url.searchParams.set("service", params.service);
  url.searchParams.set("scope", `repository:${ref.repository}:pull`);
  const auth = registryAuth(image);
  const headers: Record<string, string> = {};
  if (auth?.username)
    headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password ?? ""}`).toString("base64")}`;
  const response = await getJson(url.toString(), headers, timeoutMs);
  if (!response.ok) return undefined;
  const body = (await response.json()) as { token?: string; access_token?: string };
  return body.token ?? body.access_token;
}

/**
 * The bytes an image's layers take in its registry (compressed, as pulled), for the platform this
 * machine pulls; undefined when the registry cannot be asked or does not say. Docker Hub is asked through
 * its tags API (which does not count as a pull against its rate limit); other registries through the
 * distribution API (plain HTTP for 127.0.0.1 and localhost, which Docker treats as insecure registries).
 */
export async function registryImageSize(image: string, timeoutMs = 10_000): Promise<number | undefined> {
  const ref = parseReference(image);
  try {
    if (ref.registry === "docker.io" && !ref.reference.startsWith("sha256:")) {
      const [namespace, ...name] = ref.repository.split("/");
      const response = await getJson(
        `https://hub.docker.com/v2/namespaces/${namespace}/repositories/${name.join("/")}/tags/${ref.reference}`,
        {},
        timeoutMs,
      );
      if (!response.ok) return undefined;
      const tag = (await response.json()) as {
        full_size?: number;
        images?: Array<{ architecture?: string; os?: string; size?: number }>;
      };
      const own = tag.images?.find(
        (entry) => entry.architecture === dockerArchitecture() && entry.os === "linux",
      );
      return own?.size ?? tag.full_size;
    }
    const host = ref.registry === "docker.io" ? "registry-1.docker.io" : ref.registry;
    const local = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(host);
    const base = `${local ? "http" : "https"}://${host}/v2/${ref.repository}`;
    const headers: Record<string, string> = { Accept: MANIFEST_TYPES };
    const get = async (reference: string): Promise<Manifest | undefined> => {
      let response = await getJson(`${base}/manifests/${reference}`, headers, timeoutMs);
      const challenge = response.headers.get("www-authenticate") ?? "";
      if (response.status === 401 && /^bearer /i.test(challenge)) {
        const token = await bearerToken(challenge, ref, image, timeoutMs);
        if (!token) return undefined;
        headers.Authorization = `Bearer ${token}`;
        response = await getJson(`${base}/manifests/${reference}`, headers, timeoutMs);
      }
      return response.ok ? ((await response.json()) as Manifest) : undefined;
    };
    let manifest = await get(ref.reference);
    if (manifest?.manifests) {
      const own =
        manifest.manifests.find(
          (entry) => entry.platform?.architecture === dockerArchitecture() && entry.platform?.os === "linux",
        ) ?? manifest.manifests[0];
      manifest = own ? await get(own.digest) : undefined;
    }
    if (!manifest?.layers) return undefined;
    return manifest.layers.reduce((sum, layer) => sum + (layer.size ?? 0), manifest.config?.size ?? 0);
  } catch {
    return undefined;
  }
}
