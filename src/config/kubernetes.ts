import * as z from "zod/mini";
import { environmentBase, VARIABLE_NAME } from "./common.js";
import { containerTimeout } from "./docker.js";

/** Quantities of `resources` ("500m", "2Gi", 1): strings as Kubernetes writes them, numbers as numbers. */
const quantities = z.record(z.string(), z.pipe(z.union([z.string(), z.number()]), z.transform(String)));

/** Keys of PodSpec that `pod_template.spec` may not set: swerun's own container is the pod's only one. */
export const POD_SPEC_OWNED_KEYS = [
  "containers",
  "initContainers",
  "ephemeralContainers",
  "restartPolicy",
  "activeDeadlineSeconds",
  "automountServiceAccountToken",
  "nodeName",
];

/**
 * The `environment` section for `environment_class: kubernetes`: one pod per run, commands through the
 * API server (pods/exec). mini-swe-agent's Docker keys where they mean the same, plus the cluster's.
 */
export const kubernetesEnvironmentSchema = z
  .strictObject({
    environment_class: z.literal("kubernetes"),
    ...environmentBase,
    /** The pod's image; `swerun swebench` sets it per instance. Nodes pull it as `image_pull_policy` says. */
    image: z._default(z.string().check(z.minLength(1)), ""),
    /** Working directory of every command inside the pod ("" means "/"). */
    cwd: z._default(z.string(), "/"),
    /** Program and flags that run a command string inside the pod. */
    interpreter: z._default(z.array(z.string()).check(z.minLength(1)), ["bash", "-lc"]),
    /** Host variables copied into every command when set on the host (never into the pod spec, never recorded). */
    forward_env: z._default(z.array(z.string()), []),
    /**
     * How long the pod may live: its `sleep`, and its `activeDeadlineSeconds` (the kubelet then ends it), so a
     * pod swerun loses ends by itself. E.g. "2h" or seconds.
     */
    container_timeout: containerTimeout,
    /**
     * Seconds a pod may wait to run (scheduling, image pull, start): past it, or on a pull error
     * (ErrImagePull, ImagePullBackOff, ...), the run ends with a clear error and the pod is deleted.
     */
    pull_timeout: z._default(z.number().check(z.positive()), 120),
    /** The image pull policy of the pod's container. */
    image_pull_policy: z._default(z.enum(["IfNotPresent", "Always", "Never"]), "IfNotPresent"),
    /**
     * "session" (default): one long-lived exec per pod runs every action (swerun's framed session; a few ms
     * per action); "exec": one pods/exec per action, as mini-swe-agent's Docker environment does.
     */
    exec_mode: z._default(z.enum(["session", "exec"]), "session"),
    /** Keep the pod after the run, for debugging; swerun prints how to enter it. */
    keep_container: z._default(z.boolean(), false),
    /** The namespace of the pods. Unset: the context's namespace (in a pod: its own), else "default". */
    namespace: z.optional(z.string().check(z.minLength(1))),
    /** The kubeconfig context to use. Unset: the kubeconfig's current context. */
    context: z.optional(z.string().check(z.minLength(1))),
    /** The kubeconfig file. Unset: in-cluster credentials, then $KUBECONFIG, then ~/.kube/config. */
    kubeconfig: z.optional(z.string().check(z.minLength(1))),
    /** The container's resources: `requests` and `limits` of cpu, memory, ephemeral-storage, ... */
    resources: z._default(
      z.strictObject({ requests: z.optional(quantities), limits: z.optional(quantities) }),
      {},
    ),
    /**
     * A partial PodTemplateSpec merged into each pod: `metadata.labels`/`annotations`, and `spec` keys
     * (nodeSelector, tolerations, affinity, runtimeClassName, imagePullSecrets, securityContext,
     * priorityClassName, ...). Lists such as tolerations are added to swerun's own.
     */
    pod_template: z._default(
      z.strictObject({
        metadata: z.optional(
          z.strictObject({
            labels: z.optional(z.record(z.string(), z.string())),
            annotations: z.optional(z.record(z.string(), z.string())),
          }),
        ),
        spec: z.optional(z.record(z.string(), z.unknown())),
      }),
      {},
    ),
    /**
     * Seconds a pod stays bound to a node that stopped answering (its not-ready/unreachable tolerations)
     * before the cluster evicts it; swerun then runs the instance again elsewhere.
     */
    node_loss_toleration_seconds: z._default(z.int().check(z.minimum(0)), 30),
  })
  .check(
    z.superRefine((config, context) => {
      for (const [index, name] of config.forward_env.entries()) {
        if (VARIABLE_NAME.test(name)) continue;
        context.addIssue({
          code: "custom",
          path: ["forward_env", index],
          message: `"${name}" is not a variable name (letters, digits and _, not starting with a digit)`,
        });
      }
      for (const key of Object.keys(config.pod_template.spec ?? {})) {
        if (!POD_SPEC_OWNED_KEYS.includes(key)) continue;
        context.addIssue({
          code: "custom",
          path: ["pod_template", "spec", key],
          message:
            "is set by swerun (use image, resources, container_timeout and the other environment keys)",
        });
      }
    }),
  );

/**
 * Docker keys a kubernetes config may not hold, with what to use instead (a config written for Docker gets
 * this line rather than "unknown key").
 */
export const KUBERNETES_REFUSED_KEYS: Record<string, string> = {
  run_args: "is a Docker key; on Kubernetes use pod_template (spec) and resources",
  container_options: "is a Docker key; on Kubernetes use pod_template",
  allow_privileged: "is a Docker key; on Kubernetes use pod_template.spec.securityContext",
  docker_hosts: "is a Docker key; on Kubernetes the cluster places the pods",
  image_budget: "is a Docker key; on Kubernetes each node's kubelet manages its images",
};
