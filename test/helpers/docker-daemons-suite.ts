import { afterAll, describe, it } from "vitest";
import { dockerFixture, REQUIRE_DOCKER } from "./docker.js";
import { extraDaemonsProblem, stopDaemons } from "./docker-daemons.js";

/**
 * `describe` for tests with extra Docker daemons (docker-daemons.ts): skipped with the reason when they
 * cannot be started (no main daemon, not root, no dockerd), failed instead when SWERUN_REQUIRE_DOCKER=1.
 * Stops the daemons its tests started afterwards.
 */
export async function describeExtraDaemons(name: string, body: () => void): Promise<void> {
  let reason: string | undefined;
  try {
    await dockerFixture();
    reason = extraDaemonsProblem();
  } catch (error) {
    reason = error instanceof Error ? error.message : String(error);
  }
  if (!reason) {
    describe(name, () => {
      afterAll(stopDaemons);
      body();
    });
  } else if (REQUIRE_DOCKER) {
    describe(name, () => {
      it("needs extra Docker daemons (SWERUN_REQUIRE_DOCKER=1)", () => {
        throw new Error(`SWERUN_REQUIRE_DOCKER=1 but extra Docker daemons cannot be started: ${reason}`);
      });
    });
  } else {
    process.stderr.write(`Host-pool tests skipped: ${reason}\n`);
    describe.skip(name, body);
  }
}
