import type { SwerunConfig } from "../config/schema.js";
import { type Checkout, materializeFixture, worktreeAtBase } from "../datasets/checkout.js";
import type { Instance } from "../datasets/dataset.js";
import { checkImageTemplate, DEFAULT_IMAGE_TEMPLATE, imageName } from "../datasets/image-name.js";
import { UserError } from "../errors.js";

/**
 * Sets each instance's image (Docker, Kubernetes; named by `imageTemplate`) or makes its local checkout (local
 * environment; a worktree of `repoDir` when given).
 */
export function instancePreparer(
  source: { imageTemplate?: string; repoDir?: string },
  datasetDir: string | undefined,
) {
  const template = source.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE;
  checkImageTemplate(template);
  return async (config: SwerunConfig, instance: Instance): Promise<Checkout | undefined> => {
    // A cluster's nodes pull the image themselves (a bundled instance's must be on them already).
    if (config.environment.environment_class === "kubernetes") {
      config.environment.image = imageName(instance, template);
      return undefined;
    }
    if (config.environment.environment_class === "docker") {
      config.environment.image = imageName(instance, template);
      if (instance.fixture && datasetDir) {
        const { ensureFixtureImage } = await import("./fixture-image.js");
        const { configEndpoint } = await import("../environments/docker/client.js");
        await ensureFixtureImage(
          config.environment.image,
          instance,
          datasetDir,
          configEndpoint(config.environment),
        );
      }
      return undefined;
    }
    let checkout: Checkout;
    if (source.repoDir) checkout = worktreeAtBase(instance, source.repoDir);
    else if (instance.fixture && datasetDir) checkout = materializeFixture(instance, datasetDir);
    else {
      throw new UserError(
        `${instance.instance_id}: the local environment needs a checkout of ${String(instance.repo ?? "the repository")}: pass --repo-dir <clone>`,
      );
    }
    config.environment.cwd = checkout.dir;
    return checkout;
  };
}
