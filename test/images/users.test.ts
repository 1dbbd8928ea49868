import http from "node:http";
import type net from "node:net";
import Docker from "dockerode";
import { afterEach, expect, it } from "vitest";
import { watchContainerEnds } from "../../src/images/users.js";
import { waitFor } from "../helpers/cli.js";

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * A real HTTP server answering the Engine API's event stream as a daemon that restarts would: the first
 * connection gets one container event and then ends (the daemon went away); later ones get one event and stay open.
 */
async function restartingDaemon(): Promise<{ docker: Docker; requests: () => number }> {
  let requests = 0;
  const server = http.createServer((request, response) => {
    if (!request.url?.includes("/events")) return response.writeHead(404).end();
    requests++;
    response.writeHead(200, { "content-type": "application/json" });
    response.write(`${JSON.stringify({ Type: "container", Action: "destroy", id: `c${requests}` })}\n`);
    if (requests === 1) response.end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return { docker: new Docker({ protocol: "http", host: "127.0.0.1", port }), requests: () => requests };
}

it("the container-event stream is opened again after the daemon ends it, and the pool told then", async () => {
  const { docker, requests } = await restartingDaemon();
  let ends = 0;
  const stop = watchContainerEnds(docker, () => ends++, 50);
  try {
    // One event on the first stream, one as the stream is opened again, one on the second stream.
    await waitFor(() => requests() === 2 && ends >= 3, 10_000);
    expect(ends).toBe(3);
  } finally {
    stop();
  }
  const after = requests();
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(requests()).toBe(after);
});
