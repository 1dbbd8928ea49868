#!/usr/bin/env python3
"""Regenerate the provider fixtures used by swerun's model tests (test/fixtures/providers/).

Runs mini-swe-agent 2.4.6 with real litellm (both installed in a scratch virtualenv, pinned in the fixtures'
README) on scripted conversations against a capture server that stands in for each provider's API: it answers
each request with the case's next scripted reply (in the provider's documented response shape) and records
what litellm sent. Written:

    test/fixtures/providers/cases.json                the cases: model config, task, scripted replies
    test/fixtures/providers/expected/<case>.requests.json   each request litellm sent (method, path, query,
                                                            the headers that matter, body), in order
    test/fixtures/providers/expected/<case>.traj.json       mini-swe-agent's trajectory of the case

The server's address is written as <base>, the test key as <key>; litellm's random response ids and
creation times, timestamps and SigV4 dates and signatures are replaced by placeholders, so that --check can
compare. The tests in test/models/ serve the same replies from swerun's own local servers and compare what
swerun sends and records with these files; they never need Python.

Usage (the virtualenv's python):
    /work/venv-providers/bin/python scripts/gen-provider-fixtures.py          # rewrite the fixtures
    /work/venv-providers/bin/python scripts/gen-provider-fixtures.py --check  # exit 1 if out of date
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import io
import json
import os
import re
import shutil
import sys
import tempfile
import threading
from contextlib import redirect_stderr, redirect_stdout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

FIXTURES = Path(__file__).resolve().parent.parent / "test" / "fixtures" / "providers"
KEY = "sk-swerun-fixture-4c1d9e7a2b"
AWS_ACCESS_KEY = "AKIASWERUNFIXTURE01"
AWS_SECRET_KEY = "swerun/fixture/secret/key/0123456789abcdef"
GOOGLE_TOKEN = "ya29.swerun-fixture-token"

# mini-swe-agent and litellm read settings at import: isolate them before importing either.
_CONFIG_DIR = tempfile.mkdtemp(prefix="provider-fixtures-config-")
for _name in list(os.environ):
    if re.match(r"^(MSWEA_|LITELLM_|ANTHROPIC_|OPENAI_|AZURE_|AWS_|VERTEX|GOOGLE_|PORTKEY_|REQUESTY_)", _name):
        del os.environ[_name]
os.environ.update(
    {
        "MSWEA_SILENT_STARTUP": "1",
        "MSWEA_CONFIGURED": "1",
        "MSWEA_GLOBAL_CONFIG_DIR": _CONFIG_DIR,
        # litellm's bundled price table, not the one it would download: the same prices on every run.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
)

import litellm  # noqa: E402

import minisweagent  # noqa: E402
from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.models import get_model  # noqa: E402

# ---------------------------------------------------------------------------------------------------
# The capture server.

_REPLIES: list[dict] = []
_CAPTURED: list[dict] = []
_LOCK = threading.Lock()
# Headers that say something about the request's meaning; transport headers are left out.
KEPT_HEADERS = {
    "anthropic-version",
    "anthropic-beta",
    "x-api-key",
    "authorization",
    "api-key",
    "content-type",
    "x-amz-date",
    "x-amz-security-token",
    "x-portkey-api-key",
    "x-portkey-virtual-key",
    "x-portkey-provider",
    "http-referer",
    "x-title",
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        parts = urlsplit(self.path)
        if parts.path == "/token":  # Google's OAuth token endpoint, for application-default credentials
            self._send(200, {"access_token": GOOGLE_TOKEN, "expires_in": 3600, "token_type": "Bearer"})
            return
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() in KEPT_HEADERS}
        with _LOCK:
            _CAPTURED.append(
                {
                    "method": "POST",
                    "path": parts.path,
                    "query": dict(parse_qsl(parts.query)),
                    "headers": dict(sorted(headers.items())),
                    "body": json.loads(raw) if raw else None,
                }
            )
            reply = _REPLIES.pop(0) if _REPLIES else {"status": 400, "body": {"error": "no scripted reply left"}}
            if _ACCOUNTING and "usage" not in reply:
                reply = {**reply, "usage": _ACCOUNTING.usage(_CAPTURED[-1]["body"], reply.pop("output_tokens"))}
        self._send(200, reply)

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: Any) -> None:
        pass


class PromptCache:
    """Prompt caching as Anthropic accounts for it, on a model of token counts (bench/cost.ts has the same one).

    The prompt is its tools, system blocks and message blocks in order; a block counts 4 tokens plus a token
    per 4 characters of its text. A `cache_control` mark ends a prefix: the longest prefix written before that
    ends within 20 blocks before a mark is read from the cache, the rest up to the last mark is written (if the
    prefix holds at least 1024 tokens), and what follows the last mark is uncached input. Marks themselves do
    not change the content, so a prefix written with a mark is read back without it.
    """

    MIN_TOKENS = 1024
    LOOKBACK = 20
    TOOL_TOKENS = 300

    def __init__(self) -> None:
        self.written: set[str] = set()

    @staticmethod
    def block_text(block: dict) -> str:
        kind = block.get("type")
        if kind == "text":
            return block.get("text", "")
        if kind == "tool_use":
            return block.get("name", "") + " " + str((block.get("input") or {}).get("command", ""))
        if kind == "tool_result":
            content = block.get("content", "")
            return content if isinstance(content, str) else "".join(p.get("text", "") for p in content if p.get("type") == "text")
        if kind == "thinking":
            return block.get("thinking", "")
        if kind == "redacted_thinking":
            return block.get("data", "")
        return ""

    def blocks(self, body: dict) -> list[tuple[str, int, bool]]:
        """(key, tokens, marked) of each block of the prompt, in order."""
        out: list[tuple[str, int, bool]] = []
        for tool in body.get("tools", []):
            out.append(("tool:" + tool.get("name", ""), self.TOOL_TOKENS, "cache_control" in tool))
        system = body.get("system", [])
        if isinstance(system, str):
            system = [{"type": "text", "text": system}]
        for block in system:
            text = self.block_text(block)
            out.append(("system:text:" + text, 4 + -(-len(text) // 4), "cache_control" in block))
        for message in body["messages"]:
            content = message["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            for block in content:
                text = self.block_text(block)
                key = f"{message['role']}:{block.get('type')}:{text}"
                out.append((key, 4 + -(-len(text) // 4), "cache_control" in block))
        return out

    def usage(self, body: dict, output_tokens: int) -> dict:
        blocks = self.blocks(body)
        prefixes, totals = [], []
        digest, total = hashlib.sha256(), 0
        for key, tokens, _ in blocks:
            digest.update(key.encode("utf-8") + b"\0")
            prefixes.append(digest.hexdigest())
            total += tokens
            totals.append(total)
        marks = [i for i, (_, _, marked) in enumerate(blocks) if marked]
        read_end = -1
        for mark in marks:
            for i in range(mark, max(-1, mark - self.LOOKBACK - 1), -1):
                if prefixes[i] in self.written:
                    read_end = max(read_end, i)
                    break
        read = totals[read_end] if read_end >= 0 else 0
        write = 0
        if marks and totals[marks[-1]] >= self.MIN_TOKENS:
            write = totals[marks[-1]] - read if marks[-1] > read_end else 0
            for mark in marks:
                if totals[mark] >= self.MIN_TOKENS:
                    self.written.add(prefixes[mark])
        return {
            "input_tokens": total - read - write,
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read,
            "output_tokens": output_tokens,
        }


_ACCOUNTING: PromptCache | None = None

_SERVER = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
threading.Thread(target=_SERVER.serve_forever, daemon=True).start()
BASE = f"http://127.0.0.1:{_SERVER.server_address[1]}"

# ---------------------------------------------------------------------------------------------------
# Case building blocks.

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && printf 'patch\\n'"
AGENT = {
    "system_template": "You are a scripted test agent. Use the bash tool.",
    "instance_template": "Task: {{task}}",
    "step_limit": 20,
    "cost_limit": 3.0,
}
SONNET = "claude-sonnet-4-5-20250929"


def anthropic_usage(
    input_tokens: int, output_tokens: int, cache_write: int = 0, cache_read: int = 0
) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
    }


def anthropic_reply(
    content: list[dict], usage: dict, stop_reason: str | None = None, n: int = 1, model: str = SONNET
) -> dict:
    """A Messages API response as Anthropic documents it."""
    if stop_reason is None:
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    return {
        "id": f"msg_01Fixture{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def text_block(text: str) -> dict:
    return {"type": "text", "text": text}


def tool_use(tid: str, command: Any, name: str = "bash") -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": command if isinstance(command, dict) else {"command": command}}


def thinking(text: str, signature: str) -> dict:
    return {"type": "thinking", "thinking": text, "signature": signature}


def block(command: str) -> str:
    return f"THOUGHT: run it.\n\n```mswea_bash_command\n{command}\n```"


def sonnet(**model: Any) -> dict:
    return {"model_name": f"anthropic/{SONNET}", **model}


def long_conversation() -> list[dict]:
    """Seven steps with a growing prompt, cached as Anthropic caches it (the prefix read, the rest written)."""
    replies = []
    cached = 0
    prompt = 900
    for step in range(1, 8):
        command = SUBMIT if step == 7 else f"seq 1 {step * 40} | tail -n 3"
        replies.append(
            anthropic_reply(
                [text_block(f"Step {step}."), tool_use(f"toolu_long_{step}", command)],
                anthropic_usage(3, 60 + step, cache_write=prompt - cached, cache_read=cached),
                n=100 + step,
            )
        )
        cached = prompt
        prompt += 350
    return replies


CASES: list[dict] = [
    {
        "name": "anthropic-toolcalls",
        "protocol": "anthropic",
        "task": "Run two commands, then submit.",
        "model": sonnet(model_kwargs={"max_tokens": 4096, "temperature": 0.0}),
        "replies": [
            anthropic_reply(
                [text_block("Two commands at once."), tool_use("toolu_01A", "echo one"), tool_use("toolu_01B", "echo two; exit 3")],
                anthropic_usage(12, 40, cache_write=310),
                n=1,
            ),
            anthropic_reply([text_block("I forgot the tool.")], anthropic_usage(4, 9, cache_write=120, cache_read=310), n=2),
            anthropic_reply(
                [tool_use("toolu_01C", {"cmd": "ls"})], anthropic_usage(4, 15, cache_write=80, cache_read=430), n=3
            ),
            anthropic_reply(
                [text_block("Done."), tool_use("toolu_01D", SUBMIT)],
                anthropic_usage(4, 22, cache_write=60, cache_read=510),
                n=4,
            ),
        ],
    },
    {
        "name": "anthropic-thinking-effort",
        "protocol": "anthropic",
        "task": "Think, run a command, then submit.",
        "model": sonnet(model_kwargs={"reasoning_effort": "low"}),
        "replies": [
            anthropic_reply(
                [thinking("The user wants a command. Let me list files.", "EqQBCkYIBxgCKkAsig1"), text_block("Listing."), tool_use("toolu_02A", "echo listing")],
                anthropic_usage(10, 80, cache_write=330),
                n=11,
            ),
            anthropic_reply(
                [
                    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3redacted"},
                    thinking("Now two commands.", "EqQBCkYIBxgCKkAsig2"),
                    tool_use("toolu_02B", "echo a"),
                    tool_use("toolu_02C", "echo b"),
                ],
                anthropic_usage(6, 95, cache_write=200, cache_read=330),
                n=12,
            ),
            anthropic_reply(
                [thinking("Done; submit.", "EqQBCkYIBxgCKkAsig3"), tool_use("toolu_02D", SUBMIT)],
                anthropic_usage(6, 50, cache_write=150, cache_read=530),
                n=13,
            ),
        ],
    },
    {
        "name": "anthropic-thinking-kwargs",
        "protocol": "anthropic",
        "task": "Think with a budget, then submit.",
        "model": sonnet(model_kwargs={"thinking": {"type": "enabled", "budget_tokens": 2048}, "max_tokens": 8192}),
        "replies": [
            anthropic_reply(
                [thinking("First a check.", "EqQBCkYIBxgCKkAsig4"), tool_use("toolu_03A", "echo check")],
                anthropic_usage(10, 70, cache_write=330),
                n=21,
            ),
            anthropic_reply(
                [thinking("No tool this time.", "EqQBCkYIBxgCKkAsig5"), text_block("Just text.")],
                anthropic_usage(6, 30, cache_write=120, cache_read=330),
                n=22,
            ),
            anthropic_reply(
                [thinking("Submit now.", "EqQBCkYIBxgCKkAsig6"), text_block("Submitting."), tool_use("toolu_03B", SUBMIT)],
                anthropic_usage(6, 40, cache_write=90, cache_read=450),
                n=23,
            ),
        ],
    },
    {
        "name": "anthropic-textbased",
        "protocol": "anthropic",
        "task": "Text actions.",
        "model": sonnet(model_class="litellm_textbased"),
        "agent": {"system_template": "You are a scripted test agent. Reply with one mswea_bash_command block."},
        "replies": [
            anthropic_reply([text_block(block("echo hello"))], anthropic_usage(10, 20, cache_write=300), n=31),
            anthropic_reply(
                [text_block(block("echo a") + "\n" + block("echo b"))], anthropic_usage(5, 30, cache_write=90, cache_read=300), n=32
            ),
            anthropic_reply([text_block(block(SUBMIT))], anthropic_usage(5, 20, cache_write=70, cache_read=390), n=33),
        ],
    },
    {
        "name": "anthropic-long",
        "protocol": "anthropic",
        "task": "A longer run: the cache mark moves with every step.",
        # mini-swe-agent's swebench.yaml sets these two.
        "model": sonnet(model_kwargs={"drop_params": True, "parallel_tool_calls": True}),
        "replies": long_conversation(),
    },
    {
        "name": "anthropic-no-cache",
        "protocol": "anthropic",
        "task": "Caching turned off.",
        "model": sonnet(set_cache_control=None, model_kwargs={"parallel_tool_calls": False, "top_k": 5, "stop": ["STOP", " "]}),
        "replies": [
            anthropic_reply([tool_use("toolu_05A", "echo one")], anthropic_usage(300, 20), n=41),
            anthropic_reply([tool_use("toolu_05B", SUBMIT)], anthropic_usage(340, 20), n=42),
        ],
    },
]



def responses_reply(output: list[dict], usage: dict, n: int, status: str = "completed", incomplete: dict | None = None) -> dict:
    """A Responses API response as OpenAI documents it."""
    return {
        "id": f"resp_fixture{n:04d}",
        "object": "response",
        "created_at": 1760000000 + n,
        "status": status,
        "error": None,
        "incomplete_details": incomplete,
        "instructions": None,
        "max_output_tokens": None,
        "model": "gpt-5-codex",
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "medium", "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def responses_usage(input_tokens: int, output_tokens: int, cached: int = 0, reasoning: int = 0) -> dict:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def reasoning_item(n: int, summary: str) -> dict:
    return {
        "type": "reasoning",
        "id": f"rs_fixture{n:04d}",
        "summary": [{"type": "summary_text", "text": summary}],
        "encrypted_content": f"gAAAAABfixture-encrypted-{n:04d}",
    }


def output_message(n: int, text: str) -> dict:
    return {
        "type": "message",
        "id": f"msg_fixture{n:04d}",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(n: int, call_id: str, command: str | None = None, arguments: str | None = None) -> dict:
    return {
        "type": "function_call",
        "id": f"fc_fixture{n:04d}",
        "call_id": call_id,
        "name": "bash",
        "arguments": arguments if arguments is not None else json.dumps({"command": command}),
        "status": "completed",
    }


def chat_reply(message: dict, usage: dict, finish_reason: str = "tool_calls", model: str = "gpt-4o-2024-08-06", n: int = 1) -> dict:
    return {
        "id": f"chatcmpl-fixture{n:04d}",
        "object": "chat.completion",
        "created": 1760000000 + n,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish_reason, "logprobs": None}],
        "usage": usage,
        "system_fingerprint": "fp_fixture",
    }


def chat_tool_call(cid: str, command: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}


def chat_usage(prompt: int, completion: int, cached: int = 0, cost: float | None = None) -> dict:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    if cost is not None:
        usage["cost"] = cost
    return usage


CASES += [
    {
        "name": "anthropic-adaptive",
        "protocol": "anthropic",
        "task": "Adaptive thinking.",
        "model": {"model_name": "anthropic/claude-opus-4-7", "model_kwargs": {"reasoning_effort": "high"}},
        "replies": [
            anthropic_reply(
                [thinking("Adaptive: check first.", "EqQBCkYIBxgCKkAsig7"), tool_use("toolu_06A", "echo adaptive")],
                anthropic_usage(10, 70, cache_write=330),
                n=51,
                model="claude-opus-4-7",
            ),
            anthropic_reply(
                [thinking("Submit.", "EqQBCkYIBxgCKkAsig8"), tool_use("toolu_06B", SUBMIT)],
                anthropic_usage(6, 40, cache_write=90, cache_read=330),
                n=52,
                model="claude-opus-4-7",
            ),
        ],
    },
    {
        "name": "responses-codex",
        "protocol": "responses",
        "task": "Responses API with reasoning items sent back.",
        "model": {
            "model_name": "openai/gpt-5-codex",
            "model_class": "litellm_response",
            "model_kwargs": {"reasoning": {"effort": "medium"}, "include": ["reasoning.encrypted_content"], "store": False},
        },
        "replies": [
            responses_reply(
                [reasoning_item(1, "Look first."), output_message(1, "Two commands."), function_call(1, "call_r1", "echo one"), function_call(2, "call_r2", "echo two")],
                responses_usage(400, 120, reasoning=64),
                n=1,
            ),
            responses_reply([reasoning_item(2, "Oops."), output_message(2, "No tool call.")], responses_usage(560, 40, cached=384, reasoning=16), n=2),
            responses_reply([function_call(3, "call_r3", arguments="{not json")], responses_usage(600, 20, cached=512), n=3),
            responses_reply(
                [reasoning_item(4, "Submit."), function_call(4, "call_r4", SUBMIT)], responses_usage(640, 30, cached=512, reasoning=8), n=4
            ),
        ],
    },
    {
        "name": "responses-bridge",
        "protocol": "responses",
        "task": "A Responses-only model through mini-swe-agent's default class (litellm bridges it).",
        "model": {"model_name": "openai/gpt-5-codex", "model_kwargs": {"reasoning_effort": "medium"}},
        "replies": [
            responses_reply(
                [reasoning_item(11, "Look first."), output_message(11, "Two commands."), function_call(11, "call_b1", "echo one"), function_call(12, "call_b2", "echo two")],
                responses_usage(400, 120, reasoning=64),
                n=11,
            ),
            responses_reply([output_message(12, "No tool call.")], responses_usage(560, 40, cached=384), n=12),
            responses_reply([reasoning_item(13, "Submit."), function_call(13, "call_b3", SUBMIT)], responses_usage(640, 30, cached=512, reasoning=8), n=13),
        ],
    },
    {
        "name": "azure-chat",
        "protocol": "azure",
        "task": "Azure OpenAI deployment.",
        "model": {"model_name": "azure/my-gpt4o-deployment", "model_kwargs": {"temperature": 0.0}},
        "registry": {"azure/my-gpt4o-deployment": {"input_cost_per_token": 2.5e-6, "output_cost_per_token": 1e-5, "cache_read_input_token_cost": 1.25e-6, "litellm_provider": "azure", "mode": "chat"}},
        "replies": [
            chat_reply({"content": "One.", "tool_calls": [chat_tool_call("call_a1", "echo azure")]}, chat_usage(300, 20), n=1),
            chat_reply({"content": None, "tool_calls": [chat_tool_call("call_a2", SUBMIT)]}, chat_usage(340, 20, cached=256), n=2),
        ],
    },
    {
        "name": "portkey-chat",
        "protocol": "portkey",
        "task": "Portkey gateway.",
        "model": {"model_name": "gpt-4o", "model_class": "portkey", "provider": "openai"},
        "replies": [
            chat_reply({"content": "One.", "tool_calls": [chat_tool_call("call_p1", "echo portkey")]}, chat_usage(300, 20), model="gpt-4o", n=1),
            chat_reply({"content": None, "tool_calls": [chat_tool_call("call_p2", SUBMIT)]}, chat_usage(340, 20, cached=256), model="gpt-4o", n=2),
        ],
    },
    {
        "name": "requesty-chat",
        "protocol": "requesty",
        "task": "Requesty router.",
        "model": {"model_name": "openai/gpt-4o", "model_class": "requesty"},
        "replies": [
            chat_reply({"content": "One.", "tool_calls": [chat_tool_call("call_q1", "echo requesty")]}, chat_usage(300, 20, cost=0.00095), model="gpt-4o", n=1),
            chat_reply({"content": None, "tool_calls": [chat_tool_call("call_q2", SUBMIT)]}, chat_usage(340, 20, cost=0.00105), model="gpt-4o", n=2),
        ],
    },
    {
        "name": "bedrock-claude",
        "protocol": "bedrock",
        "task": "Claude on Bedrock (invoke).",
        "model": {"model_name": "bedrock/invoke/us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
        "replies": [
            anthropic_reply([text_block("On Bedrock."), tool_use("toolu_b1", "echo bedrock")], anthropic_usage(10, 30, cache_write=300), n=61),
            anthropic_reply([tool_use("toolu_b2", SUBMIT)], anthropic_usage(5, 20, cache_write=60, cache_read=300), n=62),
        ],
    },
    {
        "name": "vertex-claude",
        "protocol": "vertex",
        "task": "Claude on Vertex AI.",
        "model": {"model_name": "vertex_ai/claude-sonnet-4-5@20250929", "model_kwargs": {"api_base": "<base>"}},
        "replies": [
            anthropic_reply([text_block("On Vertex."), tool_use("toolu_v1", "echo vertex")], anthropic_usage(10, 30, cache_write=300), n=71),
            anthropic_reply([tool_use("toolu_v2", SUBMIT)], anthropic_usage(5, 20, cache_write=60, cache_read=300), n=72),
        ],
    },
]


LOREM = (
    "The repository is a Python project with a src layout, tests under tests/, and a tox configuration. "
    "Read the issue, find the code, reproduce the bug with a small script, fix it, and run the tests. "
)


def swebench_60() -> dict:
    """A 60-step run shaped like a SWE-bench one: a ~3k-token prompt, each step adding ~1.2k tokens."""
    replies = []
    for step in range(1, 61):
        thought = f"Step {step}: looking at the next part of the code. " + "I check what the function returns. " * 8
        command = SUBMIT if step == 60 else f"yes 'src/pkg/module_{step}.py:{step}0: def handler_{step}(request): return None' | head -c 4000; echo"
        replies.append(
            {
                **anthropic_reply([text_block(thought), tool_use(f"toolu_swe_{step:02d}", command)], {}, n=200 + step),
                "usage": None,
                "output_tokens": 150,
            }
        )
    for reply in replies:
        del reply["usage"]
    return {
        "name": "anthropic-swebench-60",
        "protocol": "anthropic",
        "accounting": "anthropic-cache",
        "task": "Fix the issue in the repository. " * 40,
        "model": sonnet(model_kwargs={"drop_params": True, "parallel_tool_calls": True}),
        "agent": {"system_template": "You are a careful software engineer working in a shell. " + LOREM * 45, "step_limit": 250},
        "replies": replies,
    }


CASES.append(swebench_60())


def scripted_response(n: int, text: str | None, *calls: tuple[str, str]) -> dict:
    """A DeterministicResponseAPIToolcallModel output: a response object with its actions."""
    output = [output_message(n, text)] if text else []
    output += [function_call(n * 10 + i, cid, command) for i, (cid, command) in enumerate(calls)]
    return {
        "object": "response",
        "output": output,
        "extra": {"actions": [{"command": c, "tool_call_id": cid} for cid, c in calls], "cost": 0.5},
    }


CASES.append(
    {
        "name": "scripted-responses",
        "protocol": "scripted",
        "task": "The scripted Responses API model.",
        "model": {
            "model_name": "deterministic_response_api_toolcall",
            "model_class": "minisweagent.models.test_models.DeterministicResponseAPIToolcallModel",
            "outputs": [
                scripted_response(1, "Two calls.", ("call_s1", "echo one"), ("call_s2", "echo two; exit 2")),
                scripted_response(2, None, ("call_s3", SUBMIT)),
            ],
        },
        "replies": [],
    }
)

# ---------------------------------------------------------------------------------------------------
# Running a case.


def case_env(case: dict) -> dict[str, str]:
    protocol = case["protocol"]
    if protocol == "scripted":
        return {}
    if protocol == "anthropic":
        return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_API_BASE": BASE}
    if protocol == "responses":
        return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": f"{BASE}/v1"}
    if protocol == "azure":
        return {"AZURE_API_KEY": KEY, "AZURE_API_BASE": BASE, "AZURE_API_VERSION": "2024-10-21"}
    if protocol == "portkey":
        return {"PORTKEY_API_KEY": KEY, "PORTKEY_PROXY": f"{BASE}/v1"}
    if protocol == "requesty":
        return {"REQUESTY_API_KEY": KEY}
    if protocol == "bedrock":
        return {
            "AWS_ACCESS_KEY_ID": AWS_ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": AWS_SECRET_KEY,
            "AWS_REGION_NAME": "us-east-1",
            "AWS_BEDROCK_RUNTIME_ENDPOINT": BASE,
        }
    if protocol == "vertex":
        return {"VERTEXAI_PROJECT": "swerun-fixture", "VERTEXAI_LOCATION": "us-east5", "GOOGLE_APPLICATION_CREDENTIALS": vertex_credentials()}
    raise ValueError(f"unknown protocol {protocol}")


def vertex_credentials() -> str:
    """A service-account key file whose token endpoint is the capture server (a fresh RSA key each run)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path = Path(_CONFIG_DIR) / "service-account.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "swerun-fixture",
                "private_key_id": "fixture",
                "private_key": pem,
                "client_email": "fixture@swerun-fixture.iam.gserviceaccount.com",
                "client_id": "1",
                "token_uri": f"{BASE}/token",
            }
        )
    )
    return str(path)


