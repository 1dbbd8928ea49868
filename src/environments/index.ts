import type { EnvironmentConfig } from "../config/schema.js";
import { withoutSecrets } from "../util/sanitize.js";
import type { Environment, EnvironmentContext } from "./environment.js";
import { ENVIRONMENT_TYPES } from "./environment-types.js";

export { ENVIRONMENT_TYPES };

/** What an environment of this config would record, for a run that ended before its environment existed. */
export function serializeEnvironmentConfig(config: EnvironmentConfig): {
  environment: Record<string, unknown>;
  environment_type: string;
} {
  return {
    environment: withoutSecrets({ ...config }),
    environment_type: ENVIRONMENT_TYPES[config.environment_class],
  };
}

/** Builds the environment a config names. Docker's and Kubernetes' clients load only when used. */
export async function createEnvironment(
  config: EnvironmentConfig,
  context: EnvironmentContext,
): Promise<Environment> {
  switch (config.environment_class) {
    case "local": {
      const { LocalEnvironment, checkLocalCwd } = await import("./local.js");
      checkLocalCwd(config.cwd);
      return new LocalEnvironment(config);
    }
    case "docker": {
      const { DockerEnvironment } = await import("./docker/environment.js");
      return DockerEnvironment.create(config, context);
    }
    case "bubblewrap": {
      const { BubblewrapEnvironment } = await import("./bubblewrap.js");
      return BubblewrapEnvironment.create(config);
    }
    case "kubernetes": {
      const { KubernetesEnvironment } = await import("./kubernetes/environment.js");
      return KubernetesEnvironment.create(config, context);
    }
  }
}
