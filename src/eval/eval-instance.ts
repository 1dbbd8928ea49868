import type { Instance } from "../datasets/dataset.js";
import { DEFAULT_IMAGE_TEMPLATE, imageName } from "../datasets/image-name.js";
import { UserError } from "../errors.js";
import type { EvalType } from "./harness-constants.js";
import { type ImageAsset, parseImageAssets } from "./image-assets.js";
import { instanceLanguage } from "./parser-language.js";
import type { GradingSpec } from "./verdict.js";

/** What grading one instance needs from its dataset row (SWE-bench 5.x columns). */
export interface EvalInstance extends GradingSpec {
  image: string;
  eval_script: string;
  log_parser: string;
  /** The language of its code and tests (the row's `language`, else its parser's; see parser-language.ts). */
  language?: string;
  /** Binary patch assets restored before the tests (Multimodal rows' `image_assets`); usually none. */
  image_assets?: ImageAsset[];
}

const REQUIRED = ["eval_script", "log_parser", "FAIL_TO_PASS", "PASS_TO_PASS"] as const;

function testList(row: Instance, key: "FAIL_TO_PASS" | "PASS_TO_PASS", dataset: string): string[] {
  let value = row[key];
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw new UserError(`${dataset}: ${row.instance_id}: ${key} is not a JSON list`);
    }
  }
  if (!Array.isArray(value) || !value.every((name) => typeof name === "string"))
    throw new UserError(`${dataset}: ${row.instance_id}: ${key} must be a list of test names`);
  return value;
}

/**
 * The grading spec of each row. A dataset without the grading columns is one error naming the missing ones
 * and the dataset. The image is the row's `image` (5.x), else swerun's naming (`image_name`, `docker_image`,
 * the template). `eval_type` defaults to `pass_and_fail`.
 */
export function evalInstances(
  rows: Instance[],
  dataset: string,
  imageTemplate = DEFAULT_IMAGE_TEMPLATE,
): EvalInstance[] {
  const missing = REQUIRED.filter((key) => rows.some((row) => row[key] === undefined || row[key] === null));
  if (missing.length > 0) {
    throw new UserError(
      `dataset ${dataset} has no ${missing.join(", ")} column${missing.length > 1 ? "s" : ""}: swerun eval needs a SWE-bench 5.x dataset (rows with eval_script, log_parser, FAIL_TO_PASS, PASS_TO_PASS)`,
    );
  }
  return rows.map((row) => {
    const evalType = row.eval_type ?? "pass_and_fail";
    if (evalType !== "pass_and_fail" && evalType !== "fail_only")
      throw new UserError(
        `${dataset}: ${row.instance_id}: eval_type must be pass_and_fail or fail_only, got ${String(evalType)}`,
      );
    let assets: ImageAsset[];
    try {
      assets = parseImageAssets(row.image_assets);
    } catch (error) {
      throw new UserError(`${dataset}: ${row.instance_id}: ${(error as Error).message}`);
    }
    const language = instanceLanguage(row, String(row.log_parser));
    return {
      instance_id: row.instance_id,
      image: typeof row.image === "string" && row.image !== "" ? row.image : imageName(row, imageTemplate),
      eval_script: String(row.eval_script),
      log_parser: String(row.log_parser),
      FAIL_TO_PASS: testList(row, "FAIL_TO_PASS", dataset),
      PASS_TO_PASS: testList(row, "PASS_TO_PASS", dataset),
      eval_type: evalType as EvalType,
      ...(assets.length > 0 ? { image_assets: assets } : {}),
      ...(language ? { language } : {}),
      ...(typeof row.version === "string" || typeof row.version === "number"
        ? { version: String(row.version) }
        : {}),
    };
  });
}
