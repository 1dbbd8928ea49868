#!/usr/bin/env node
// Builds (or finds, by content hash) the offline Docker test images and prints their tags.
// Needs the compiled helpers: run `npm run build` first (`npm ci` does it through `prepare`).
import { existsSync } from "node:fs";

const helpers = new URL("../dist/test/helpers/docker-images.js", import.meta.url);
const client = new URL("../dist/src/environments/docker/client.js", import.meta.url);
if (!existsSync(helpers) || !existsSync(client)) {
  process.stderr.write("build-test-images: dist/ is missing or stale; run `npm run build` first\n");
  process.exit(1);
}
const { ensureTestImages } = await import(helpers.href);
const { connectDocker, closeDockerClient } = await import(client.href);

try {
  const docker = await connectDocker();
  const started = Date.now();
  const images = await ensureTestImages(docker, (line) => process.stdout.write(`${line}\n`));
  process.stdout.write(`test images ready in ${Date.now() - started} ms: ${images.base} ${images.swebench} ${images.noShell}\n`);
  const { ensureEvalImage } = await import(new URL("../dist/test/helpers/eval-images.js", import.meta.url).href);
  process.stdout.write(`grading test image ready: ${await ensureEvalImage(docker, (line) => process.stdout.write(`${line}\n`))}\n`);
  const { ensureCondaImage } = await import(new URL("../dist/test/helpers/conda-images.js", import.meta.url).href);
  process.stdout.write(`conda-layout test image ready: ${await ensureCondaImage(docker, (line) => process.stdout.write(`${line}\n`))}\n`);
  const { ensureLanguageImage, LANGUAGES } = await import(
    new URL("../dist/test/helpers/language-images.js", import.meta.url).href
  );
  for (const language of LANGUAGES)
    process.stdout.write(
      `${language} test image ready: ${await ensureLanguageImage(docker, language, (line) => process.stdout.write(`${line}\n`))}\n`,
    );
  closeDockerClient(docker);
} catch (error) {
  process.stderr.write(`build-test-images: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
