import type { Readable } from "node:stream";
import type Docker from "dockerode";
import { demultiplex } from "../environments/docker/exec.js";

/** One piece of an exec's output as it arrived, and whether it came from stderr. */
export interface OutputChunk {
  data: Buffer;
  stderr: boolean;
}

/**
 * What a grading exec gave: raw merged output and how it ended. No exit code: grading reads what the
 * commands print (the harness's exit-code line, the patch script's step lines), so no inspect call is made.
 */
export interface ExecResult {
  output: Buffer;
  /** The output as it arrived, each piece marked with its stream. */
  chunks: OutputChunk[];
  timedOut: boolean;
  aborted: boolean;
}

/** How `execCollect` runs a command. */
export interface ExecCollectOptions {
  workdir?: string;
  timeoutSeconds?: number;
  signal?: AbortSignal;
  onChunk?: (data: Buffer, stderr: boolean) => void;
}

/**
 * Runs `cmd` in the container with stdout and stderr merged in arrival order (as the harness's exec does)
 * and waits for it, at most `timeoutSeconds`, or until `signal` aborts. A timed-out or aborted exec is left
 * running: the caller removes the container, which ends it. With `onChunk`, each piece of output goes
 * there as it arrives (a view valid during the call) and none is kept: `output` and `chunks` stay empty.
 */
export async function execCollect(
  container: Docker.Container,
  cmd: string[],
  options: ExecCollectOptions = {},
): Promise<ExecResult> {
  const chunks: OutputChunk[] = [];
  const result: ExecResult = {
    output: Buffer.alloc(0),
    chunks,
    timedOut: false,
    aborted: false,
  };
  if (options.signal?.aborted) return { ...result, aborted: true };
  const exec = await container.exec({
    Cmd: cmd,
    AttachStdout: true,
    AttachStderr: true,
    ...(options.workdir ? { WorkingDir: options.workdir } : {}),
  });
  const stream = (await exec.start({ hijack: false, stdin: false })) as Readable;
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const timer =
    options.timeoutSeconds !== undefined
      ? setTimeout(() => {
          result.timedOut = true;
          stop();
        }, options.timeoutSeconds * 1000)
      : undefined;
  const onAbort = () => {
    result.aborted = true;
    stop();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  // Aborted while the exec was being created or started.
  if (options.signal?.aborted) onAbort();
  try {
    await Promise.race([
      demultiplex(
        stream,
        options.onChunk ?? ((chunk, stderr) => chunks.push({ data: Buffer.from(chunk), stderr })),
      ),
      stopped,
    ]);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
  result.output = Buffer.concat(chunks.map((chunk) => chunk.data));
  if (result.timedOut || result.aborted) stream.destroy();
  return result;
}

/** Decodes output as the harness does: UTF-8, invalid bytes replaced, a leading BOM kept. */
export function decodeOutput(output: Buffer): string {
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(output);
}
