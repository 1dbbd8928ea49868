import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
} from "node:fs";
import { join, posix, relative } from "node:path";
import type Docker from "dockerode";
import { type TarEntry, writeTar } from "../util/tar.js";

/**
 * Images built offline, in seconds, from this machine's own files: a root filesystem holding bash,
 * coreutils, git and their shared libraries, imported with the Engine API (`docker import`). Used for
 * the bundled demo instances and for tests, on machines without a container registry.
 */
const REQUIRED = ["bash", "sh", "cat", "echo", "sleep", "timeout", "grep", "sed", "git", "ls", "env", "kill"];
const OPTIONAL =
  `dash printf head tail wc sort uniq cut tr mkdir rmdir rm cp mv touch chmod chown ln pwd id whoami
  date seq yes dd tee basename dirname true false test expr stat readlink realpath mktemp nproc uname od find xargs
  ps diff awk mawk setsid nohup cmp md5sum sha256sum printenv mkfifo`.split(/\s+/);
const PATH_DIRS = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/** Where `name` is on this machine's usual program folders, if anywhere. */
export function findProgram(name: string): string | undefined {
  for (const dir of PATH_DIRS) {
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** Shared libraries of the programs, from one `ldd` call. */
function sharedLibraries(programs: string[]): string[] {
  let output = "";
  try {
    output = execFileSync("ldd", programs, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch (error) {
    output = String((error as { stdout?: unknown }).stdout ?? "");
  }
  const libs = new Set<string>();
  for (const match of output.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)) {
    if (match[1]) libs.add(match[1]);
  }
  return [...libs];
}

/** Collects host paths into tar entries, keeping symlinks (and the real files they point to) and parent dirs. */
export class RootfsCollector {
  readonly entries = new Map<string, TarEntry>();

  add(hostPath: string, depth = 0): void {
    if (depth > 40) throw new Error(`too many symlinks resolving ${hostPath}`);
    const parts = hostPath.split("/").filter(Boolean);
    let current = "";
    for (const [index, part] of parts.entries()) {
      current = `${current}/${part}`;
      const stat = lstatSync(current);
      const name = current.slice(1);
      if (stat.isSymbolicLink()) {
        const target = readlinkSync(current);
        this.entries.set(name, { type: "symlink", path: name, target });
        const resolved = posix.resolve(posix.dirname(current), target);
        this.add([resolved, ...parts.slice(index + 1)].join("/"), depth + 1);
        return;
      }
      if (stat.isDirectory()) {
        if (!this.entries.has(name))
          this.entries.set(name, { type: "dir", path: name, mode: stat.mode & 0o7777 });
      } else if (index === parts.length - 1) {
        this.entries.set(name, {
          type: "file",
          path: name,
          mode: stat.mode & 0o7777,
          content: readFileSync(current),
        });
      }
    }
  }

  /**
   * Adds a host program at `imagePath` (its own path by default) with the shared libraries it needs at
   * their host paths.
   */
  addProgram(hostPath: string, imagePath = hostPath.replace(/^\//, "")): void {
    const stat = lstatSync(hostPath);
    this.addDirs(posix.dirname(imagePath));
    this.entries.set(imagePath, {
      type: "file",
      path: imagePath,
      mode: stat.mode & 0o7777,
      content: readFileSync(hostPath),
    });
    for (const lib of sharedLibraries([hostPath])) this.add(lib);
  }

  /** Adds an in-memory file, creating its parent directories. */
  addFile(path: string, content: string | Buffer, mode = 0o644): void {
    this.addDirs(posix.dirname(path));
    this.entries.set(path, { type: "file", path, mode, content: Buffer.from(content) });
  }

  addDirs(path: string, mode = 0o755): void {
    let current = "";
    for (const part of path.split("/").filter(Boolean)) {
      current = current ? `${current}/${part}` : part;
      if (!this.entries.has(current)) this.entries.set(current, { type: "dir", path: current, mode });
    }
  }

  /** Adds every file under a host directory at `prefix` in the image. */
  addTree(hostDir: string, prefix: string): void {
    this.addDirs(prefix);
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = join(dir, entry.name);
        const name = posix.join(prefix, relative(hostDir, full).split("\\").join("/"));
        const stat = lstatSync(full);
        if (entry.isDirectory()) {
          this.entries.set(name, { type: "dir", path: name, mode: stat.mode & 0o7777 });
          walk(full);
        } else if (entry.isSymbolicLink()) {
          this.entries.set(name, { type: "symlink", path: name, target: readlinkSync(full) });
        } else {
          this.entries.set(name, {
            type: "file",
            path: name,
            mode: stat.mode & 0o7777,
            content: readFileSync(full),
          });
        }
      }
    };
    walk(hostDir);
  }

  tar(): Buffer {
    return writeTar([...this.entries.values()].sort((a, b) => a.path.localeCompare(b.path)));
  }
}

/**
 * The modules of Debian's perl-base the images carry: POSIX and what it needs, as on an image with perl-base (the
 * Docker session's Perl loop loads none; its tests check that it runs without them).
 */
const PERL_MODULES = [
  "Carp.pm",
  "Errno.pm",
  "Exporter.pm",
  "Exporter/Heavy.pm",
  "Fcntl.pm",
  "POSIX.pm",
  "Tie/Hash.pm",
  "XSLoader.pm",
  "overloading.pm",
  "strict.pm",
  "warnings.pm",
  "warnings/register.pm",
];
/** Their compiled parts. */
const PERL_LIBRARIES = ["auto/POSIX", "auto/Fcntl"];

/**
 * `perl` and, from its perl-base library folder, POSIX and what it needs (all of perl-base would add 5.4 MB
 * to every image, and time to every test that pushes or pulls one); undefined where this machine lacks either.
 */
function perlBase(): { program: string; library: string } | undefined {
  const program = findProgram("perl");
  const lib = "/usr/lib";
  if (!program || !existsSync(lib)) return undefined;
  for (const entry of readdirSync(lib)) {
    const library = join(lib, entry, "perl-base");
    if (existsSync(join(library, "POSIX.pm"))) return { program, library };
  }
  return undefined;
}

/**
 * The root filesystem of the offline images: REQUIRED and OPTIONAL programs with their shared libraries,
 * and perl with POSIX unless `perl` is false (for an image like those
 * without perl, whose Docker session runs the shell loop).
 */
export function baseRootfs(options: { perl?: boolean } = {}): RootfsCollector {
  const rootfs = new RootfsCollector();
  const programs: string[] = [];
  for (const name of REQUIRED) {
    const path = findProgram(name);
    if (!path)
      throw new Error(
        `building an offline Docker image needs \`${name}\` on this machine (looked in ${PATH_DIRS.join(", ")})`,
      );
    programs.push(path);
  }
  for (const name of OPTIONAL) {
    const path = findProgram(name);
    if (path) programs.push(path);
  }
  const perl = options.perl === false ? undefined : perlBase();
  if (perl) programs.push(perl.program);
  for (const path of [...programs, ...sharedLibraries(programs)]) rootfs.add(path);
  if (perl) {
    for (const module of PERL_MODULES) {
      const path = join(perl.library, module);
      if (existsSync(path)) rootfs.add(path);
    }
    for (const dir of PERL_LIBRARIES) {
      const path = join(perl.library, dir);
      if (existsSync(path)) rootfs.addTree(path, path.slice(1));
    }
  }
  for (const path of ["/bin", "/sbin", "/lib", "/lib64", "/etc/ld.so.cache"]) {
    if (existsSync(path)) rootfs.add(path);
  }
  const gitTemplates = "/usr/share/git-core/templates";
  if (existsSync(gitTemplates)) rootfs.addTree(gitTemplates, gitTemplates.slice(1));
  rootfs.addFile(
    "etc/passwd",
    "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n",
  );
  rootfs.addFile("etc/group", "root:x:0:\nnogroup:x:65534:\n");
  rootfs.addDirs("root", 0o700);
  rootfs.entries.set("tmp", { type: "dir", path: "tmp", mode: 0o1777 });
  for (const dir of ["proc", "sys", "dev", "etc", "var/tmp", "usr/local/bin"]) rootfs.addDirs(dir);
  return rootfs;
}

/** The base image's root filesystem as a tar, plus `extraFiles` (path in the image → content). */
export function rootfsTar(extraFiles: Record<string, string> = {}): Buffer {
  const rootfs = baseRootfs();
  for (const [path, content] of Object.entries(extraFiles)) rootfs.addFile(path, content);
  return rootfs.tar();
}

export function sha(...parts: (string | Buffer)[]): string {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return hash.digest("hex").slice(0, 16);
}

export async function imageExists(docker: Docker, tag: string): Promise<boolean> {
  try {
    await docker.getImage(tag).inspect();
    return true;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw error;
  }
}

/** Removes the other tags of a test image repository: images of older recipes or host files. */
async function pruneOldTags(docker: Docker, repo: string, keep: string): Promise<void> {
  const images = await docker.listImages({ filters: { reference: [repo] } });
  for (const image of images) {
    for (const tag of image.RepoTags ?? []) {
      if (tag !== `${repo}:${keep}`)
        await docker
          .getImage(tag)
          .remove()
          .catch(() => {});
    }
  }
}

export async function importImage(
  docker: Docker,
  tar: Buffer,
  repo: string,
  tag: string,
  changes: string[] = [],
): Promise<void> {
  await pruneOldTags(docker, repo, tag);
  const stream = await docker.importImage(
    tar as unknown as NodeJS.ReadableStream,
    {
      repo,
      tag,
      changes: [
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        'CMD ["bash"]',
        ...changes,
      ],
    } as object,
  );
  const body = await new Promise<string>((resolve, reject) => {
    let text = "";
    stream.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    stream.on("end", () => resolve(text));
    stream.on("error", reject);
  });
  const error = /"error"\s*:\s*"([^"]*)"/.exec(body);
  if (error) throw new Error(`docker import of ${repo}:${tag} failed: ${error[1]}`);
}
