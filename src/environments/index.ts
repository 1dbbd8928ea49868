import type { EnvironmentConfig } from "../config/schema.js";
import type { Environment } from "./environment.js";

/** Where a run's containers are labelled from; lets `swerun cleanup` find what a crashed run left. */
export interface EnvironmentContext {
  runId: string;
  instanceId?: string;
  /** Progress lines (image pulls) for the console. */
  onProgress?: (line: string) => void;
}

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
      const { DockerEnvironment } = await import("./docker/environment.js");
      return DockerEnvironment.create(config, context);
    }
  }
}
