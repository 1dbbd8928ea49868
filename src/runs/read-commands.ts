/**
 * Whether a bash command only reads: every command of its pipelines and `&&`/`||`/`;` chains is one of the
 * read-only programs (`cat`, `head`, `grep`, `find`, `ls`, `sed -n`, `git show/log/diff/status`, ...), once a
 * leading `cd DIR` and variable assignments are set aside.
 */
const READ_PROGRAMS = new Set([
  "cat",
  "head",
  "tail",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "ag",
  "find",
  "ls",
  "tree",
  "nl",
  "wc",
  "less",
  "more",
  "file",
  "stat",
  "pwd",
  "echo",
  "diff",
  "awk",
  "sort",
  "uniq",
  "cut",
  "which",
  "type",
]);
const READ_GIT = new Set([
  "show",
  "log",
  "diff",
  "status",
  "blame",
  "grep",
  "ls-files",
  "rev-parse",
  "branch",
]);

function words(command: string): string[] {
  return command.trim().split(/\s+/).filter(Boolean);
}

function isReadOnlySimple(command: string): boolean {
  const parts = words(command).filter((word, index, all) => {
    const before = all.slice(0, index);
    return !(/^[A-Za-z_]\w*=/.test(word) && before.every((w) => /^[A-Za-z_]\w*=/.test(w)));
  });
  const [program, ...args] = parts;
  if (!program) return true;
  const name = program.split("/").pop() ?? program;
  if (name === "cd") return true;
  if (name === "sed") return args.includes("-n") && !args.some((arg) => /^-[a-z]*i/.test(arg));
  if (name === "git") return READ_GIT.has(args.find((arg) => !arg.startsWith("-")) ?? "");
  if (name === "awk") return !/>/.test(args.join(" "));
  return READ_PROGRAMS.has(name) && !/(^|[^>&2])>/.test(command);
}

export function isReadOnlyCommand(command: string): boolean {
  const pieces = command.split(/\|\||&&|;|\||\n/).filter((piece) => piece.trim() !== "");
  if (pieces.length === 0) return false;
  if (pieces.every((piece) => words(piece)[0] === "cd")) return false;
  return pieces.every(isReadOnlySimple);
}
