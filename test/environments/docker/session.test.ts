import type Docker from "dockerode";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DockerEnvironment, SESSION_MAX_COMMAND } from "../../../src/environments/docker/environment.js";
import { containerProcesses, describeDocker, dockerFixture, dockerTestConfig } from "../../helpers/docker.js";
import type { TestImages } from "../../helpers/docker-images.js";

const RUN_ID = `docker-session-test-${process.pid}`;

function create(image: string, extra: Record<string, unknown> = {}, onProgress?: (line: string) => void) {
  return DockerEnvironment.create(dockerTestConfig(image, { timeout: 20, ...extra }), {
    runId: RUN_ID,
    onProgress,
  });
}

/** How many execs the daemon created in the container since `since` (its own event log). */
async function execsCreated(docker: Docker, containerId: string, since: number): Promise<number> {
  const stream = (await docker.getEvents({
    since,
    until: Math.ceil(Date.now() / 1000) + 1,
    filters: { container: [containerId], event: ["exec_create"] },
  })) as unknown as NodeJS.ReadableStream;
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text.split("\n").filter(Boolean).length;
}

/** Commands whose output a shell session could get wrong: escapes, stdin, fake end lines, background output. */
const AWKWARD = [
  "printf '%s\\n' '100%' 'a\\tb' '\\c'; echo 'x\\cy'; echo back\\\\slash",
  "echo trailing; echo; echo\n\n\n",
  "cat <<'EOF'\nno newline after the delimiter \\n\nEOF",
  "echo 'héllo ✓ 日本'; printf 'cr\\rlf\\r\\n'",
  'cat; read line; echo "stdin is empty: $?"',
  "printf '\\n0123456789abcdef 0\\nstill the same action\\n'",
  "mkdir -p '/tmp/a b' && cd '/tmp/a b' && pwd",
  "(sleep 1; echo late) & echo now",
  "kill 0; echo never",
  // Signals as an exec's process has them (a background job of a shell would ignore SIGINT and SIGQUIT).
  "grep -E '^Sig(Ign|Blk)' /proc/self/status",
  // A session of its own, as each exec has.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax
  'read -r stat < /proc/self/stat; set -- ${stat##*) }; [ "$4" = $$ ] && echo "session leader"',
  "echo before; (sleep 0.3; echo after) & exit 3",
  "exit 7",
  "",
  "echo 'a line that is only a nonce-like word:'\n0123456789abcdef0123456789abcdef\necho done",
];

/** Runs every awkward command in both: the session must give exactly what one exec per action gives. */
async function expectSameAsExec(inSession: DockerEnvironment, inExec: DockerEnvironment): Promise<void> {
  for (const command of AWKWARD) {
    const [ours, theirs] = [await inSession.execute({ command }), await inExec.execute({ command })];
    expect({ command, output: ours.output, returncode: ours.returncode }).toEqual({
      command,
      output: theirs.output,
      returncode: theirs.returncode,
    });
  }
}