def run_case(case: dict) -> tuple[list[dict], dict]:
    global _ACCOUNTING
    _REPLIES[:] = copy.deepcopy(case["replies"])
    _CAPTURED.clear()
    _ACCOUNTING = PromptCache() if case.get("accounting") == "anthropic-cache" else None
    env = case_env(case)
    os.environ.update(env)
    workdir = tempfile.mkdtemp(prefix="provider-fixture-")
    previous = os.getcwd()
    os.chdir(workdir)
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            model_config = json.loads(json.dumps(case["model"]).replace("<base>", BASE))
            if "registry" in case:
                registry = Path(workdir) / "registry.json"
                registry.write_text(json.dumps(case["registry"]))
                model_config["litellm_model_registry"] = str(registry)
            model = get_model(config=model_config)
            if case["protocol"] == "requesty":
                model._api_url = f"{BASE}/v1/chat/completions"  # mini's class has no setting for it
            environment = LocalEnvironment(cwd=workdir)
            agent = DefaultAgent(model, environment, **{**AGENT, **case.get("agent", {})})
            agent.run(case["task"])
        data = agent.serialize()
    finally:
        os.chdir(previous)
        shutil.rmtree(workdir, ignore_errors=True)
        for name in env:
            os.environ.pop(name, None)
    if _REPLIES:
        raise RuntimeError(f"{case['name']}: {len(_REPLIES)} scripted replies unused")
    requests = json.loads(placeholders(json.dumps(_CAPTURED)))
    trajectory = json.loads(placeholders(json.dumps(data).replace(workdir, "<workdir>")))
    return requests, trajectory


