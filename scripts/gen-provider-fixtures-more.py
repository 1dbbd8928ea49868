#!/usr/bin/env python3
"""More provider fixtures, written beside scripts/gen-provider-fixtures.py's (test/fixtures/providers/).

Reuses that script's capture server, reply builders and case runner (loaded from its file) for the cases
it does not hold: mini-swe-agent's OpenRouterResponseModel and PortkeyResponseAPIModel (the Responses API
through OpenRouter and Portkey), Gemini on Vertex AI through litellm, and Azure OpenAI with an Azure AD
token. Written:

    cases-more.json                          the cases (same fields as cases.json)
    expected/<case>.requests.json            each request sent, as in the first script
    expected/<case>.traj.json                mini-swe-agent's trajectory of the case

Usage (the virtualenv of the first script, /work/venv-providers):
    /work/venv-providers/bin/python scripts/gen-provider-fixtures-more.py          # rewrite the fixtures
    /work/venv-providers/bin/python scripts/gen-provider-fixtures-more.py --check  # exit 1 if out of date
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

_SPEC = importlib.util.spec_from_file_location("gen_provider_fixtures", Path(__file__).with_name("gen-provider-fixtures.py"))
gen = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gen)  # starts the capture server

BASE, KEY, SUBMIT = gen.BASE, gen.KEY, gen.SUBMIT
AZURE_AD_TOKEN = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.swerun-fixture-azure-ad-token"


def openrouter_usage(input_tokens: int, output_tokens: int, cost: float, cached: int = 0, reasoning: int = 0) -> dict:
    return {**gen.responses_usage(input_tokens, output_tokens, cached=cached, reasoning=reasoning), "cost": cost}


def responses_conversation(prefix: str, n: int, usage: Any) -> list[dict]:
    """Reasoning and two calls, a reply without a call (format error), then the submission."""
    r, o, f = gen.reasoning_item, gen.output_message, gen.function_call
    return [
        gen.responses_reply(
            [r(n, "Look first."), o(n, "Two commands."), f(n, f"call_{prefix}1", "echo one"), f(n + 1, f"call_{prefix}2", "echo two; exit 4")],
            usage(400, 120, 0.0021, reasoning=64),
            n=n,
        ),
        gen.responses_reply([r(n + 2, "Oops."), o(n + 2, "No tool call.")], usage(560, 40, 0.0011, cached=384, reasoning=16), n=n + 2),
        gen.responses_reply([r(n + 3, "Submit."), f(n + 3, f"call_{prefix}3", SUBMIT)], usage(640, 30, 0.0009, cached=512, reasoning=8), n=n + 3),
    ]


def responses_usage(input_tokens: int, output_tokens: int, _cost: float, cached: int = 0, reasoning: int = 0) -> dict:
    return gen.responses_usage(input_tokens, output_tokens, cached=cached, reasoning=reasoning)


CASES: list[dict] = [
    {
        "name": "openrouter-responses",
        "protocol": "openrouter-responses",
        "task": "The Responses API through OpenRouter.",
        "model": {
            "model_name": "openai/gpt-5-codex",
            "model_class": "openrouter_response",
            "model_kwargs": {"reasoning": {"effort": "medium"}, "include": ["reasoning.encrypted_content"], "store": False},
        },
        "replies": responses_conversation("o", 301, openrouter_usage),
    },
    {
        "name": "portkey-responses",
        "protocol": "portkey",
        "task": "The Responses API through Portkey.",
        "model": {"model_name": "gpt-5-codex", "model_class": "portkey_response", "model_kwargs": {"reasoning": {"effort": "low"}}},
        "replies": responses_conversation("p", 321, responses_usage),
    },
]

def gemini_reply(parts: list[dict], usage: dict, n: int, finish: str = "STOP", model: str = "gemini-2.5-pro") -> dict:
    """A generateContent response as Vertex AI documents it."""
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
        "usageMetadata": usage,
        "modelVersion": model,
        "createTime": "2026-11-27T00:00:00.000000Z",
        "responseId": f"gemini-fixture-{n:04d}",
    }


def gemini_usage(prompt: int, candidates: int, thoughts: int = 0, cached: int = 0) -> dict:
    usage = {"promptTokenCount": prompt, "candidatesTokenCount": candidates, "totalTokenCount": prompt + candidates + thoughts}
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    if cached:
        usage["cachedContentTokenCount"] = cached
    return usage


def call(command: str, signature: str | None = None) -> dict:
    part: dict = {"functionCall": {"name": "bash", "args": {"command": command}}}
    if signature:
        part["thoughtSignature"] = signature
    return part


CASES += [
    {
        "name": "vertex-gemini",
        "protocol": "vertex",
        "task": "Gemini on Vertex AI.",
        # drop_params and parallel_tool_calls: what mini-swe-agent's swebench.yaml sets.
        "model": {"model_name": "vertex_ai/gemini-2.5-pro", "model_kwargs": {"api_base": "<base>", "temperature": 0.0, "max_tokens": 4096, "drop_params": True, "parallel_tool_calls": True}},
        "replies": [
            gemini_reply([{"text": "Two commands."}, call("echo one"), call("echo two; exit 5")], gemini_usage(300, 40, thoughts=120), n=1),
            gemini_reply([{"text": "No tool this time."}], gemini_usage(420, 10, thoughts=30, cached=256), n=2),
            gemini_reply([call("echo gemini")], gemini_usage(460, 15), n=3),
            gemini_reply([{"text": "Done."}, call(SUBMIT)], gemini_usage(520, 20, thoughts=60, cached=256), n=4),
        ],
    },
    {
        "name": "vertex-gemini-thinking",
        "protocol": "vertex",
        "task": "Gemini on Vertex AI, thinking with signatures.",
        "model": {"model_name": "vertex_ai/gemini-2.5-flash", "model_kwargs": {"api_base": "<base>", "reasoning_effort": "low"}},
        "replies": [
            gemini_reply(
                [{"text": "I should look first.", "thought": True}, {"text": "Looking."}, call("echo look", "CiQBfixture-signature-1")],
                gemini_usage(300, 30, thoughts=200),
                n=11,
                model="gemini-2.5-flash",
            ),
            gemini_reply([call(SUBMIT, "CiQBfixture-signature-2")], gemini_usage(380, 20, thoughts=90), n=12, model="gemini-2.5-flash"),
        ],
    },
]

AZURE_REGISTRY = {
    "azure/my-gpt4o-deployment": {
        "input_cost_per_token": 2.5e-6,
        "output_cost_per_token": 1e-5,
        "cache_read_input_token_cost": 1.25e-6,
        "litellm_provider": "azure",
        "mode": "chat",
    }
}
CHAT = gen.chat_reply, gen.chat_tool_call, gen.chat_usage
CASES += [
    {
        # litellm 1.110.2 computes AZURE_AD_TOKEN but does not hand it to the Azure client (see
        # azure_ad_token_env_under_litellm below); the OpenAI SDK's own AZURE_OPENAI_AD_TOKEN gets through.
        "name": "azure-ad-token-env",
        "protocol": "azure-ad",
        "task": "Azure OpenAI with an Azure AD token from AZURE_OPENAI_AD_TOKEN.",
        "model": {"model_name": "azure/my-gpt4o-deployment"},
        "registry": AZURE_REGISTRY,
        "replies": [
            gen.chat_reply({"content": "AD.", "tool_calls": [gen.chat_tool_call("call_ad1", "echo ad")]}, gen.chat_usage(300, 20), n=81),
            gen.chat_reply({"content": None, "tool_calls": [gen.chat_tool_call("call_ad2", SUBMIT)]}, gen.chat_usage(340, 20, cached=256), n=82),
        ],
    },
    {
        "name": "azure-ad-token-kwargs",
        "protocol": "azure-ad-kwargs",
        "task": "Azure OpenAI with an Azure AD token in model_kwargs.",
        "model": {"model_name": "azure/my-gpt4o-deployment", "model_kwargs": {"azure_ad_token": AZURE_AD_TOKEN, "api_version": "2024-06-01"}},
        "registry": AZURE_REGISTRY,
        "replies": [
            gen.chat_reply({"content": None, "tool_calls": [gen.chat_tool_call("call_ak1", SUBMIT)]}, gen.chat_usage(300, 20), n=83),
        ],
    },
]

_case_env = gen.case_env
_get_model = gen.get_model


def case_env(case: dict) -> dict[str, str]:
    if case["protocol"] == "openrouter-responses":
        return {"OPENROUTER_API_KEY": KEY}
    if case["protocol"] == "azure-ad":
        return {"AZURE_OPENAI_AD_TOKEN": AZURE_AD_TOKEN, "AZURE_API_BASE": BASE, "AZURE_API_VERSION": "2024-10-21"}
    if case["protocol"] == "azure-ad-litellm-env":
        return {"AZURE_AD_TOKEN": AZURE_AD_TOKEN, "AZURE_API_BASE": BASE, "AZURE_API_VERSION": "2024-10-21"}
    if case["protocol"] == "azure-ad-kwargs":
        return {"AZURE_API_BASE": BASE}
    return _case_env(case)


def get_model(config: dict) -> Any:
    model = _get_model(config=config)
    if config.get("model_class") == "openrouter_response":
        model._api_url = f"{BASE}/api/v1/responses"  # mini's class has no setting for it
    return model


_placeholders = gen.placeholders


def placeholders(text: str) -> str:
    """The first script's placeholders, and litellm's random tool call ids (Gemini's) numbered in order."""
    ids: dict[str, str] = {}
    text = _placeholders(text)
    return re.sub(r"call_[0-9a-f]{28}", lambda m: ids.setdefault(m.group(0), f"call_<{len(ids) + 1}>"), text)


gen.placeholders = placeholders


def azure_ad_token_env_under_litellm() -> dict:
    """What litellm does with AZURE_AD_TOKEN alone (its documented variable), in a fresh process: litellm
    caches Azure clients, and one made for an earlier case with a token would answer instead."""
    probe = subprocess.run([sys.executable, __file__, "--probe-azure-ad-env"], capture_output=True, text=True, check=True)
    return json.loads(probe.stdout)


def probe_azure_ad_env() -> dict:
    case = {**CASES[[c["name"] for c in CASES].index("azure-ad-token-env")], "protocol": "azure-ad-litellm-env"}
    try:
        gen.run_case(case)
        return {"error": None}
    except Exception as error:  # noqa: BLE001 - the error is what is recorded
        return {"error": gen.placeholders(str(error).split("Traceback")[0].strip()), "requests": len(gen._CAPTURED)}
gen.case_env = case_env
gen.get_model = get_model


def main(argv: list[str]) -> int:
    if "--probe-azure-ad-env" in argv:
        print(json.dumps(probe_azure_ad_env()))
        return 0
    names = [case["name"] for case in CASES]
    known = {case["name"] for case in gen.CASES}
    if len(set(names)) != len(names) or known & set(names):
        print("duplicate case names", file=sys.stderr)
        return 1
    gen.CASES = CASES
    files = gen.expected_files()
    files[gen.FIXTURES / "cases-more.json"] = files.pop(gen.FIXTURES / "cases.json")
    files[gen.FIXTURES / "expected" / "azure-ad-token-litellm-env.json"] = gen.dump(azure_ad_token_env_under_litellm())
    if "--check" in argv:
        stale = [str(path) for path, data in files.items() if not path.exists() or path.read_bytes() != data]
        for path in stale:
            print(f"out of date: {path}", file=sys.stderr)
        return 1 if stale else 0
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(f"wrote {len(files)} files to {gen.FIXTURES}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
