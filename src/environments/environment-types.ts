/**
 * `info.config.environment_type` of each environment class, as the classes' `serialize()` write it:
 * mini-swe-agent's class path for the same config.
 */
export const ENVIRONMENT_TYPES = {
  local: "minisweagent.environments.local.LocalEnvironment",
  docker: "minisweagent.environments.docker.DockerEnvironment",
  bubblewrap: "minisweagent.environments.extra.bubblewrap.BubblewrapEnvironment",
  /** swerun's own class (mini-swe-agent has none): named as a class path of swerun's. */
  kubernetes: "swerun.environments.kubernetes.KubernetesEnvironment",
} as const;
