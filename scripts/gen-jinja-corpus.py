#!/usr/bin/env python3
"""Regenerate the expected outputs of the Jinja2 template corpus used by swerun's tests.

Each case in test/fixtures/jinja/cases.json names a template in test/fixtures/jinja/templates/ and the
variables to render it with. This script renders every case exactly as mini-swe-agent does,

    jinja2.Template(source, undefined=StrictUndefined).render(**vars)

and writes test/fixtures/jinja/expected/<case>.expected (the output, byte for byte) or, when rendering
raises, test/fixtures/jinja/expected/<case>.error ("<ExceptionType>: <message>", then "line <n>" when the
traceback names the template line where rendering failed).

Variables may use two macros to keep cases.json small (the TypeScript tests expand them the same way):
    {"$repeat": [text, n]}   -> text * n
    {"$concat": [a, b, ...]} -> a + b + ... (each part expanded first)

Usage:
    python3 scripts/gen-jinja-corpus.py          # rewrite the expected files
    python3 scripts/gen-jinja-corpus.py --check  # exit 1 if any expected file is out of date
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import StrictUndefined, Template

CORPUS = Path(__file__).resolve().parent.parent / "test" / "fixtures" / "jinja"


def expand(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$repeat"}:
            text, count = value["$repeat"]
            return expand(text) * count
        if set(value) == {"$concat"}:
            return "".join(expand(part) for part in value["$concat"])
        return {key: expand(item) for key, item in value.items()}
    if isinstance(value, list):
        return [expand(item) for item in value]
    return value


def render(case: dict[str, Any]) -> tuple[str, str]:
    """Returns ("expected", output) or ("error", "<Type>: <message>")."""
    # Read bytes so that the template's newlines reach Jinja2 untranslated.
    source = (CORPUS / "templates" / case["template"]).read_bytes().decode("utf-8")
    try:
        output = Template(source, undefined=StrictUndefined).render(**expand(case.get("vars", {})))
    except Exception as error:  # noqa: BLE001 - every failure is recorded as the case's expectation
        message = " ".join(str(error).split("\n"))
        # The template line the traceback names last (where it failed), for errors raised while rendering.
        lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == "<template>"]
        where = f"line {lines[-1]}\n" if lines else ""
        return "error", f"{type(error).__name__}: {message}\n{where}"
    return "expected", output


def main(argv: list[str]) -> int:
    check = "--check" in argv
    cases = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
    names = [case["name"] for case in cases]
    if len(set(names)) != len(names):
        print("duplicate case names in cases.json", file=sys.stderr)
        return 1
    out_dir = CORPUS / "expected"
    out_dir.mkdir(exist_ok=True)
    stale: list[str] = []
    wanted: set[Path] = set()
    for case in cases:
        kind, content = render(case)
        path = out_dir / f"{case['name']}.{kind}"
        wanted.add(path)
        data = content.encode("utf-8")
        if not path.exists() or path.read_bytes() != data:
            stale.append(path.name)
            if not check:
                path.write_bytes(data)
    for path in sorted(out_dir.iterdir()):
        if path not in wanted:
            stale.append(f"{path.name} (obsolete)")
            if not check:
                path.unlink()
    if check and stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    print(f"jinja2 {jinja2.__version__}: {len(cases)} cases, {len(stale)} file(s) {'stale' if check else 'updated'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
