#!/usr/bin/env python3
"""Regenerate what mini-swe-agent's bubblewrap environment returns, for swerun's tests (test/fixtures/bubblewrap/).

Runs mini-swe-agent 2.4.6's own BubblewrapEnvironment (installed in a scratch virtualenv, see
/work/shared/reference/README.md; needs Debian's `bubblewrap`) on each case of CASES and records its
`execute()` result in test/fixtures/bubblewrap/cases.json, after what it records for an environment with no
keys set (`defaults`: its serialize(), i.e. its config defaults and environment_type). A case has:

    config      the environment's keys (besides cwd); mini-swe-agent's defaults for the rest
    files       files written into the working directory before the command
    host_env    variables set in the process environment (the sandbox inherits it) while the case runs
    cwd         "{cwd}": a fresh temporary directory; otherwise that path as given
    command     the action
    expected    output, returncode, exception_info (and extra), with the working directory written "{cwd}"
    after       the working directory's files after the command (path -> text)
    swerun      where swerun differs on purpose ("start": refused before the run starts; "message":
                swerun's own timeout text), else absent

Usage (the virtualenv's python, `pip install mini-swe-agent==2.4.6`; as root, as the tests run in CI):
    ref/bin/python scripts/gen-bubblewrap-fixtures.py          # rewrite the fixture
    ref/bin/python scripts/gen-bubblewrap-fixtures.py --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
os.environ.setdefault("MSWEA_CONFIGURED", "1")
os.environ.setdefault("MSWEA_GLOBAL_CONFIG_DIR", tempfile.mkdtemp(prefix="mswea-config-"))
os.environ.pop("MSWEA_BUBBLEWRAP_EXECUTABLE", None)

import minisweagent  # noqa: E402
from minisweagent.environments import get_environment  # noqa: E402

FIXTURE = Path(__file__).resolve().parent.parent / "test" / "fixtures" / "bubblewrap" / "cases.json"

CASES: list[dict] = [
    {"name": "exit-code-and-order", "command": "echo 1; echo 2 >&2; echo 3; echo 4 >&2; exit 4"},
    {"name": "cwd", "command": "pwd"},
    {"name": "runs-bash", "command": 'echo "$0"'},
    {"name": "default-path", "command": 'echo "$PATH"'},
    {
        "name": "env-and-inherited",
        "config": {"env": {"A": "1", "B": "two words", "PATH": "/usr/bin:/bin"}},
        "host_env": {"SWERUN_FIXTURE_INHERITED": "inherited"},
        "command": 'echo "$A|$B|$PATH|$SWERUN_FIXTURE_INHERITED"',
    },
    {
        "name": "working-copy",
        "files": {"a.txt": "content\n"},
        "command": "cat a.txt; echo new > b.txt; mkdir -p sub && echo deep > sub/c.txt; rm a.txt",
    },
    {
        "name": "outside-the-allowed-paths",
        "command": (
            "touch /usr/swerun-probe; touch /etc/swerun-probe; touch /root/swerun-probe; "
            "touch /var/swerun-probe; touch /swerun-probe; echo in-tmp > /tmp/swerun-probe && cat /tmp/swerun-probe"
        ),
    },
    {
        "name": "own-session",
        "command": 'read -r pid comm state ppid pgrp session rest < /proc/$$/stat; [ "$session" = "$$" ] && echo own session',
    },
    {"name": "syntax-error", "command": "echo never; if"},
    {"name": "line-numbers", "command": "true\nno-such-command-swerun"},
    {"name": "carriage-returns", "command": "printf 'a\\r\\nb\\rc\\r\\r\\nd'"},
    {"name": "not-utf-8", "command": "printf 'a\\377b\\303\\050c'"},
    {"name": "killed-by-signal", "command": "kill -TERM $$"},
    {"name": "missing-cwd", "cwd": "/nonexistent/swerun-bwrap", "command": "true"},
    {
        "name": "timeout",
        "config": {"timeout": 1},
        "command": "echo started; sleep 30",
        "swerun": "message",
    },
    {"name": "bad-wrapper-args", "config": {"wrapper_args": ["--bogus"]}, "command": "true", "swerun": "start"},
]


def read_tree(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): path.read_text()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def run_case(case: dict) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="swerun-bwrap-fixture-"))
    for name, text in case.get("files", {}).items():
        (workdir / name).write_text(text)
    cwd = str(workdir) if case.get("cwd", "{cwd}") == "{cwd}" else case["cwd"]
    saved = {name: os.environ.get(name) for name in case.get("host_env", {})}
    os.environ.update(case.get("host_env", {}))
    try:
        config = {"environment_class": "bubblewrap", "cwd": cwd, **case.get("config", {})}
        env = get_environment(config)
        result = env.execute({"command": case["command"]})
        env.cleanup()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    text = json.dumps(result).replace(str(workdir), "{cwd}")
    recorded = {**case, "expected": json.loads(text)}
    if case.get("cwd", "{cwd}") == "{cwd}":
        recorded["after"] = read_tree(workdir)
    shutil.rmtree(workdir)
    return recorded


def defaults() -> dict:
    """What mini-swe-agent records for a bubblewrap environment with no keys set (its serialize())."""
    env = get_environment({"environment_class": "bubblewrap"})
    recorded = env.serialize()["info"]["config"]
    env.cleanup()
    return recorded


def main(argv: list[str]) -> int:
    bwrap = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    data = {
        "mini_version": minisweagent.__version__,
        "bwrap_version": bwrap,
        "root": os.geteuid() == 0,
        "defaults": defaults(),
    "cases": [run_case(case) for case in CASES],
    }
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if "--check" in argv:
        if not FIXTURE.exists() or FIXTURE.read_text() != text:
            print(f"{FIXTURE} is out of date", file=sys.stderr)
            return 1
        return 0
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(text)
    print(f"wrote {FIXTURE} ({len(CASES)} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
