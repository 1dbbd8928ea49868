import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach } from "vitest";

const made: string[] = [];
const madeForFile: string[] = [];

/** A fresh temporary directory, removed after the current test. */
export function tempDir(prefix = "swerun-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh temporary directory, removed once the test file's tests have run: for helpers whose folders may be
 * made in `beforeAll` or `beforeEach` as well as in a test.
 */
export function tempDirForFile(prefix = "swerun-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  madeForFile.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of madeForFile.splice(0)) rmSync(dir, { recursive: true, force: true });
});
