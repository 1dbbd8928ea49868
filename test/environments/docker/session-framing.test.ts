import { execFileSync, spawn } from "node:child_process";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ACTION_MARKER } from "../../../src/environments/docker/exec.js";
import { perlRequest, sessionCommand, sessionProgram } from "../../../src/environments/docker/session.js";
import {
  type ActionEnd,
  FORK_FAILED,
  PERL_END,
  parseReadyLine,
  READY,
  READY_PERL,
  SCRIPT_END,
  scanActionOutput,
} from "../../../src/environments/docker/session-framing.js";
import { tempDir } from "../../helpers/tmp.js";

const END = Buffer.from("\n0123456789abcdef0123456789abcdef ");

/** Feeds `stream` to the parser in pieces cut at `cuts`; returns the output and how the action ended. */
function feed(stream: string, cuts: number[]): { output: string; end?: ActionEnd; after: number } {
  const bytes = Buffer.from(stream, "latin1");
  let held: Buffer = Buffer.alloc(0);
  const output: Buffer[] = [];
  let from = 0;
  for (const to of [...cuts, bytes.length]) {
    const scan = scanActionOutput(held, bytes.subarray(from, to), END);
    output.push(scan.output);
    held = scan.held;
    if (scan.end) return { output: Buffer.concat(output).toString("latin1"), end: scan.end, after: to };
    from = to;
  }
  return { output: Buffer.concat(output).toString("latin1"), after: bytes.length };
}

describe("scanActionOutput", () => {
  const cases: Array<[string, string, ActionEnd]> = [
    ["plain output", "hello\n", { returncode: 0 }],
    ["no output", "", { returncode: 7 }],
    ["output without a final newline", "no newline", { returncode: 1 }],
    [
      "a fake end line with another nonce",
      "\nffffffffffffffffffffffffffffffff 0\nstill going\n",
      { returncode: 0 },
    ],
    ["the end's nonce without the space", "\n0123456789abcdef0123456789abcdef\n", { returncode: 3 }],
    ["bytes that are not UTF-8", "\xff\xfe\x00\n", { returncode: 137 }],
  ];

  it.each(cases)("splits %s from the end line, however the stream is cut", (_name, output, end) => {
    const code = "returncode" in end ? String(end.returncode) : FORK_FAILED;
    const stream = `${output}${END.toString("latin1")}${code}\n`;
    for (let cut = 0; cut <= stream.length; cut++) {
      expect(feed(stream, [cut])).toEqual({ output, end, after: stream.length });
    }
    // One byte at a time.
    const everyByte = Array.from({ length: stream.length }, (_, i) => i);
    expect(feed(stream, everyByte)).toEqual({ output, end, after: stream.length });
  });

  it("says when the loop could not fork to run the action", () => {
    expect(feed(`${END.toString("latin1")}${FORK_FAILED}\n`, [])).toEqual({
      output: "",
      end: { forkFailed: true },
      after: END.length + FORK_FAILED.length + 1,
    });
  });

  it("holds back as many bytes as could start the end line, and waits for the code's newline", () => {
    const text = `${"x".repeat(100)}\n0123`;
    const first = scanActionOutput(Buffer.alloc(0), Buffer.from(text), END);
    expect(first.held.length).toBe(END.length - 1);
    expect(Buffer.concat([first.output, first.held]).toString()).toBe(text);
    const partialEnd = scanActionOutput(first.held, Buffer.from("456789abcdef0123456789abcdef 12"), END);
    expect(partialEnd.end).toBeUndefined();
    expect(partialEnd.output.toString()).toBe("x".repeat(END.length - 1 - 5));
    const done = scanActionOutput(partialEnd.held, Buffer.from("5\n"), END);
    expect(done).toMatchObject({ end: { returncode: 125 } });
    expect(done.output.length).toBe(0);
  });
});

describe("parseReadyLine", () => {
  it("reads the container's uname fields", () => {
    expect(parseReadyLine(`${READY}\tLinux\thost\t6.1.0\t#1 SMP PREEMPT_DYNAMIC Debian\tx86_64`)).toEqual({
      ready: true,
      loop: "sh",
      platform: {
        system: "Linux",
        node: "host",
        release: "6.1.0",
        version: "#1 SMP PREEMPT_DYNAMIC Debian",
        machine: "x86_64",
      },
    });
    expect(parseReadyLine(`${READY_PERL}\tLinux\th\t6.1.0\t#1 SMP\tx86_64`)).toMatchObject({
      ready: true,
      loop: "perl",
      platform: { node: "h", version: "#1 SMP" },
    });
  });

  it("is ready without the fields when uname is missing, and not ready on anything else", () => {
    expect(parseReadyLine(`${READY}\t\t\t\t\t`)).toEqual({ ready: true, loop: "sh", platform: {} });
    expect(parseReadyLine("sh: 1: eval: syntax error")).toEqual({ ready: false, loop: "sh", platform: {} });
    expect(parseReadyLine("")).toEqual({ ready: false, loop: "sh", platform: {} });
  });
});

