import os from "node:os";

const SYSTEM_NAMES: Record<string, string> = { linux: "Linux", darwin: "Darwin", win32: "Windows" };

/** Python's `platform.uname()` fields of this machine: system, node, release, version, machine. */
export function platformVars(): Record<string, string> {
  return {
    system: SYSTEM_NAMES[os.platform()] ?? os.type(),
    node: os.hostname(),
    release: os.release(),
    version: os.version(),
    machine: os.machine(),
  };
}