def call_costs(trajectory: dict) -> dict:
    calls = []
    for message in trajectory["messages"]:
        extra = message.get("extra", {})
        if "cost" in extra and "response" in extra:
            usage = extra["response"]["usage"]
            calls.append(
                {
                    "prompt_tokens": usage["prompt_tokens"],
                    "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                    "cache_read_input_tokens": usage["cache_read_input_tokens"],
                    "completion_tokens": usage["completion_tokens"],
                    "cost": extra["cost"],
                }
            )
    return {
        "exit_status": trajectory["info"]["exit_status"],
        "api_calls": trajectory["info"]["model_stats"]["api_calls"],
        "instance_cost": trajectory["info"]["model_stats"]["instance_cost"],
        "calls": calls,
    }


def placeholders(text: str) -> str:
    text = text.replace(BASE, "<base>").replace(KEY, "<key>").replace(GOOGLE_TOKEN, "<google-token>")
    text = re.sub(r'"chatcmpl-[0-9a-f-]{36}"', '"chatcmpl-<id>"', text)
    text = re.sub(r'"created": \d+', '"created": 0', text)
    text = re.sub(r'"created_at": \d+(\.\d+)?', '"created_at": 0', text)
    text = re.sub(r'"timestamp": [0-9.e+-]+', '"timestamp": 0', text)
    text = re.sub(r'"x-amz-date": "\d{8}T\d{6}Z"', '"x-amz-date": "<date>"', text)
    text = re.sub(r"Credential=([^/]+)/\d{8}/", r"Credential=\1/<date>/", text)
    text = re.sub(r"Signature=[0-9a-f]{64}", "Signature=<signature>", text)
    return text


