import type { EnvironmentConfig } from "../config/schema.js";
import type { Environment, EnvironmentContext } from "./environment.js";

/** Builds the environment a config names. Docker's client loads only when a Docker environment is used. */
export async function createEnvironment(
  config: EnvironmentConfig,
  context: EnvironmentContext,
): Promise<Environment> {
  switch (config.environment_class) {
    case "local": {
      const { LocalEnvironment } = await import("./local.js");
      return new LocalEnvironment(config);
    }
    case "docker": {
      const { DockerEnvironment } = await import("./docker.js");
      return DockerEnvironment.create(config, context);
    }
  }
}
