import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Prediction, readPredictions } from "../datasets/predictions.js";
import { recordedVerdicts, removeStaleReportTemps, verdictsOnDisk } from "../eval/earlier-gradings.js";
import type { EvalInstance } from "../eval/eval-instance.js";
import type { GradeResult } from "../eval/grade-instance.js";
import { verdictLine } from "../eval/grading-display.js";
import { recordVerdict } from "../eval/grading-driver.js";
import { isFinalVerdict, recordEvalInRunJson } from "../eval/verdict-record.js";
import { runJsonPath } from "../formats/run-json.js";
import { chaosPoint } from "../util/chaos.js";

/** Where a batch's verdicts go: its folder (`eval/` for the logs, run.json) and the lines it says. */
export interface VerdictsPlace {
  folder: string;
  /** The eval run id. */
  runId: string;
  modelName: string;
  say: (line: string) => void;
}

/**
 * The verdicts of a batch's gradings: each told as a line with the resolve rate so far and recorded in
 * run.json; those of an earlier run of the batch (a resumed one) found on disk and in its preds.json.
 */
export class GradingVerdicts {
  /** `<folder>/eval`: the gradings' logs. */
  readonly outputDir: string;
  readonly runJson: string;
  readonly #place: VerdictsPlace;
  readonly #specs: ReadonlyMap<string, EvalInstance>;
  #done = 0;
  #resolved = 0;

  /**
   * A resumed batch: verdicts already in report.json files reach run.json first, and the temp files of
   * report.json writes a kill interrupted go.
   */
  constructor(place: VerdictsPlace, specs: ReadonlyMap<string, EvalInstance>) {
    this.#place = place;
    this.#specs = specs;
    this.outputDir = join(place.folder, "eval");
    this.runJson = runJsonPath(place.folder);
    removeStaleReportTemps(this.outputDir, place.runId, place.modelName);
    const onDisk = verdictsOnDisk(this.#earlierPredictions(), this.outputDir, place.runId);
    if (Object.keys(onDisk).length > 0)
      recordEvalInRunJson(this.runJson, { run_id: place.runId, verdicts: onDisk });
  }

  /** Tells a verdict and records it in run.json. */
  tell(result: GradeResult | undefined): void {
    if (!result) return;
    chaosPoint("grading-ended");
    this.#done += 1;
    if (result.resolved) this.#resolved += 1;
    this.#place.say(`eval ${verdictLine(result, this.#done, this.#done, this.#resolved)}`);
    recordVerdict(this.runJson, this.#place.runId, result, this.#specs.get(result.instance_id));
  }

  /** A grading that failed (no verdict): said. */
  failed(instanceId: string, error: unknown): void {
    this.#place.say(`eval ${instanceId}: ${error instanceof Error ? error.message : String(error)}`);
  }

  /** An instance that submitted nothing: recorded as `swerun eval` records it (the harness's empty_patch_ids), so both agree. */
  emptyPatch(instanceId: string): void {
    if (this.#specs.has(instanceId))
      recordEvalInRunJson(this.runJson, {
        run_id: this.#place.runId,
        verdicts: { [instanceId]: { resolved: false, status: "empty_patch" } },
      });
  }

  /**
   * The predictions of instances finished by an earlier run of the batch (those not in `made`): they count
   * with their reports, if graded; `ungraded`: those with a submission and no verdict (their grading was
   * interrupted), to grade now.
   */
  earlier(made: ReadonlyMap<string, Prediction>): { earlier: Prediction[]; ungraded: Prediction[] } {
    const { runId } = this.#place;
    const earlier = this.#earlierPredictions().filter((entry) => !made.has(entry.instance_id));
    const recorded = recordedVerdicts(this.runJson, runId);
    const graded = verdictsOnDisk(earlier, this.outputDir, runId);
    const ungraded = earlier.filter(
      (entry) =>
        entry.model_patch &&
        this.#specs.has(entry.instance_id) &&
        !graded[entry.instance_id] &&
        !isFinalVerdict(recorded[entry.instance_id]),
    );
    return { earlier, ungraded };
  }

  #earlierPredictions(): Prediction[] {
    const path = join(this.#place.folder, "preds.json");
    return existsSync(path) ? readPredictions(path) : [];
  }
}