def dump(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def expected_files() -> dict[Path, bytes]:
    files: dict[Path, bytes] = {FIXTURES / "cases.json": dump(CASES)}
    for case in CASES:
        requests, trajectory = run_case(case)
        if case.get("accounting"):
            # A long run: its calls' usage and cost (what bench/cost.ts compares), not its megabytes of requests.
            files[FIXTURES / "expected" / f"{case['name']}.costs.json"] = dump(call_costs(trajectory))
            continue
        files[FIXTURES / "expected" / f"{case['name']}.requests.json"] = dump(requests)
        files[FIXTURES / "expected" / f"{case['name']}.traj.json"] = dump(trajectory)
    return files


def main(argv: list[str]) -> int:
    names = [case["name"] for case in CASES]
    if len(set(names)) != len(names):
        print("duplicate case names", file=sys.stderr)
        return 1
    files = expected_files()
    meta = {"mini_version": minisweagent.__version__, "litellm_version": importlib.metadata.version("litellm")}
    files[FIXTURES / "versions.json"] = dump(meta)
    if "--check" in argv:
        stale = [str(path) for path, data in files.items() if not path.exists() or path.read_bytes() != data]
        for path in stale:
            print(f"out of date: {path}", file=sys.stderr)
        return 1 if stale else 0
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(f"wrote {len(files)} files to {FIXTURES}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
