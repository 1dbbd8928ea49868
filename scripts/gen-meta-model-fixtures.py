#!/usr/bin/env python3
"""Regenerate the fixtures of mini-swe-agent's "meta" models (test/fixtures/providers/meta/).

mini-swe-agent 2.4.6 ships RouletteModel and InterleavingModel (minisweagent/models/extra/roulette.py): each
call goes to one of the sub-models built from `model_kwargs` (a list of model configs), at random or by
`sequence`, and the answer is recorded with the sub-model's `model_name`. This script runs them with mini's
own DefaultAgent and LocalEnvironment on scripted sub-models and writes:

    meta/cases.json                 the cases: model config, task, agent config
    meta/<case>.traj.json           mini-swe-agent's trajectory of the case
    meta/unpatched.json             what mini-swe-agent 2.4.6 does with these classes as released

As released, the two classes lack `format_message` and `format_observation_messages`, which mini's own
DefaultAgent calls before the first model call: a run stops with AttributeError and writes no trajectory
(unpatched.json records the error). To see what the classes do with a conversation, this script gives them
the two methods the way a fix would: prompts formatted by the first sub-model, observations by the sub-model
that answered. Everything else (selection, `model_name`, costs, template variables, serialization) is mini's
code as released. swerun's test (test/models/meta-models.test.ts) compares with these files without Python.

Usage (a virtualenv with mini-swe-agent 2.4.6, e.g. /work/venv-providers):
    /work/venv-providers/bin/python scripts/gen-meta-model-fixtures.py          # rewrite the fixtures
    /work/venv-providers/bin/python scripts/gen-meta-model-fixtures.py --check  # exit 1 if out of date
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import shutil
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "test" / "fixtures" / "providers" / "meta"

_CONFIG_DIR = tempfile.mkdtemp(prefix="meta-fixtures-config-")
for _name in list(os.environ):
    if _name.startswith(("MSWEA_", "LITELLM_")):
        del os.environ[_name]
os.environ.update({"MSWEA_SILENT_STARTUP": "1", "MSWEA_CONFIGURED": "1", "MSWEA_GLOBAL_CONFIG_DIR": _CONFIG_DIR})

import minisweagent  # noqa: E402
from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.models import get_model  # noqa: E402
from minisweagent.models.extra import roulette  # noqa: E402

ROULETTE = "minisweagent.models.extra.roulette.RouletteModel"
INTERLEAVING = "minisweagent.models.extra.roulette.InterleavingModel"
TOOLCALL = "minisweagent.models.test_models.DeterministicToolcallModel"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && printf 'patch\\n'"
AGENT = {
    "system_template": "You are a scripted test agent ({{model_name}}, {{model_kwargs|length}} models).",
    "instance_template": "Task: {{task}}",
    "step_limit": 20,
    "cost_limit": 30.0,
}


def text(content: str, command: str, cost: float) -> dict:
    return {"role": "assistant", "content": content, "extra": {"actions": [{"command": command}], "cost": cost}}


def toolcall(content: str | None, calls: list[tuple[str, str]], cost: float) -> dict:
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": c})}}
            for cid, c in calls
        ],
        "extra": {"actions": [{"command": c, "tool_call_id": cid} for cid, c in calls], "cost": cost},
    }


CASES: list[dict[str, Any]] = [
    {
        "name": "interleaving-sequence",
        "task": "Two text models, the first twice for each call of the second.",
        "model": {
            "model_name": "interleaving",
            "model_class": INTERLEAVING,
            "sequence": [0, 0, 1],
            "model_kwargs": [
                {
                    "model_name": "scripted-a",
                    "model_class": "deterministic",
                    "cost_per_call": 0.25,
                    "outputs": [
                        text("A first.", "echo a1", 0.5),
                        text("A second.", "echo a2; exit 3", 0.5),
                        text("A third: submit.", SUBMIT, 0.5),
                    ],
                },
                {
                    "model_name": "scripted-b",
                    "model_class": "deterministic",
                    "observation_template": "[b] {{output.returncode}}: {{output.output}}",
                    "outputs": [text("B only.", "echo b1", 2.0)],
                },
            ],
        },
    },
    {
        "name": "interleaving-alternate",
        "task": "Two tool-call models, in turn.",
        "model": {
            "model_name": "interleaving",
            "model_class": INTERLEAVING,
            "model_kwargs": [
                {
                    "model_name": "caller-one",
                    "model_class": TOOLCALL,
                    "outputs": [
                        toolcall("Two at once.", [("call_1a", "echo one"), ("call_1b", "echo two")], 0.1),
                        toolcall(None, [("call_1c", SUBMIT)], 0.1),
                    ],
                },
                {
                    "model_name": "caller-two",
                    "model_class": TOOLCALL,
                    "observation_template": "two says {{output.returncode}}",
                    "outputs": [toolcall("Mine.", [("call_2a", "printf 'x\\ny\\n'")], 0.3)],
                },
            ],
        },
    },
    {
        "name": "roulette",
        "task": "Random choice among three models (the order depends on the random draw).",
        "seed": 7,
        "model": {
            "model_name": "roulette",
            "model_class": ROULETTE,
            "model_kwargs": [
                {
                    "model_name": f"wheel-{i}",
                    "model_class": "deterministic",
                    "outputs": [text(f"Wheel {i}, call {n}.", SUBMIT if n == 2 else f"echo {i}{n}", 0.5 + i) for n in range(3)],
                }
                for i in range(3)
            ],
        },
    },
]


def _format_message(self, **kwargs) -> dict:
    return self.models[0].format_message(**kwargs)


def _format_observation_messages(self, message: dict, outputs: list[dict], template_vars: dict | None = None):
    answered = next((m for m in self.models if m.config.model_name == message.get("model_name")), self.models[0])
    return answered.format_observation_messages(message, outputs, template_vars)


def run_case(case: dict) -> dict:
    random.seed(case.get("seed", 0))
    workdir = tempfile.mkdtemp(prefix="meta-fixture-")
    previous = os.getcwd()
    os.chdir(workdir)
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            model = get_model(config=json.loads(json.dumps(case["model"])))
            agent = DefaultAgent(model, LocalEnvironment(cwd=workdir), **{**AGENT, **case.get("agent", {})})
            agent.run(case["task"])
        data = agent.serialize()
    finally:
        os.chdir(previous)
        shutil.rmtree(workdir, ignore_errors=True)
    text = json.dumps(data).replace(workdir, "<workdir>")
    return json.loads(re.sub(r'"timestamp": [0-9.e+-]+', '"timestamp": 0', text))


def unpatched() -> dict:
    """mini-swe-agent 2.4.6 as released: the agent stops before its first model call."""
    results = {}
    for case in CASES:
        model = get_model(config=json.loads(json.dumps(case["model"])))
        agent = DefaultAgent(model, LocalEnvironment(), **AGENT)
        try:
            agent.run(case["task"])
            results[case["name"]] = {"error": None}
        except Exception as error:  # noqa: BLE001 - the error is what is recorded
            results[case["name"]] = {"error": f"{type(error).__name__}: {error}", "messages": len(agent.messages)}
    return results


def dump(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def main(argv: list[str]) -> int:
    files: dict[Path, bytes] = {
        FIXTURES / "cases.json": dump({"agent": AGENT, "cases": CASES}),
        FIXTURES / "unpatched.json": dump({"mini_version": minisweagent.__version__, "runs": unpatched()}),
    }
    roulette.RouletteModel.format_message = _format_message
    roulette.RouletteModel.format_observation_messages = _format_observation_messages
    for case in CASES:
        files[FIXTURES / f"{case['name']}.traj.json"] = dump(run_case(case))
    if "--check" in argv:
        stale = [str(path) for path, data in files.items() if not path.exists() or path.read_bytes() != data]
        for path in stale:
            print(f"out of date: {path}", file=sys.stderr)
        return 1 if stale else 0
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for path, data in files.items():
        path.write_bytes(data)
    print(f"wrote {len(files)} files to {FIXTURES}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
