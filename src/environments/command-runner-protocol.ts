/**
 * The messages between swerun (`spawner.ts`) and its command-runner process (`command-runner.ts`), sent over
 * the IPC channel with Node's advanced serialization (so output chunks travel as bytes).
 */

/** Every command's environment carries `SWERUN_PROCESS_TAG=<environment tag>:<command id>`; its descendants inherit it. */
export const PROCESS_TAG = "SWERUN_PROCESS_TAG";

/** swerun to the runner: start a command, kill one, or kill everything an environment's commands left. */
export type RunnerRequest =
  | {
      type: "run";
      id: number;
      file: string;
      args: string[];
      cwd: string;
      env: NodeJS.ProcessEnv;
      /** The environment the command belongs to. */
      tag: string;
    }
  | { type: "kill"; id: number }
  | { type: "reap"; id: number; tag: string };

/** The runner to swerun: a chunk of a command's output, or its end (a reap's end has the reap's id). */
export type RunnerMessage =
  | { type: "data"; id: number; chunk: Buffer | Uint8Array }
  | { type: "exit"; id: number; code?: number | null; signal?: NodeJS.Signals | null; error?: string };