describe("the session loops (shell/docker-session.sh and shell/docker-session.pl)", () => {
  const read = (name: string) =>
    readFileSync(join(import.meta.dirname, "..", "..", "..", "shell", name), "utf8");
  const script = read("docker-session.sh");
  const perl = read("docker-session.pl");

  it("are shipped with the package and speak the framing above", () => {
    const manifest = JSON.parse(
      readFileSync(join(import.meta.dirname, "..", "..", "..", "package.json"), "utf8"),
    );
    expect(manifest.files).toContain("shell");
    expect(script).toContain(`printf '${READY}\\t`);
    expect(script).toContain(`export ${ACTION_MARKER}`);
    expect(script).toContain(FORK_FAILED);
    expect(perl).toContain(`'${READY_PERL}'`);
    expect(perl).toContain(`$ENV{${ACTION_MARKER}}`);
    expect(perl).toContain(FORK_FAILED);
    // Neither holds a line the loader reads as an end (the loader reads both from stdin, unquoted).
    for (const text of [script, perl]) expect(text.split("\n")).not.toContain(SCRIPT_END);
    expect(perl.split("\n")).not.toContain(PERL_END);
  });

  const [shell = "", ...args] = sessionCommand(["sh", "-c"]);

  it("runs under the host's /bin/sh as the container's PID 1 runs it, the Perl loop where perl is: ready line, actions, end lines", async () => {
    const request = (nonce: string, cwd: string, env: string[], command: string) =>
      perlRequest(nonce, `marker${nonce}`, {
        command,
        env,
        workdir: cwd,
        timeoutSeconds: 1,
        maxOutputBytes: 1e6,
      });
    const input = Buffer.concat([
      Buffer.from(sessionProgram("60", false)),
      request(
        "n1",
        "/",
        ["c=not the command", "d=two\nlines"],
        'echo "$c"; echo "$d"; echo "$SWERUN_ACTION_ID"; exit 3',
      ),
      request("n2", "/tmp", [], "pwd; echo err >&2; kill -9 $$"),
      request("n3", "/nowhere", [], "echo never"),
      // The loop sets an action's variables and cwd in itself before it forks: a relative cwd is taken from
      // its own start, and variables are put back for the next action (the last of a repeated name wins).
      request("n4", "shell", ["HOME=/elsewhere", "c=once", "c=again"], 'pwd; echo "$HOME $c"'),
      request("n5", "shell", ["HOME=/elsewhere", "c=once", "c=again"], 'pwd; echo "$HOME $c"'),
      request("n6", "/", [], 'echo "$HOME [$c]"; read -r x; echo "read $?"'),
    ]);
    const here = realpathSync(join(process.cwd(), "shell"));
    // stdin stays open while the actions run, as swerun's connection does (its end would end the action).
    const child = spawn(shell, args, { stdio: ["pipe", "pipe", "inherit"] });
    let output = "";
    await new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString("latin1");
        if (output.endsWith("\nn6 0\n")) resolve();
      });
      child.once("close", () => resolve());
      child.stdin.write(input);
    });
    child.stdin.end();
    const [ready, ...rest] = output.split("\n");
    expect(parseReadyLine(ready ?? "")).toMatchObject({ ready: true, loop: "perl" });
    expect(rest.join("\n")).toBe(
      "not the command\ntwo\nlines\nmarkern1\n\nn1 3\n/tmp\nerr\n\nn2 137\n" +
        "swerun-session: cd: /nowhere: No such file or directory\n\nn3 2\n" +
        `${here}\n/elsewhere again\n\nn4 0\n${here}\n/elsewhere again\n\nn5 0\n` +
        `${process.env.HOME} []\nread 1\n\nn6 0\n`,
    );
  });

  it("runs the Perl loop without a module where perl is built for x86-64 or arm64, and the shell loop elsewhere", async () => {
    const loop = join(import.meta.dirname, "..", "..", "..", "shell", "docker-session.pl");
    /** Runs the Perl loop as the loader does (with perl's ELF header as `elf` when given), until `last` ends. */
    const run = async (input: Buffer | string, last: string, elf?: Buffer) => {
      const setup =
        'our $rest = ""; our $shell_loop = $ENV{SHELL_LOOP}; our $elf = $ENV{ELF} ? pack("H*", $ENV{ELF}) : undef; ' +
        "my $file = shift @ARGV; do $file; die $@ if $@";
      const child = spawn("perl", ["-e", setup, loop, "60", "0", "1m", "sh", "-c"], {
        stdio: ["pipe", "pipe", "inherit"],
        env: { ...process.env, SHELL_LOOP: script, ELF: elf?.toString("hex") ?? "" },
      });
      let output = "";
      // stdin stays open until the last action has ended, as swerun's connection does.
      await new Promise<void>((resolve) => {
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString("latin1");
          if (new RegExp(`\\n${last} \\d+\\n$`).test(output)) resolve();
        });
        child.once("close", () => resolve());
        child.stdin.write(input);
      });
      child.stdin.end();
      const [ready = "", ...rest] = output.split("\n");
      return { ready: parseReadyLine(ready), output: rest.join("\n") };
    };
    const request = (nonce: string, command: string) =>
      perlRequest(nonce, `marker${nonce}`, {
        command,
        env: [],
        workdir: "/",
        timeoutSeconds: 1,
        maxOutputBytes: 1e6,
      });
    const leader =
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax
      'read -r stat < /proc/self/stat; set -- ${stat##*) }; [ "$4" = $$ ] && echo "session leader"';
    // This machine: setsid and uname by their numbers, no module loaded (the action's parent is the loop).
    const here = await run(
      Buffer.concat([
        request("n1", leader),
        request("n2", "grep -c '[.]so' /proc/$PPID/maps; grep -c POSIX /proc/$PPID/maps"),
        // More than the 64 KiB the loop holds before it writes, in pieces, then its end line.
        request("n3", "yes abcdefghi | head -c 200000; echo; echo end"),
      ]),
      "n3",
    );
    expect(here.ready).toMatchObject({ ready: true, loop: "perl" });
    const uname = (flag: string) => execFileSync("uname", [flag], { encoding: "utf8" }).trim();
    expect(here.ready.platform).toEqual({
      system: uname("-s"),
      node: uname("-n"),
      release: uname("-r"),
      version: uname("-v"),
      machine: uname("-m"),
    });
    expect(here.output).toBe(
      `session leader\n\nn1 0\n${here.output.split("\n")[3]}\n0\n\nn2 1\n${"abcdefghi\n".repeat(20_000)}\nend\n\nn3 0\n`,
    );
    expect(here.output.split("\n")[3]).toMatch(/^[1-9]\d*$/);
    // A perl built for another machine (RISC-V's ELF header): the shell loop runs, in its own framing.
    const riscv = Buffer.alloc(20);
    Buffer.from("\x7fELF\x02\x01", "latin1").copy(riscv);
    riscv.writeUInt16LE(243, 18);
    const elsewhere = await run(
      `n1 markern1\n/tmp\nn1\n${leader}; pwd; echo "$SWERUN_ACTION_ID"\nn1\n`,
      "n1",
      riscv,
    );
    expect(elsewhere.ready).toMatchObject({ ready: true, loop: "sh", platform: { machine: uname("-m") } });
    expect(elsewhere.output).toBe("session leader\n/tmp\nmarkern1\n\nn1 0\n");
  });

  it("runs the shell loop where perl cannot load POSIX: ready line, actions, end lines", () => {
    const bin = tempDir();
    writeFileSync(join(bin, "perl"), "#!/bin/sh\nexit 2\n", { mode: 0o755 });
    const request = (nonce: string, cwd: string, exports: string, command: string) =>
      `${nonce} marker${nonce}\n${cwd}\n${exports}${nonce}\n${command}\n${nonce}\n`;
    const input =
      sessionProgram("60", false) +
      request("n1", "/", "export c='not the command'\n", 'echo "$c"; echo "$SWERUN_ACTION_ID"; exit 3') +
      request("n2", "/tmp", "", "pwd; echo err >&2");
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` };
    const output = execFileSync(shell, args, { input, encoding: "latin1", env });
    const [ready, ...rest] = output.split("\n");
    expect(parseReadyLine(ready ?? "")).toMatchObject({ ready: true, loop: "sh" });
    expect(rest.join("\n")).toBe("not the command\nmarkern1\n\nn1 3\n/tmp\nerr\n\nn2 0\n");
  });
});
