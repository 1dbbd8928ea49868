#!/usr/bin/env python3
"""Regenerate the mini-swe-agent parity corpus used by swerun's tests (test/fixtures/parity/).

Runs mini-swe-agent itself (2.x, installed in a scratch virtualenv, see /work/shared/reference/README.md)
on a set of scripted configs in its local environment and records what it wrote:

    test/fixtures/parity/cases.json            the cases: config layers, task, scripted replies
    test/fixtures/parity/configs/<name>.yaml   mini-swe-agent's shipped configs, copied unchanged (MIT),
                                               and configs written by PyYAML (aliases for repeated objects)
    test/fixtures/parity/expected/<case>.traj.json   mini-swe-agent's trajectory for the case
    test/fixtures/parity/expected/<case>.error.json  for a case marked `fails`: the exception mini-swe-agent
                                                     raised (it writes no trajectory) and its template line

A case's `configs` are layered in order (mini-swe-agent's recursive merge): a string names a file in
configs/, a mapping is inline. The agent is built as `mini` builds it (agent_class defaults to
`interactive`); every case runs in yolo mode without exit confirmation, in a fresh temporary directory.

Cases with `replies` use mini-swe-agent's litellm model classes (LitellmModel, LitellmTextbasedModel)
unchanged, with the `litellm` package replaced by a stand-in whose `completion()` returns the scripted
chat-completion responses in order (the same JSON swerun's tests serve from a local OpenAI-compatible
server) and whose cost calculation fails, so `cost_tracking: ignore_errors` records cost 0.0.

Usage (the virtualenv's python):
    ref/bin/python scripts/gen-parity-corpus.py          # rewrite the corpus
    ref/bin/python scripts/gen-parity-corpus.py --check  # exit 1 if anything is out of date
"""

from __future__ import annotations

import copy
import io
import json
import os
import re
import shutil
import sys
import tempfile
import traceback
import types
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent.parent / "test" / "fixtures" / "parity"

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
os.environ.setdefault("MSWEA_CONFIGURED", "1")
os.environ.setdefault("MSWEA_GLOBAL_CONFIG_DIR", tempfile.mkdtemp(prefix="mswea-config-"))
os.environ.pop("MSWEA_COST_TRACKING", None)
os.environ.pop("LITELLM_MODEL_REGISTRY_PATH", None)

# ---------------------------------------------------------------------------------------------------
# The litellm stand-in: scripted responses, no network.

_SCRIPT: list[dict] = []


class _Obj:
    """A response object with attribute access and `model_dump()`, like litellm's pydantic models."""

    def __init__(self, data: dict):
        self._data = data
        for key, value in data.items():
            setattr(self, key, _wrap(value))

    def __getattr__(self, _name: str) -> None:
        return None  # an absent field (e.g. `tool_calls`) reads as None, as in litellm's models

    def model_dump(self, **_kwargs) -> dict:
        return copy.deepcopy(self._data)


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return _Obj(value)
    if isinstance(value, list):
        return [_wrap(item) for item in value]
    return value


def _completion(**_kwargs):
    return _Obj(_SCRIPT.pop(0))


def _completion_cost(_response, model=None):
    raise ValueError(f"model {model} has no price (stand-in)")


class _LitellmError(Exception):
    pass


_litellm = types.ModuleType("litellm")
_litellm.completion = _completion
_litellm.exceptions = types.SimpleNamespace(
    UnsupportedParamsError=_LitellmError,
    NotFoundError=_LitellmError,
    PermissionDeniedError=_LitellmError,
    ContextWindowExceededError=_LitellmError,
    AuthenticationError=_LitellmError,
)
_litellm.cost_calculator = types.SimpleNamespace(completion_cost=_completion_cost)
_litellm.utils = types.SimpleNamespace(register_model=lambda _registry: None)
sys.modules["litellm"] = _litellm

import yaml  # noqa: E402

import minisweagent  # noqa: E402
from minisweagent.agents import get_agent  # noqa: E402
from minisweagent.config import builtin_config_dir  # noqa: E402
from minisweagent.environments import get_environment  # noqa: E402
from minisweagent.models import get_model  # noqa: E402
from minisweagent.utils.serialize import recursive_merge  # noqa: E402

# ---------------------------------------------------------------------------------------------------
# Case building blocks.

SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
YOLO = {"agent": {"mode": "yolo", "confirm_exit": False}}
SHIPPED = {
    "default.yaml": "default.yaml",
    "mini.yaml": "mini.yaml",
    "mini_textbased.yaml": "mini_textbased.yaml",
    "swebench.yaml": "benchmarks/swebench.yaml",
    "swebench_backticks.yaml": "benchmarks/swebench_backticks.yaml",
}
# A mini-style config without model templates: the model's defaults apply.
BARE = {
    "agent": {
        "system_template": "You are a scripted test agent.",
        "instance_template": (
            "Task: {{task}}\n"
            "cost_limit={{cost_limit}} step_limit={{step_limit}} calls={{n_model_calls}} cost={{model_cost}}\n"
            "model={{model_name}} cost_per_call={{cost_per_call}} timeout={{timeout}}"
        ),
        "mode": "yolo",
        "confirm_exit": False,
    },
    "environment": {"environment_class": "local"},
}


def text(content: str, *commands: str, **extra: Any) -> dict:
    """A DeterministicModel output with these actions (none when no command is given)."""
    return {"role": "assistant", "content": content, "extra": {"actions": [{"command": c} for c in commands], **extra}}


def tool(content: str | None, *calls: tuple[str, str], **extra: Any) -> dict:
    """A DeterministicToolcallModel output: (call id, command) pairs as tool calls and actions."""
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": cmd})}}
            for cid, cmd in calls
        ],
        "extra": {"actions": [{"command": cmd, "tool_call_id": cid} for cid, cmd in calls], **extra},
    }


