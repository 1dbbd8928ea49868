import { describe, expect, it } from "vitest";
import { commandProgram, isReadOnlyCommand } from "../../src/facts/command-name.js";
import { simpleCommands } from "../../src/util/shell-words.js";

describe("commandProgram", () => {
  it.each([
    ["grep -rn foo src", "grep"],
    ["cd /testbed && sed -n '1,20p' a.py", "sed"],
    ["cd /testbed; cd sub && python -m pytest -x", "python"],
    ["FOO=1 BAR='a b' python3 x.py", "python3"],
    ["env -i PATH=/bin HOME=/ /usr/bin/python3 -c 'print(1)'", "python3"],
    ["sudo -u root apt-get install -y x", "apt-get"],
    ["timeout 10 pytest tests/", "pytest"],
    ["timeout -s KILL 5s make", "make"],
    ["grep -c x file | head -1", "grep"],
    ["git diff && git status", "git"],
    ['"/opt/my tools/run" --fast', "run"],
    ["cat <<'EOF' > a.txt\nhello && rm -rf /\nEOF\nls", "cat"],
    ["(cd src && make)", "make"],
    ["# look first\nls -la", "ls"],
    ["export PYTHONPATH=. && source venv/bin/activate && pytest", "pytest"],
    ["cd /testbed", "cd"],
    ["", "bash"],
    ["   ", "bash"],
    ["nohup nice -n 5 ./run.sh &", "run.sh"],
    ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff", "echo"],
    ["python -c \"import a; print('x && y')\" | tee out", "python"],
    ["2>/dev/null ls", "ls"],
    ["$(which python) x.py", "$(which python)"],
  ])("%j → %s", (command, program) => {
    expect(commandProgram(command)).toBe(program);
  });
});

describe("isReadOnlyCommand", () => {
  it.each([
    ["cat a.py", true],
    ["cd /testbed && grep -rn 'def f' src | head -20", true],
    ["sed -n '10,40p' a.py", true],
    ["nl -ba a.py | sed -n '1,5p'", true],
    ["find . -name '*.py' -not -path './.git/*'", true],
    ["ls -la 2>&1", true],
    ["git log --oneline -5 && git -C sub status", true],
    ["rg foo 2>/dev/null || true", true],
    ["find . -name x | xargs grep -l foo", true],
    ["sed -i 's/a/b/' a.py", false],
    ["sed -n -i 's/a/b/p' a.py", false],
    ["sed 's/a/b/' a.py", false],
    ["cat a > b", false],
    ["echo hi >> log", false],
    ["find . -name '*.pyc' -delete", false],
    ["find . -exec rm {} +", false],
    ["git commit -am x", false],
    ["git checkout main", false],
    ["python x.py", false],
    ["ls && rm a", false],
    ["cat <<'EOF' > a.txt\nx\nEOF", false],
    ["grep x f | tee out", false],
    ["", false],
  ])("%j → %s", (command, readOnly) => {
    expect(isReadOnlyCommand(command)).toBe(readOnly);
  });
});

describe("simpleCommands", () => {
  it("keeps operators inside quotes and records redirections", () => {
    const commands = simpleCommands(`grep "a|b && c" f 2>&1 > out; echo 'x;y'`);
    expect(commands.map((c) => c.words)).toEqual([
      ["grep", "a|b && c", "f"],
      ["echo", "x;y"],
    ]);
    expect(commands[0]?.redirections).toEqual([
      { op: "2>&", target: "1" },
      { op: ">", target: "out" },
    ]);
    expect(commands[0]?.next).toBe(";");
  });

  it("skips heredoc bodies and never throws on an unterminated quote", () => {
    expect(simpleCommands("cat <<EOF\nrm -rf /\nEOF\nls").map((c) => c.words[0])).toEqual(["cat", "ls"]);
    expect(simpleCommands("echo 'unterminated").map((c) => c.words)).toEqual([["echo", "unterminated"]]);
  });
});
