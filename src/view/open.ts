import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** The program that opens a file in the default browser here, or null when there is none. */
export function browserOpener(platform = process.platform, path = process.env.PATH ?? ""): string[] | null {
  if (platform === "darwin") return ["open"];
  if (platform === "win32") return ["cmd", "/c", "start", '""'];
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, "xdg-open"), constants.X_OK);
      return [join(dir, "xdg-open")];
    } catch {
      // not in this folder
    }
  }
  return null;
}

/** Opens `file` with the opener, detached (swerun does not wait for the browser). */
export function openInBrowser(opener: string[], file: string): void {
  const [program, ...args] = opener;
  if (!program) return;
  const child = spawn(program, [...args, file], { detached: true, stdio: "ignore" });
  child.on("error", () => {});
  child.unref();
}
