import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import { DockerEnvironment } from "../../../src/environments/docker/environment.js";
import {
  liveContainerNames,
  removeAllLiveContainers,
} from "../../../src/environments/docker/live-containers.js";
import { describeDocker, dockerFixture, dockerTestConfig, swerunContainers } from "../../helpers/docker.js";

const RUN_ID = `docker-registry-test-${process.pid}`;

await describeDocker("removing every live container (the CLI's signal path)", () => {
  let docker: Docker;
  let image: string;
  const config = () => dockerTestConfig(image);

  beforeAll(async () => {
    const fixture = await dockerFixture();
    docker = fixture.docker;
    image = fixture.images.base;
  });

  it("removes the containers of every environment still open in this process", async () => {
    const first = await DockerEnvironment.create(config(), { runId: RUN_ID, instanceId: "one" });
    const second = await DockerEnvironment.create(config(), { runId: RUN_ID, instanceId: "two" });
    expect(liveContainerNames().sort()).toEqual([first.containerName, second.containerName].sort());
    expect(await swerunContainers(docker, RUN_ID)).toHaveLength(2);
    await removeAllLiveContainers();
    expect(await swerunContainers(docker, RUN_ID)).toEqual([]);
    expect(liveContainerNames()).toEqual([]);
    await expect(first.execute({ command: "true" })).rejects.toThrow(/already removed/);
  });

  it("stops a startup that is still under way and leaves no container", async () => {
    const starting = DockerEnvironment.create(config(), { runId: RUN_ID, instanceId: "interrupted" });
    await removeAllLiveContainers();
    await expect(starting).rejects.toThrow(
      /^Interrupted while starting Docker container swerun-interrupted-/,
    );
    expect(await swerunContainers(docker, RUN_ID)).toEqual([]);
    expect(liveContainerNames()).toEqual([]);
  });
});