await describeDocker("DockerEnvironment's shell session (real daemon, real containers)", () => {
  let docker: Docker;
  let images: TestImages;
  /** The Perl loop (the base image has perl, as Debian's and Ubuntu's have) and the shell loop (no perl). */
  let session: DockerEnvironment;
  let shellLoop: DockerEnvironment;
  let exec: DockerEnvironment;

  beforeAll(async () => {
    ({ docker, images } = await dockerFixture());
    [session, shellLoop, exec] = await Promise.all([
      create(images.base, { exec_mode: "session" }),
      create(images.noPerl, { exec_mode: "session" }),
      create(images.base, { exec_mode: "exec" }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([session?.close(), shellLoop?.close(), exec?.close()]);
  });

  /** Both loops, by name, for tests that hold for each. */
  const loops = () =>
    [
      ["Perl", images.base, session],
      ["shell", images.noPerl, shellLoop],
    ] as const;

  it("runs every action in the container's PID 1 loop, without a single exec: Perl's where the image has perl, the shell's elsewhere", async () => {
    const pid1 = {
      // The lifetime in seconds, keep, the lifetime as configured, the interpreter.
      [images.base]: /^perl -e my \$s = "";.* 7200 0 2h bash -lc $/,
      [images.noPerl]: /^\/bin\/sh -c IFS= read -r l && eval "\$l" swerun-session bash -lc $/,
    };
    for (const [, image] of loops()) {
      const since = Math.floor(Date.now() / 1000) - 1;
      const fresh = await create(image);
      try {
        for (let i = 0; i < 10; i++) {
          expect((await fresh.execute({ command: `echo step ${i}` })).output).toBe(`step ${i}\n`);
        }
        expect(await execsCreated(docker, fresh.containerId, since)).toBe(0);
        const cmdline = await fresh.execute({ command: "tr '\\0' ' ' < /proc/1/cmdline" });
        expect(cmdline.output).toMatch(pid1[image] ?? "");
        // The five uname fields, read once at the session's start, are what uname says of each.
        const fields = await fresh.execute({ command: "uname -s; uname -n; uname -r; uname -v; uname -m" });
        const [system, node, release, version, machine] = fields.output.split("\n");
        expect(version).toContain(" ");
        expect(fresh.templateVars()).toMatchObject({ system, node, release, version, machine });
        // The Perl loop loads no module (POSIX's 2 MB would be copied by every fork).
        if (image === images.base)
          expect((await fresh.execute({ command: "grep -c '/auto/' /proc/1/maps" })).output).toBe("0\n");
      } finally {
        await fresh.close();
      }
    }
  });

  it("gives exactly the output and exit code of one exec per action, for commands that could confuse it", async () => {
    // The shell loop's output goes to `cat` through the FIFO the session made (its read end is PID 1's fd 8).
    expect((await shellLoop.execute({ command: "readlink /proc/1/fd/8" })).output).toMatch(
      /^\/tmp\/\.swerun-output-1-1 \(deleted\)\n$/,
    );
    for (const [, , loop] of loops()) {
      await expectSameAsExec(loop, exec);
      expect((await loop.execute({ command: AWKWARD[5] ?? "" })).output).toBe(
        "\n0123456789abcdef 0\nstill the same action\n",
      );
      expect((await loop.execute({ command: "pwd" }, { cwd: "/tmp/a b" })).output).toBe("/tmp/a b\n");
      await loop.execute({ command: "mkdir -p '/tmp/new\nline'" });
      expect((await loop.execute({ command: "pwd" }, { cwd: "/tmp/new\nline" })).output).toBe(
        "/tmp/new\nline\n",
      );
    }
    // Variables whose values hold what a shell or the Perl loop's framing could misread.
    const env = { A: "it's $HOME `x` \\n", B: "line\nbreak", C: "", D: "=x= y" };
    const command = 'printf \'[%s]\' "$A" "$B" "$C" "$D"';
    const withEnv = await Promise.all(
      [images.base, images.noPerl, images.base].map((image, index) =>
        create(image, { env, exec_mode: index === 2 ? "exec" : "session" }),
      ),
    );
    try {
      const outputs = await Promise.all(withEnv.map((environment) => environment.execute({ command })));
      // ($HOME is expanded from the host's, as mini-swe-agent expands `env` values with os.path.expandvars.)
      expect(outputs[2]?.output).toMatch(/^\[it's \S+ `x` \\n\]\[line\nbreak\]\[\]\[=x= y\]$/);
      expect(outputs[0]).toEqual(outputs[2]);
      expect(outputs[1]).toEqual(outputs[2]);
    } finally {
      await Promise.all(withEnv.map((environment) => environment.close()));
    }
  });

  it("gives the same through a pipe per action where it cannot make a FIFO (a read-only /tmp)", async () => {
    const readOnly = { container_options: { HostConfig: { ReadonlyRootfs: true } } };
    const [piped, execs] = await Promise.all([
      create(images.noPerl, { exec_mode: "session", ...readOnly }),
      create(images.base, { exec_mode: "exec", ...readOnly }),
    ]);
    try {
      expect(await piped.execute({ command: "readlink /proc/1/fd/8 || echo none" })).toMatchObject({
        output: "none\n",
      });
      await expectSameAsExec(piped, execs);
    } finally {
      await Promise.all([piped.close(), execs.close()]);
    }
  });

  it("keeps what a timed-out action left writing out of the next action's output", async () => {
    // `env -i` clears the marker: that writer outlives the timeout's kill; then the shell loop's `cat` is
    // killed, and the Perl loop is told to stop reading.
    const writer = "env -i /bin/sh -c 'while :; do echo junk; sleep 0.05; done' & echo started; sleep 307";
    for (const [name, , loop] of loops()) {
      const result = await loop.execute({ command: writer }, { timeout: 1 });
      expect({ name, ...result }).toMatchObject({ name, returncode: -1 });
      expect(result.output.startsWith("started\n")).toBe(true);
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(await loop.execute({ command: "echo clean" })).toMatchObject({
          output: "clean\n",
          returncode: 0,
        });
      }
      // Its output has no reader left: its next write ends it (SIGPIPE).
      const left = await loop.execute({
        command: "grep -l 'do echo jun[k]' /proc/[0-9]*/cmdline 2>/dev/null || echo none",
      });
      expect({ name, output: left.output }).toEqual({ name, output: "none\n" });
    }
  });

  it("runs a command longer than SESSION_MAX_COMMAND as an exec of its own in the shell loop, in the Perl loop as any", async () => {
    const lines = Array.from({ length: 1_000 }, (_, i) => `line ${i} `.padEnd(49, "x"));
    const command = `cat > /tmp/long <<'EOF'\n${lines.join("\n")}\nEOF\nwc -c < /tmp/long`;
    expect(command.length).toBeGreaterThan(SESSION_MAX_COMMAND);
    for (const [name, image] of loops()) {
      const since = Math.floor(Date.now() / 1000) - 1;
      const fresh = await create(image);
      try {
        expect(await fresh.execute({ command })).toMatchObject({ output: "50000\n", returncode: 0 });
        expect({ name, execs: await execsCreated(docker, fresh.containerId, since) }).toEqual({
          name,
          execs: name === "shell" ? 1 : 0,
        });
      } finally {
        await fresh.close();
      }
    }
  });

  it("outlives commands that signal PID 1 or every process, and answers the next action", async () => {
    // PID 1 takes no signal but SIGALRM, as the `sleep` of an exec container takes none.
    const command = "kill -9 1; kill -TERM 1; kill -INT 1; echo still here";
    for (const [, , loop] of loops())
      expect(await loop.execute({ command })).toEqual(await exec.execute({ command }));
    // The Perl loop starts no helper: the action that kills every other process goes on to its end.
    const everyProcess = "echo before; kill -9 -1; echo after";
    expect(await session.execute({ command: everyProcess })).toMatchObject({
      output: expect.stringMatching(/^before\n(.*\n)?after\n$/),
      returncode: 0,
    });
    // In the shell loop that includes the session's own `cat`: the action's output ends when it dies (with
    // or without "before", by who ran first), and the session goes on.
    const killed = await shellLoop.execute({ command: everyProcess });
    expect(["", "before\n"]).toContain(killed.output);
    for (const [, , loop] of loops()) {
      expect(await loop.execute({ command: "echo alive" })).toMatchObject({
        output: "alive\n",
        returncode: 0,
      });
    }
  });

  it("ends with its container after container_timeout", async () => {
    for (const [name, image] of loops()) {
      const started = Date.now();
      const short = await create(image, { container_timeout: "1" });
      expect((await short.execute({ command: "echo alive" })).output).toBe("alive\n");
      let error: unknown;
      while (!error && Date.now() - started < 30_000) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        error = await short.execute({ command: "true" }).then(
          () => undefined,
          (caught: unknown) => caught,
        );
      }
      expect({ name, error: String(error) }).toMatchObject({
        name,
        error: expect.stringMatching(
          /is gone or stopped \(.+\): its container_timeout \(1\) has passed: it ran \d+ s$/,
        ),
      });
      expect(Date.now() - started).toBeGreaterThan(1_000);
      await short.close();
    }
  });

  it("lets an action run to its end when swerun's connection closes with keep_container (the Perl loop)", async () => {
    const kept = await create(images.base, { keep_container: true });
    const container = docker.getContainer(kept.containerId);
    try {
      const running = kept.execute({ command: "sleep 1.5; echo done > /tmp/kept" }).catch(() => undefined);
      const sleeping = async () => (await containerProcesses(container)).includes("sleep 1.5");
      for (let wait = 0; wait < 100 && !(await sleeping()); wait++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await kept.close();
      await running;
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      // The file the action wrote after the connection closed is there (getArchive fails on a missing path).
      await expect(container.getArchive({ path: "/tmp/kept" })).resolves.toBeDefined();
      expect((await container.inspect()).State.Running).toBe(true);
    } finally {
      await container.remove({ force: true });
    }
  });

  /** The base image changed by a bash script (which must succeed), committed as swerun-test/<name>:<pid>. */
  const variant = async (name: string, change: string) => {
    const builder = await docker.createContainer({
      Image: images.base,
      Cmd: ["bash", "-c", change],
      HostConfig: { NetworkMode: "none" },
    });
    await builder.start();
    expect((await builder.wait()).StatusCode).toBe(0);
    await builder.commit({ repo: `swerun-test/${name}`, tag: String(process.pid) });
    await builder.remove({ force: true });
    return `swerun-test/${name}:${process.pid}`;
  };

  it("runs the Perl loop where perl has no POSIX module (the loop loads none), the shell loop where perl does not start", async () => {
    const cases = [
      [
        await variant("no-posix", "rm /usr/lib/*/perl-base/POSIX.pm && ! perl -MPOSIX -e 1 2>/dev/null"),
        /\/perl\n$/,
      ],
      [
        await variant(
          "broken-perl",
          "p=$(command -v perl) && rm $p && printf '#!/bin/sh\\nexit 1\\n' >$p && chmod +x $p",
        ),
        /\/(dash|bash)\n$/,
      ],
    ] as const;
    for (const [tag, pid1] of cases) {
      const environment = await create(tag);
      try {
        expect(environment.serialize().environment.exec_mode).toBe("session");
        expect((await environment.execute({ command: "readlink /proc/1/exe" })).output).toMatch(pid1);
        expect(await environment.execute({ command: "echo works; exit 4" })).toMatchObject({
          output: "works\n",
          returncode: 4,
        });
      } finally {
        await environment.close();
        await docker.getImage(tag).remove({ force: true });
      }
    }
  });

  it("falls back to one exec per action, saying so, when the image's /bin/sh cannot run the session", async () => {
    // An image whose /bin/sh refuses the session's bootstrap but runs everything else.
    const tag = await variant(
      "no-session",
      `printf '%s\\n' '#!/bin/bash' '[[ "$2" == *"read -r l"* ]] && { echo "no sessions here" >&2; exit 2; }' 'exec /bin/bash "$@"' > /bin/sh.wrapper && chmod +x /bin/sh.wrapper && mv -f /bin/sh.wrapper /bin/sh`,
    );
    const lines: string[] = [];
    const fallback = await create(tag, {}, (line) => lines.push(line));
    try {
      expect(lines).toEqual([
        `Docker image ${tag}: its /bin/sh did not start swerun's shell session; running one exec per action (exec_mode: exec)`,
      ]);
      expect(fallback.serialize().environment.exec_mode).toBe("exec");
      expect(await fallback.execute({ command: "echo works; exit 4" })).toMatchObject({
        output: "works\n",
        returncode: 4,
      });
      expect(fallback.templateVars()).toMatchObject({ system: "Linux" });
    } finally {
      await fallback.close();
      await docker.getImage(tag).remove({ force: true });
    }
  });

  it("falls back to a `sleep` container from PATH and one exec per action when the image has no /bin/sh", async () => {
    const lines: string[] = [];
    const noShell = await create(images.noShell, {}, (line) => lines.push(line));
    try {
      expect(lines).toEqual([
        `Docker image ${images.noShell}: it has no /bin/sh for swerun's shell session; running one exec per action (exec_mode: exec)`,
      ]);
      expect(noShell.serialize().environment.exec_mode).toBe("exec");
      // stdout and stderr arrive on two pipes here (no shell to merge them), so their order may swap.
      const both = await noShell.execute({
        command: "test -e /bin/sh || echo no sh; echo to-stderr >&2; exit 4",
      });
      expect({ ...both, output: both.output.split("\n").sort() }).toEqual({
        output: ["", "no sh", "to-stderr"],
        returncode: 4,
        exception_info: "",
        extra: {},
      });
      expect(
        await noShell.execute({
          command: "while IFS= read -r -d '' a; do printf '%s ' \"$a\"; done < /proc/1/cmdline",
        }),
      ).toMatchObject({
        output: "sleep 2h ",
      });
      const started = Date.now();
      const timedOut = await noShell.execute({ command: "echo begun; sleep 300" }, { timeout: 1 });
      expect(timedOut).toMatchObject({ returncode: -1, output: "begun\n" });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await noShell.execute({ command: "echo next" })).output).toBe("next\n");
    } finally {
      await noShell.close();
    }
  });
});