def reply(content: str | None, tool_calls: list[dict] | None = None, finish_reason: str = "stop") -> dict:
    """A chat-completion response as an OpenAI-compatible endpoint sends it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-parity",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "parity",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def call(cid: str, name: str, arguments: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def block(command: str) -> str:
    return f"THOUGHT: run it.\n\n```mswea_bash_command\n{command}\n```"


MULTIMODAL_REGEX = (
    r"(?s)<MSWEA_MULTIMODAL_CONTENT><CONTENT_TYPE>(.+?)</CONTENT_TYPE>(.+?)</MSWEA_MULTIMODAL_CONTENT>"
)
IMAGE_TAG = "<MSWEA_MULTIMODAL_CONTENT><CONTENT_TYPE>{kind}</CONTENT_TYPE>{url}</MSWEA_MULTIMODAL_CONTENT>"


def shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


DET_TEXT = "minisweagent.models.test_models.DeterministicModel"
DET_TOOL = "minisweagent.models.test_models.DeterministicToolcallModel"
LITELLM = {"model_name": "openai/parity", "cost_tracking": "ignore_errors"}

CASES: list[dict] = [
    {
        "name": "bare-text-basic",
        "task": "Say hello.",
        "configs": [
            BARE,
            {
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "outputs": [
                        text("first", "echo hello"),
                        text("stderr too", "echo out; echo err >&2; echo out2"),
                        text("a failure", "echo failing; exit 3"),
                        text("not a submission", f"echo {SUBMIT}; exit 1"),
                        text("done", f"echo {SUBMIT} && printf 'line1\\nline2\\n'"),
                    ],
                }
            },
        ],
    },
    {
        "name": "bare-text-no-actions",
        "task": "Outputs without extra.actions run nothing.",
        "configs": [
            BARE,
            {
                "model": {
                    "model_class": DET_TEXT,
                    "model_name": "scripted-text",
                    "outputs": [
                        {"role": "assistant", "content": "Just thinking.\n\n```mswea_bash_command\necho never\n```"},
                        {"role": "assistant", "content": "Still thinking.", "extra": {"cost": 0.5}},
                        text("now", "echo now"),
                        text("submit", f"  echo {SUBMIT}"),
                    ],
                }
            },
        ],
    },
    {
        "name": "text-multi-action-submit-interactive",
        "task": "Two actions, the second submits.",
        "configs": [
            BARE,
            {
                "agent": {"agent_class": "interactive"},
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "outputs": [text("both", "echo first", f"echo {SUBMIT}; echo patch", "echo never")],
                },
            },
        ],
    },
    {
        "name": "text-multi-action-submit-default",
        "task": "Two actions, the second submits.",
        "configs": [
            BARE,
            {
                "agent": {"agent_class": "minisweagent.agents.default.DefaultAgent"},
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "outputs": [
                        text("one", "echo one", "echo two"),
                        text("both", "echo first", f"echo {SUBMIT}; echo patch", "echo never"),
                    ],
                },
            },
        ],
    },
    {
        "name": "toolcall-basic-interactive",
        "task": "Tool calls.",
        "configs": [
            BARE,
            {
                "agent": {"agent_class": "minisweagent.agents.interactive.InteractiveAgent"},
                "model": {
                    "model_class": DET_TOOL,
                    "model_name": "deterministic_toolcall",
                    "outputs": [
                        tool("Two calls.", ("call_1", "echo one"), ("call_2", "echo two; exit 2")),
                        tool(None, ("call_3", "printf 'no newline'")),
                        {
                            "role": "assistant",
                            "content": "A human-style action without a tool call id.",
                            "extra": {"actions": [{"command": "echo user-role"}]},
                        },
                        tool("Submit.", ("call_4", "echo before"), ("call_5", f"echo {SUBMIT}; echo diff")),
                    ],
                },
            },
        ],
    },
    {
        "name": "toolcall-submit-default",
        "task": "Tool calls, default agent.",
        "configs": [
            BARE,
            {
                "agent": {"agent_class": "default"},
                "model": {
                    "model_class": DET_TOOL,
                    "model_name": "deterministic_toolcall",
                    "outputs": [
                        tool("One.", ("call_1", "echo one")),
                        tool("Submit.", ("call_2", "echo before"), ("call_3", f"echo {SUBMIT}; echo diff")),
                    ],
                },
            },
        ],
    },
    {
        "name": "step-limit",
        "task": "Runs out of steps.",
        "configs": [
            BARE,
            {
                "agent": {"step_limit": 2},
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "outputs": [text("1", "echo 1"), text("2", "echo 2"), text("3", "echo 3")],
                },
            },
        ],
    },
    {
        "name": "cost-limit",
        "task": "Runs out of money.",
        "configs": [
            BARE,
            {
                "agent": {"cost_limit": 2},
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "cost_per_call": 0.25,
                    "outputs": [
                        text("1", "echo 1", cost=1.5),
                        text("2", "echo 2", cost=1.0),
                        text("3", "echo 3", cost=1.0),
                    ],
                },
            },
        ],
    },
    {
        "name": "timeout",
        "task": "Commands that time out.",
        "configs": [
            BARE,
            {
                "environment": {"timeout": 1},
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "outputs": [
                        text("partial", "echo partial; sleep 5"),
                        text("silent", "sleep 5"),
                        text("done", f"echo {SUBMIT}"),
                    ],
                },
            },
        ],
    },
    {
        "name": "output-bytes",
        "task": "Long and non-UTF-8 output.",
        "configs": [
            BARE,
            {
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "outputs": [
                        text("long", "seq 1 3000"),
                        text("bad bytes", "printf 'a\\377\\376b\\342\\202c\\n'"),
                        text("unicode", "printf 'caf\\303\\251 \\342\\202\\254 \\360\\237\\230\\200\\n'"),
                        text("done", f"echo {SUBMIT}"),
                    ],
                }
            },
        ],
    },
    {
        "name": "test-hooks",
        "task": "The scripted model's /warning and /sleep outputs are skipped.",
        "configs": [
            BARE,
            {
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "outputs": [
                        text("warn", "/warning a scripted warning"),
                        text("sleep", "/sleep 0.01"),
                        text("real", "echo real"),
                        text("done", f"echo {SUBMIT}"),
                    ],
                }
            },
        ],
    },
    {
        "name": "shipped-default-text",
        "task": "Fix the bug.",
        "configs": [
            "default.yaml",
            YOLO,
            {
                "environment": {"timeout": 1},
                "model": {
                    "model_class": DET_TEXT,
                    "model_name": "scripted-text",
                    "outputs": [
                        text(block("ls"), "ls"),
                        text(block("seq 1 4000"), "seq 1 4000"),
                        text(block("printf 'x\\377y\\n'"), "printf 'x\\377y\\n'"),
                        text(block("echo slow; sleep 5"), "echo slow; sleep 5"),
                        text(block(f"echo {SUBMIT}"), f"echo {SUBMIT}"),
                    ],
                },
            },
        ],
    },
    {
        "name": "shipped-mini-toolcall",
        "task": "Fix the bug.",
        "configs": [
            "mini.yaml",
            YOLO,
            {
                "model": {
                    "model_class": DET_TOOL,
                    "model_name": "deterministic_toolcall",
                    "outputs": [
                        tool("Look.", ("call_a", "printf '%s\\n' 'quote \" and \\\\ backslash'")),
                        tool("Long.", ("call_b", "seq 1 3000")),
                        tool("Bytes.", ("call_c", "printf 'x\\377y\\n'"), ("call_d", "echo tab\there")),
                        tool("Done.", ("call_e", f"echo {SUBMIT}")),
                    ],
                }
            },
        ],
    },
    {
        "name": "shipped-mini-textbased",
        "task": "Fix the bug.",
        "configs": [
            "mini_textbased.yaml",
            YOLO,
            {
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "outputs": [text(block("echo hi"), "echo hi"), text(block(f"echo {SUBMIT}"), f"echo {SUBMIT}")],
                }
            },
        ],
    },
    {
        "name": "shipped-swebench-local",
        "task": "Fix the bug.",
        "configs": [
            "swebench.yaml",
            {
                "agent": {"agent_class": "default"},
                "environment": {"environment_class": "local", "cwd": "", "timeout": 5},
                "model": {
                    "model_class": DET_TOOL,
                    "model_name": "deterministic_toolcall",
                    "outputs": [
                        tool("Look.", ("call_1", "echo look")),
                        tool("Done.", ("call_2", f"echo {SUBMIT} && echo diff")),
                    ],
                },
            },
        ],
    },
    {
        "name": "local-ignores-docker-keys",
        "task": "Keys of another class.",
        "configs": [
            BARE,
            {
                "environment": {
                    "environment_class": "minisweagent.environments.local.LocalEnvironment",
                    "executable": "podman",
                    "image": "ubuntu:24.04",
                    "forward_env": ["HOME"],
                    "container_timeout": "1h",
                    "pull_timeout": 10,
                    "run_args": ["--rm"],
                },
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "outputs": [text("done", f"echo {SUBMIT}")],
                },
            },
        ],
    },
    {
        "name": "format-errors-text",
        "task": "Fix the bug.",
        "configs": [
            "default.yaml",
            YOLO,
            {"model": {"model_class": "litellm_textbased", **LITELLM}},
        ],
        "replies": [
            reply("No action here."),
            reply(block("echo a") + "\n" + block("echo b")),
            reply(block("echo fine")),
            reply("```mswea_bash_command\necho cut", finish_reason="length"),
            reply(block(f"echo {SUBMIT}")),
        ],
    },
    {
        "name": "repeated-format-errors-text",
        "task": "Fix the bug.",
        "configs": [
            "mini_textbased.yaml",
            YOLO,
            {"model": {"model_class": "minisweagent.models.litellm_textbased_model.LitellmTextbasedModel", **LITELLM}},
        ],
        "replies": [reply("none"), reply(block("echo ok")), reply("none 1"), reply("none 2"), reply("none 3")],
    },
    {
        "name": "format-errors-toolcall",
        "task": "Fix the bug.",
        "configs": [
            "mini.yaml",
            YOLO,
            {"agent": {"max_consecutive_format_errors": 10}, "model": {"model_class": "litellm", **LITELLM}},
        ],
        "replies": [
            reply("No tool call."),
            reply(None, [call("c1", "python", '{"command": "ls"}')]),
            reply(None, [call("c2", "bash", "not json")]),
            reply(None, [call("c3", "bash", '{"command": "ls"')]),
            reply(None, [call("c4", "bash", '{"cmd": "ls"}')]),
            reply(None, [call("c5", "bash", "[1, 2]")]),
            reply(None, [call("c6", "bash", '{"command": "echo ok"}'), call("c7", "edit", "{}")]),
            reply("Cut off.", finish_reason="length"),
            reply(None, [call("c8", "bash", '{"command": "echo fine"}')]),
            reply(None, [call("c9", "bash", json.dumps({"command": f"echo {SUBMIT}"}))]),
        ],
    },
    {
        "name": "repeated-format-errors-toolcall",
        "task": "Fix the bug.",
        "configs": [
            "swebench.yaml",
            {"agent": {"agent_class": "default", "max_consecutive_format_errors": 2}},
            {"environment": {"environment_class": "local", "cwd": ""}, "model": {"model_class": "litellm", **LITELLM}},
        ],
        "replies": [reply("none"), reply(None, [call("x", "bash", "{}")])],
    },
    {
        "name": "multimodal-text",
        "task": f"See {IMAGE_TAG.format(kind='image_url', url='http://127.0.0.1:9/screenshot.png')} and fix it.",
        "configs": [
            BARE,
            {
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "multimodal_regex": MULTIMODAL_REGEX,
                    "outputs": [
                        text("an image", "printf '%s\\n' " + shell_quote(IMAGE_TAG.format(kind="image_url", url="  http://127.0.0.1:9/a.png\n"))),
                        text("two, one of another type", "echo " + shell_quote(
                            "x" + IMAGE_TAG.format(kind="video", url="v.mp4") + "y" + IMAGE_TAG.format(kind=" image_url ", url="b.png")
                        )),
                        text("plain", "echo plain"),
                        text("done", f"echo {SUBMIT}"),
                    ],
                }
            },
        ],
    },
    {
        "name": "multimodal-toolcall",
        "task": "Fix the bug.",
        "configs": [
            "mini.yaml",
            YOLO,
            {
                "model": {
                    "model_class": "litellm",
                    "multimodal_regex": '<img type="(.+?)">(.+?)</img>',
                    "observation_template": "rc={{output.returncode}} {{output.output}}",
                    **LITELLM,
                }
            },
        ],
        "replies": [
            reply("Look.", [call("c1", "bash", json.dumps({"command": "echo '<img type=\"image_url\">http://127.0.0.1:9/c.png</img> after'"}))]),
            reply("Across lines.", [call("c2", "bash", json.dumps({"command": "printf '<img type=\"image_url\">a\\nb</img>\\n'"}))]),
            reply(None, [call("c3", "bash", json.dumps({"command": f"echo {SUBMIT}"}))]),
        ],
    },
]

# Issue 24: carriage returns, the local shell, template variables, a template that fails.
CASES += [
    {
        "name": "carriage-returns",
        "task": "CRLF and lone CR in command output.",
        "configs": [
            BARE,
            {
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "outputs": [
                        text("mixed", "printf 'tab\\there\\r\\ncrlf line\\rover\\n'"),
                        text("progress", "printf 'progress 10%%\\rprogress 50%%\\rprogress 100%%\\n'"),
                        text("crlf file", "printf 'a\\r\\nb\\r\\n\\r\\n' > f.txt && cat f.txt && wc -c < f.txt"),
                        text("trailing", "printf 'cr at the end\\r'; printf '\\r\\r\\n' >&2"),
                        text("done", f"printf '{SUBMIT}\\r\\npatch line\\r\\nlast\\r'"),
                    ],
                }
            },
        ],
    },
    {
        "name": "carriage-returns-toolcall",
        "task": "CR in tool-call observations, and a timeout's partial output.",
        "configs": [
            "mini.yaml",
            YOLO,
            {
                "environment": {"timeout": 1},
                "model": {
                    "model_class": DET_TOOL,
                    "model_name": "deterministic_toolcall",
                    "outputs": [
                        tool("CR.", ("call_1", "printf 'one\\rtwo\\r\\nthree\\n'")),
                        tool("Slow.", ("call_2", "printf 'partial\\r\\n'; sleep 5")),
                        tool("Done.", ("call_3", f"echo {SUBMIT}")),
                    ],
                },
            },
        ],
    },
    {
        # swebench.yaml's environment keys (interpreter [bash, -c], BASH_ENV) under the local environment:
        # both tools run /bin/sh -c, so BASH_ENV is not read and bash-only syntax fails.
        "name": "local-shell-swebench-env",
        "task": "Which shell runs the commands?",
        "configs": [
            "swebench.yaml",
            {
                "agent": {"agent_class": "default"},
                "environment": {"environment_class": "local", "cwd": "", "timeout": 5, "env": {"BASH_ENV": "rc.sh"}},
                "model": {
                    "model_class": DET_TOOL,
                    "model_name": "deterministic_toolcall",
                    "outputs": [
                        tool("Make an rc file.", ("c1", "echo 'echo SOURCED-BY-BASH_ENV' > rc.sh; echo made")),
                        tool("Escapes.", ("c2", "echo 'a\\tb|c\\\\d'")),
                        tool("Brackets.", ("c3", "[[ 1 == 1 ]] && echo double-brackets || echo no-double-brackets")),
                        tool("Version.", ("c4", 'echo "bash=${BASH_VERSION:-none} zero=$0 env=$BASH_ENV pager=$PAGER"')),
                        tool("Brace.", ("c5", "echo {1..3}; x=(1 2) 2>&1 || echo no-arrays")),
                        tool("Done.", ("c6", f"echo {SUBMIT} && echo diff")),
                    ],
                },
            },
        ],
    },
    {
        "name": "template-model-vars",
        "task": "Templates see the model's config.",
        "configs": [
            BARE,
            {
                "agent": {
                    "instance_template": (
                        "Task: {{task}}\n"
                        "outputs={{ outputs | length }} first={{ outputs[0].content }} cost={{ outputs[1].extra.cost }}\n"
                        "multimodal={{ multimodal_regex == '' }} model={{ model_name }} per_call={{ cost_per_call }}\n"
                        "attr_key={{ {'a': 1} | attr('a') is defined }} attr_method={{ {'a': 1} | attr('items') is callable }}\n"
                        "big={{ 1e16 | int }} {{ -2.5e17 | int }} {{ 1e16 }} {{ (1e16 | int) + 1 }} {{ cost_limit * 1e16 }}\n"
                        "limits={{ cost_limit }} {{ step_limit }} {{ timeout }} {{ env }}"
                    ),
                },
                "model": {
                    "model_class": "deterministic",
                    "model_name": "scripted",
                    "observation_template": (
                        "{{ outputs | length }} outputs, {{ output.output | trim }}, {{ multimodal_regex | length }}, "
                        "{{ n_model_calls }} calls, {{ model_cost }}, {{ (output.returncode * 1e16) | int }}"
                    ),
                    "outputs": [
                        text("one", "echo one"),
                        text("two", "echo two; exit 1", cost=2.5),
                        text("done", f"echo {SUBMIT}"),
                    ],
                },
            },
        ],
    },
    {
        "name": "template-model-vars-litellm",
        "task": "A litellm model's config in templates.",
        "configs": [
            "mini_textbased.yaml",
            YOLO,
            {
                "agent": {
                    "instance_template": (
                        "{{task}} tracking={{ cost_tracking }} cache={{ set_cache_control }} "
                        "registry={{ litellm_model_registry }} multimodal={{ multimodal_regex | length }} "
                        "regex={{ action_regex | length > 0 }} format={{ format_error_template | length > 0 }}"
                    ),
                },
                "model": {"model_class": "litellm_textbased", **LITELLM},
            },
        ],
        "replies": [reply(block("echo hi")), reply(block(f"echo {SUBMIT}"))],
    },
    {
        # mini-swe-agent raises (traceback, exit 1, no trajectory); the expected file records the error.
        "name": "template-error",
        "task": "A template that fails.",
        "fails": True,
        "configs": [
            BARE,
            {
                "agent": {"instance_template": "Task: {{ task }}\nmodel: {{ model_name }}\n{{ no_such_variable }}"},
                "model": {"model_class": "deterministic", "model_name": "scripted", "outputs": [text("done", f"echo {SUBMIT}")]},
            },
        ],
    },
]

# PyYAML writes an anchor and an alias for every repeated object: 120 aliased outputs.
_REPEATED = text("again", "echo again")
GENERATED_CONFIGS = {
    "many-aliases.yaml": recursive_merge(
        BARE, {"model": {"model_class": "deterministic", "model_name": "scripted", "outputs": [_REPEATED] * 120 + [text("done", f"echo {SUBMIT}")]}}
    ),
}
CASES.append({"name": "many-aliases", "task": "Repeat.", "configs": ["many-aliases.yaml"]})


# Tool-call arguments and the error text Python's json.loads gives for them (mini-swe-agent shows it).
JSON_INPUTS = [
    "", "   ", "not json", '{"command": "ls"', '{"command": "ls",}', '{"command" "ls"}', "{'command': 'ls'}",
    '{"command": "ls"} x', '{"a": [1, 2,]}', '{"a": [1 2]}', '{"a": "line\nbreak"}', '{"a": "\\q"}',
    '{"a": "\\u12"}', '{"a": "unterminated', '[1, 2]', '{"a": NaN, "b": -Infinity}', '01', '{"a": 01}',
    '\n\n  {"command": \n "ls"\n  ,\n}', '{"a": "\\ud83d\\ude00 \\u00e9"}', "{,}", "[,]", "nul", "-", "{} {}",
    '{"command": "echo \\"hi\\""}', "\t[\n]\t",
]


def json_errors() -> list[dict]:
    cases = []
    for text in JSON_INPUTS:
        try:
            json.loads(text)
            cases.append({"input": text, "error": None})
        except json.JSONDecodeError as error:
            cases.append({"input": text, "error": str(error)})
    return cases


# ---------------------------------------------------------------------------------------------------


def load_layer(layer: str | dict, configs_dir: Path) -> dict:
    if isinstance(layer, dict):
        return copy.deepcopy(layer)
    return yaml.safe_load((configs_dir / layer).read_text(encoding="utf-8"))


def run_case(case: dict, configs_dir: Path) -> dict:
    config = recursive_merge(*(load_layer(layer, configs_dir) for layer in case["configs"]))
    _SCRIPT[:] = copy.deepcopy(case.get("replies", []))
    workdir = tempfile.mkdtemp(prefix="parity-")
    previous = os.getcwd()
    os.chdir(workdir)
    try:
        with redirect_stdout(io.StringIO()):
            model = get_model(config=config.get("model", {}))
            env = get_environment(config.get("environment", {}), default_type="local")
            agent = get_agent(model, env, config.get("agent", {}), default_type="interactive")
            try:
                agent.run(case["task"])
            except Exception as error:
                if not case.get("fails"):
                    raise
                frames = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == "<template>"]
                return {"exception": type(error).__name__, "message": str(error), "template_line": frames[-1]}
        if case.get("fails"):
            raise RuntimeError(f"{case['name']}: expected to fail, but ran")
        data = agent.serialize()
    finally:
        os.chdir(previous)
        shutil.rmtree(workdir, ignore_errors=True)
    if _SCRIPT:
        raise RuntimeError(f"{case['name']}: {len(_SCRIPT)} scripted replies unused")
    return json.loads(json.dumps(data).replace(workdir, "<workdir>"))


def expected_files(configs_dir: Path) -> dict[Path, bytes]:
    files: dict[Path, bytes] = {}
    for name, source in SHIPPED.items():
        files[configs_dir / name] = (builtin_config_dir / source).read_bytes()
    for name, data in GENERATED_CONFIGS.items():
        files[configs_dir / name] = yaml.safe_dump(data, sort_keys=False).encode("utf-8")
    files[CORPUS / "json-errors.json"] = (json.dumps(json_errors(), indent=2) + "\n").encode("utf-8")
    files[CORPUS / "cases.json"] = (json.dumps(CASES, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return files


def without_timestamps(data: bytes) -> bytes:
    """Timestamps change on every run; --check compares everything else."""
    return re.sub(rb'"timestamp": [0-9.e+-]+', b'"timestamp": 0', data)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    names = [case["name"] for case in CASES]
    if len(set(names)) != len(names):
        print("duplicate case names", file=sys.stderr)
        return 1
    configs_dir = CORPUS / "configs"
    files = expected_files(configs_dir)
    # The cases read the config files, so those are written first (to a scratch copy when checking).
    scratch = Path(tempfile.mkdtemp(prefix="parity-configs-"))
    for path, data in files.items():
        if path.parent == configs_dir:
            (scratch / path.name).write_bytes(data)
    uname = os.uname()
    meta = {
        "mini_version": minisweagent.__version__,
        "uname": {"system": uname.sysname, "release": uname.release, "version": uname.version, "machine": uname.machine},
    }
    for case in CASES:
        print(f"case {case['name']}", file=sys.stderr)
        traj = run_case(case, scratch)
        traj["parity"] = meta
        suffix = "error.json" if case.get("fails") else "traj.json"
        files[CORPUS / "expected" / f"{case['name']}.{suffix}"] = (
            json.dumps(traj, indent=2, ensure_ascii=False) + "\n"
        ).encode("utf-8")
    shutil.rmtree(scratch)
    stale: list[str] = []
    for path, data in files.items():
        if not path.exists() or without_timestamps(path.read_bytes()) != without_timestamps(data):
            stale.append(str(path.relative_to(CORPUS)))
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
    for folder in (configs_dir, CORPUS / "expected"):
        for path in sorted(folder.iterdir()) if folder.exists() else []:
            if path not in files:
                stale.append(f"{path.relative_to(CORPUS)} (obsolete)")
                if not check:
                    path.unlink()
    if check and stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    print(f"mini-swe-agent {minisweagent.__version__}: {len(CASES)} cases, {len(stale)} file(s) {'stale' if check else 'updated'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
