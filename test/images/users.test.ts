import http from "node:http";
import type net from "node:net";
import Docker from "dockerode";
import { afterEach, expect, it, vi } from "vitest";
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
async function restartingDaemon(): Promise<{
  docker: Docker;
  requests: () => number;
  closed: Promise<void>;
}> {
  let requests = 0;
  let secondClosed = () => {};
  const closed = new Promise<void>((resolve) => (secondClosed = resolve));
  const server = http.createServer((request, response) => {
    if (!request.url?.includes("/events")) return response.writeHead(404).end();
    requests++;
    if (requests === 2) response.on("close", secondClosed);
    response.writeHead(200, { "content-type": "application/json" });
    response.write(`${JSON.stringify({ Type: "container", Action: "destroy", id: `c${requests}` })}\n`);
    if (requests === 1) response.end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    docker: new Docker({ protocol: "http", host: "127.0.0.1", port }),
    requests: () => requests,
    closed,
  };
}

it("the container-event stream is opened again after the daemon ends it, and the pool told then", async () => {
  const { docker, requests, closed } = await restartingDaemon();
  let ends = 0;
  const stop = watchContainerEnds(docker, () => ends++, 50);
  try {
    // One event on the first stream, one as the stream is opened again, one on the second stream.
    await waitFor(() => requests() === 2 && ends >= 3, 10_000);
    expect(ends).toBe(3);
  } finally {
    // From here the watcher's timers are the test's: a stream opened again would be one timer away.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  }
  try {
    stop();
    // The daemon sees the stream closed, and the watcher has had its close event: no timer waits to reopen it.
    await closed;
    await new Promise((resolve) => setImmediate(resolve));
    expect(vi.getTimerCount()).toBe(0);
    vi.runAllTimers();
    await new Promise((resolve) => setImmediate(resolve));
    expect(requests()).toBe(2);
  } finally {
    vi.useRealTimers();
  }
});
