import { type SimpleCommand, simpleCommands } from "../util/shell-words.js";

/** Commands that only set up the shell for the command that follows them; the name skips past them. */
const SETUP = new Set(["cd", "pushd", "popd", "export", "set", "unset", "source", ".", "ulimit", "umask"]);

/** Wrappers that run the command given after their own options; the name is that command's. */
const WRAPPERS: Record<string, { withValue: Set<string>; positional: number }> = {
  env: { withValue: new Set(["-u", "--unset", "-C", "--chdir", "-S", "--split-string"]), positional: 0 },
  sudo: {
    withValue: new Set([
      "-u",
      "--user",
      "-g",
      "--group",
      "-h",
      "--host",
      "-p",
      "--prompt",
      "-C",
      "-D",
      "-r",
      "-t",
    ]),
    positional: 0,
  },
  timeout: { withValue: new Set(["-s", "--signal", "-k", "--kill-after"]), positional: 1 },
  nice: { withValue: new Set(["-n", "--adjustment"]), positional: 0 },
  nohup: { withValue: new Set(), positional: 0 },
  time: { withValue: new Set(["-f", "--format", "-o", "--output"]), positional: 0 },
  command: { withValue: new Set(), positional: 0 },
  exec: { withValue: new Set(["-a"]), positional: 0 },
  stdbuf: { withValue: new Set(["-i", "-o", "-e"]), positional: 0 },
};

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;

/** The words of a simple command from its program on: variable assignments and wrappers skipped. */
function programWords(words: string[]): string[] {
  let index = 0;
  while (index < words.length && ASSIGNMENT.test(words[index] as string)) index += 1;
  for (;;) {
    const name = basename(words[index] ?? "");
    const wrapper = WRAPPERS[name];
    if (!wrapper || index + 1 >= words.length) break;
    index += 1;
    let positional = wrapper.positional;
    while (index < words.length) {
      const word = words[index] as string;
      if (word === "--") {
        index += 1;
        break;
      }
      if (word.startsWith("-") && word.length > 1) {
        index += wrapper.withValue.has(word) ? 2 : 1;
      } else if (name === "env" && ASSIGNMENT.test(word)) {
        index += 1;
      } else if (positional > 0) {
        positional -= 1;
        index += 1;
      } else break;
    }
  }
  return words.slice(index);
}

function basename(word: string): string {
  const trimmed = word.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1) || trimmed;
}

/** A simple command's program name ("" when it only assigns variables or only redirects). */
function programOf(command: SimpleCommand): string {
  const first = programWords(command.words)[0];
  return first === undefined ? "" : basename(first);
}

/**
 * The name a dashboard shows for a bash command: its program. It is the first word of the first command
 * of the line, after variable assignments (`FOO=1`), wrappers and their options (`env`, `sudo`,
 * `timeout 10`, `nice`, `nohup`, `time`, `command`, `exec`, `stdbuf`) and any directory (`/usr/bin/python3`
 * → `python3`); commands that only prepare the shell (`cd`, `pushd`, `export`, `source`, `set`, ...) are
 * skipped when something follows them (`cd /repo && git status` → `git`). Quotes are removed, and of a
 * pipeline the first command counts (`grep x f | head` → `grep`). An empty command is `bash`.
 */
export function commandProgram(line: string): string {
  const commands = simpleCommands(line);
  const programs = commands.map(programOf).filter((program) => program !== "");
  return programs.find((program) => !SETUP.has(program)) ?? programs[0] ?? "bash";
}

/** Programs that read and never write (their options are checked where some of them write). */
const READ_ONLY = new Set([
  "cat",
  "head",
  "tail",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "ag",
  "ls",
  "ll",
  "tree",
  "nl",
  "wc",
  "pwd",
  "echo",
  "printf",
  "file",
  "stat",
  "du",
  "df",
  "which",
  "type",
  "whereis",
  "diff",
  "cmp",
  "sort",
  "uniq",
  "cut",
  "tr",
  "column",
  "less",
  "more",
  "od",
  "xxd",
  "hexdump",
  "strings",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "true",
  "false",
  "test",
  "[",
  "[[",
  "date",
  "whoami",
  "id",
  "uname",
  "env",
  "printenv",
  "cd",
  "pushd",
  "popd",
  "sleep",
]);

/** `git` subcommands that only read the repository. */
const GIT_READ_ONLY = new Set([
  "show",
  "log",
  "diff",
  "status",
  "blame",
  "grep",
  "ls-files",
  "ls-tree",
  "rev-parse",
  "describe",
  "shortlog",
  "cat-file",
]);
/** git options that take a value before the subcommand. */
const GIT_VALUE_OPTIONS = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace"]);

const FIND_WRITES = new Set([
  "-delete",
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls",
]);

function writesFile(command: SimpleCommand): boolean {
  return command.redirections.some(
    ({ op, target }) =>
      op.includes(">") && !op.endsWith("&") && target !== "/dev/null" && !/^&?\d*-?$/.test(target),
  );
}

function isReadOnlySimple(command: SimpleCommand): boolean {
  if (writesFile(command)) return false;
  const words = programWords(command.words);
  const program = basename(words[0] ?? "");
  const args = words.slice(1);
  if (program === "") return command.words.length === 0;
  if (program === "sed") {
    return (
      args.some(
        (arg) =>
          arg === "-n" || arg === "--quiet" || arg === "--silent" || /^-[a-zA-Z]*n[a-zA-Z]*$/.test(arg),
      ) &&
      !args.some((arg) => arg.startsWith("-i") || arg.startsWith("--in-place") || /^-[a-zA-Z]*i/.test(arg))
    );
  }
  if (program === "git") {
    let index = 0;
    while (index < args.length && (args[index] as string).startsWith("-")) {
      index += GIT_VALUE_OPTIONS.has(args[index] as string) ? 2 : 1;
    }
    return GIT_READ_ONLY.has(args[index] ?? "");
  }
  if (program === "find") return !args.some((arg) => FIND_WRITES.has(arg));
  if (program === "xargs") {
    let index = 0;
    while (index < args.length && (args[index] as string).startsWith("-")) {
      index += /^-[nIPLdsE]$/.test(args[index] as string) ? 2 : 1;
    }
    const rest = args.slice(index);
    return rest.length > 0 && isReadOnlySimple({ words: rest, redirections: [], next: "" });
  }
  return READ_ONLY.has(program);
}

/**
 * Whether a bash command only reads: every command of the line (pipelines and `&&` chains included) is
 * a reading program (`cat`, `head`, `tail`, `grep`, `rg`, `find` without `-exec`/`-delete`, `ls`, `nl`,
 * `wc`, `sed -n` without `-i`, `git show/log/diff/status/blame/grep/ls-files/...`, ...) and nothing is
 * redirected into a file (`> /dev/null` and `2>&1` are fine). Run-tracking metrics share this rule.
 */
export function isReadOnlyCommand(line: string): boolean {
  const commands = simpleCommands(line);
  return commands.length > 0 && commands.every(isReadOnlySimple);
}
