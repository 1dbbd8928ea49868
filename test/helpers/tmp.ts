import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach } from "vitest";

const made: string[] = [];
const madeForFile: string[] = [];

/** A fresh temporary directory under the system's, listed for removal. */
function madeIn(list: string[], prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  list.push(dir);
  return dir;
}

function removeAll(list: string[]): void {
  for (const dir of list.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A fresh temporary directory, removed after the current test. */
export function tempDir(prefix = "swerun-test-"): string {
  return madeIn(made, prefix);
}

/**
 * A fresh temporary directory, removed once the test file's tests have run: for helpers whose folders may be
 * made in `beforeAll` or `beforeEach` as well as in a test.
 */
export function tempDirForFile(prefix = "swerun-test-"): string {
  return madeIn(madeForFile, prefix);
}

afterEach(() => removeAll(made));
afterAll(() => removeAll(madeForFile));
