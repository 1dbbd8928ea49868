import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

/**
 * A minimal Docker registry (distribution API v2, read-only, one image) on 127.0.0.1, which the daemon
 * treats as an insecure registry and pulls from over plain HTTP. Lets tests pull without internet.
 */
export interface FakeRegistry {
  /** `127.0.0.1:<port>/<name>:<tag>` */
  image: string;
  /** Bytes of the (gzipped) layer. */
  layerBytes: number;
  close(): Promise<void>;
}

const sha256 = (data: Buffer | string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

/**
 * Serves `layerTar` as a one-layer image (give it unique content, so the layer is new to the daemon).
 * `blobDelayMs` spreads the layer over that long, so progress shows; `stall` never sends it.
 */
export async function startFakeRegistry(
  layerTar: Buffer,
  options: { blobDelayMs?: number; stall?: boolean } = {},
): Promise<FakeRegistry> {
  const layer = gzipSync(layerTar, { level: 1 });
  const imageConfig = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: { Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], Cmd: ["bash"] },
      rootfs: { type: "layers", diff_ids: [sha256(layerTar)] },
      history: [{ created_by: "swerun fake registry" }],
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.docker.distribution.manifest.v2+json",
      config: {
        mediaType: "application/vnd.docker.container.image.v1+json",
        size: imageConfig.length,
        digest: sha256(imageConfig),
      },
      layers: [
        {
          mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip",
          size: layer.length,
          digest: sha256(layer),
        },
      ],
    }),
  );
  const blobs = new Map([
    [sha256(imageConfig), imageConfig],
    [sha256(layer), layer],
  ]);
  const name = "swerun-pull-test";
  const tag = randomBytes(6).toString("hex");
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((request, response) => {
    const url = request.url ?? "";
    if (url === "/v2/" || url === "/v2") {
      response.writeHead(200, { "Content-Type": "application/json" }).end("{}");
      return;
    }
    const manifestMatch = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(url);
    if (
      manifestMatch &&
      manifestMatch[1] === name &&
      [tag, sha256(manifest)].includes(manifestMatch[2] ?? "")
    ) {
      response.writeHead(200, {
        "Content-Type": "application/vnd.docker.distribution.manifest.v2+json",
        "Content-Length": manifest.length,
        "Docker-Content-Digest": sha256(manifest),
      });
      response.end(request.method === "HEAD" ? undefined : manifest);
      return;
    }
    const blob = blobs.get(/^\/v2\/.+\/blobs\/(sha256:[0-9a-f]+)$/.exec(url)?.[1] ?? "");
    if (!blob) {
      response
        .writeHead(404, { "Content-Type": "application/json" })
        .end('{"errors":[{"code":"NOT_FOUND"}]}');
      return;
    }
    response.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": blob.length });
    if (request.method === "HEAD") {
      response.end();
      return;
    }
    if (blob === layer && options.stall) return;
    if (blob !== layer || !options.blobDelayMs) {
      response.end(blob);
      return;
    }
    const pieces = 20;
    const size = Math.ceil(blob.length / pieces);
    let sent = 0;
    const timer = setInterval(() => {
      response.write(blob.subarray(sent, sent + size));
      sent += size;
      if (sent >= blob.length) {
        clearInterval(timer);
        timers.delete(timer);
        response.end();
      }
    }, options.blobDelayMs / pieces);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    image: `127.0.0.1:${port}/${name}:${tag}`,
    layerBytes: layer.length,
    close: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearInterval(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
