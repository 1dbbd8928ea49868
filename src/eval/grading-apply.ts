import { join } from "node:path";
import { writeFileAtomic } from "../util/atomic-write.js";
import { redact } from "../util/secrets.js";
import { writeTar } from "../util/tar.js";
import { decodeOutput } from "./container-exec.js";
import { makeEvalScript } from "./eval-script.js";
import type { GradeOptions } from "./grade-instance.js";
import type { GradingBox } from "./grading-container.js";
import { GradingError, InfraFailure } from "./grading-errors.js";
import {
  CONTAINER_EVAL_SCRIPT,
  CONTAINER_PATCH,
  CONTAINER_WORKDIR,
  LOG_FILES,
  MARKERS,
} from "./harness-constants.js";
import { injectAssetRestore, restoreCommand, stagedLine, stageImageAssets } from "./image-assets.js";
import type { InstanceLog } from "./instance-log.js";
import { applyScript, newToken, parseApplyOutput } from "./patch-apply.js";

/** Writes `$1` to the patch file and `$2` to the eval script, byte for byte, before the patch steps. */
const WRITE_FILES = `(umask 022 && printf '%s' "$1" > ${CONTAINER_PATCH} && printf '%s' "$2" > ${CONTAINER_EVAL_SCRIPT} && chmod 644 ${CONTAINER_PATCH} ${CONTAINER_EVAL_SCRIPT}) || exit 97`;

/** Whether a file can be an exec argument: no NUL, well under Linux's 128 KiB limit for one argument. */
function fitsInArguments(text: string): boolean {
  return !text.includes("\0") && Buffer.byteLength(text) <= 96 * 1024;
}

/** Where the patch phase works: the grading's container, its log folder and run_instance.log. */
export interface GradingPlace {
  container: GradingBox;
  logDir: string;
  log: InstanceLog;
}

/**
 * The patch phase: the patch and the eval script sent to the container (patch.diff written), the patch applied
 * as the harness applies it (four ways, then the reverse check), then the binary assets staged and eval.sh
 * written. Returns `git diff` before the tests; a patch that does not apply throws the harness's error.
 */
export async function applyPatch(
  place: GradingPlace,
  options: GradeOptions,
  phase: (phase: string) => void,
): Promise<string> {
  const { container, logDir, log } = place;
  const { instance, prediction } = options;
  const patch = prediction.model_patch;
  const evalScript = makeEvalScript(instance.eval_script);
  writeFileAtomic(join(logDir, LOG_FILES.patch), [redact(patch)]);
  log.info(
    `Intermediate patch for ${instance.instance_id} written to ${join(logDir, LOG_FILES.patch)}, now applying to container...`,
  );
  // Small files travel as arguments of the patch exec, which writes them first (one daemon call fewer
  // before the patch is applied); others are uploaded as an archive. Either way the same bytes, mode 644.
  const inline = fitsInArguments(patch) && fitsInArguments(evalScript);
  if (!inline)
    await container.putArchive(
      writeTar([
        { type: "file", path: CONTAINER_PATCH.slice(1), mode: 0o644, content: Buffer.from(patch) },
        {
          type: "file",
          path: CONTAINER_EVAL_SCRIPT.slice(1),
          mode: 0o644,
          content: Buffer.from(evalScript),
        },
      ]),
    );

  phase("applying patch");
  const token = newToken();
  const applyCommand = inline
    ? ["/bin/bash", "-c", `${WRITE_FILES}\n${applyScript(token)}`, "bash", patch, evalScript]
    : ["/bin/bash", "-c", applyScript(token)];
  const applyRun = await container.exec(applyCommand, {
    workdir: CONTAINER_WORKDIR,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (applyRun.aborted) throw new InfraFailure("interrupted", "interrupted");
  const applied = parseApplyOutput(decodeOutput(applyRun.output), token);
  for (const attempt of applied.attempts) {
    if (attempt.exitCode === 0) log.info(`${MARKERS.applied}:\n${attempt.output}`);
    else log.info(`Failed to apply patch to container: ${attempt.command}`);
  }
  if (applied.reverseCheck?.exitCode === 0) log.info(`${MARKERS.applied}: verified already applied`);
  if (!applied.applied) {
    const last = applied.attempts.at(-1)?.output ?? decodeOutput(applyRun.output);
    log.info(`${MARKERS.applyFailed}:\n${last}`);
    throw new GradingError(`${MARKERS.applyFailed}:\n${last}`);
  }
  log.info(`Git diff before:\n${applied.diffBefore}`);
  await stageAssets(place, options, evalScript);
  return applied.diffBefore;
}

/**
 * Binary patch assets arrive after the patch, as the harness stages them: copied to /image_assets and put in
 * place by lines the eval script runs just before its tests (with the script sent again). eval.sh is written
 * to the log folder either way.
 */
async function stageAssets(place: GradingPlace, options: GradeOptions, script: string): Promise<void> {
  const { container, logDir, log } = place;
  const { instance } = options;
  let evalScript = script;
  const staged = await stageImageAssets({
    instanceId: instance.instance_id,
    assets: instance.image_assets ?? [],
    logDir,
    ...(options.taskRepo ? { taskRepo: options.taskRepo } : {}),
    warn: (message) => log.warning(message),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (staged.length > 0) {
    evalScript = injectAssetRestore(
      evalScript,
      staged.map((asset) => restoreCommand(asset.path)),
    );
    await container.putArchive(
      writeTar([
        { type: "dir", path: "image_assets", mode: 0o755 },
        ...staged.map((asset) => ({
          type: "file" as const,
          path: `image_assets/${asset.flat}`,
          mode: 0o644,
          content: asset.data,
        })),
        {
          type: "file",
          path: CONTAINER_EVAL_SCRIPT.slice(1),
          mode: 0o644,
          content: Buffer.from(evalScript),
        },
      ]),
    );
    log.info(stagedLine(staged));
  }
  writeFileAtomic(join(logDir, LOG_FILES.evalScript), [redact(evalScript)]);
  log.info(
    `Eval script for ${instance.instance_id} written to ${join(logDir, LOG_FILES.evalScript)}; copied to the container`,
  );
}
