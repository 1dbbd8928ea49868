import type { RunJsonObject } from "../formats/run-json.js";
import { type FolderTrajectory, folderTrajectories } from "../trajectory/folder.js";
import { type LoadedTrajectory, loadTrajectory } from "../trajectory/reader.js";
import { type FolderVerdicts, folderVerdicts, instanceVerdict } from "./folder-verdicts.js";
import { runFactsOf } from "./read-run.js";
import type { RunFacts } from "./run-facts.js";

/**
 * The facts of a run folder, as `swerun runs`, `swerun view` and `swerun export` read them: the verdicts it
 * records (run.json's `eval`, the harness's reports, the cases: `folderVerdicts`), read once, its trajectories
 * (`folderTrajectories`), and each trajectory's facts with its instance's verdict attached.
 */
export class FolderFacts {
  readonly dir: string;
  readonly verdicts: FolderVerdicts;

  /** `record`: the folder's run.json as already read (read from the folder when not given). */
  constructor(dir: string, record?: RunJsonObject) {
    this.dir = dir;
    this.verdicts = folderVerdicts(dir, record);
  }

  /** The folder's trajectories, sorted; `partial`: with the `.partial` of instances still running. */
  trajectories(partial = false): FolderTrajectory[] {
    return folderTrajectories(this.dir, { partial });
  }

  /** The facts of a trajectory already read, with the verdict the folder records for its instance. */
  factsOf(trajectory: LoadedTrajectory): RunFacts {
    const facts = runFactsOf(trajectory);
    facts.verdict = instanceVerdict(this.verdicts, facts.id, facts);
    return facts;
  }

  /** Reads a trajectory file's facts with their verdict (see `factsOf`); a bad file is a UserError. */
  read(path: string): RunFacts {
    return this.factsOf(loadTrajectory(path));
  }
}
