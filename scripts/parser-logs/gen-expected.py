#!/usr/bin/env python3
"""The SWE-bench harness's own status maps of the parser fixture logs (test/fixtures/eval/parser-logs/ and logs/).

    python3 scripts/parser-logs/gen-expected.py --swebench <unpacked SWE-bench-5.0.2 dir>

Every log goes through every parser of the harness's PARSER_REGISTRY (57 names), read as the harness reads
test_output.txt (text mode: CRLF and CR become LF); a log that holds a CR is also parsed as it is, unread
("raw"). Parsers that read the instance run once per spec in SPECS. Writes
test/fixtures/eval/expected/parser-logs.json: {"specs": {case: {instance_id, version}}, "logs": {log: {"text"|"raw":
{case: [[name, status], ...] | {"error": exception type}}}}}; a case is a parser name, `@label` for each spec.
Also grades each case of test/fixtures/eval/log-grading-cases.json with the harness's get_eval_report (the
log wrapped in the eval script's markers and exit code) into test/fixtures/eval/expected/log-grading.json.
Only the parsers' modules are imported (the harness package's __init__ needs docker and modal); unidiff,
imported by swebench.utils and unused by the parsers, is stubbed. Not run by the test suite.
"""
import argparse
import contextlib
import io
import json
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
EVAL = ROOT / "test" / "fixtures" / "eval"
# The logs made for this (parser-logs/) and the Python samples of scripts/gen-eval-fixtures.py (logs/).
FOLDERS = ["parser-logs", "logs"]
OUT = EVAL / "expected" / "parser-logs.json"
GRADING_OUT = EVAL / "expected" / "log-grading.json"

# The instance a spec-reading parser gets: (case label, instance_id, version).
SPECS = {
    "parse_log_jekyll": [("9141", "jekyll__jekyll-9141", "4.3"), ("8761", "jekyll__jekyll-8761", "4.2"),
                         ("other", "jekyll__jekyll-1", "4.0")],
    "parse_log_immutable_js": [("2006", "immutable-js__immutable-js-2006", "4.0"),
                               ("2005", "immutable-js__immutable-js-2005", "4.0"),
                               ("other", "immutable-js__immutable-js-1", "4.0")],
    "parse_log_next": [("1.27", "alibaba-fusion__next-1", "1.27"), ("1.0", "alibaba-fusion__next-2", "1.0")],
    "parse_log_lighthouse": [("9.5", "GoogleChrome__lighthouse-1", "9.5"), ("3.0", "GoogleChrome__lighthouse-2", "3.0"),
                             ("2.5", "GoogleChrome__lighthouse-3", "2.5"), ("x", "GoogleChrome__lighthouse-4", "x")],
}
DEFAULT_SPEC = ("default", "owner__repo-1", "1.0")


def load_registry(src: str):
    sys.path.insert(0, src)
    unidiff = types.ModuleType("unidiff")
    unidiff.PatchSet = None
    sys.modules["unidiff"] = unidiff
    harness = types.ModuleType("swebench.harness")
    harness.__path__ = [str(Path(src) / "swebench" / "harness")]
    sys.modules["swebench.harness"] = harness
    from swebench.harness.log_parsers import PARSER_REGISTRY
    return PARSER_REGISTRY


def run(parser, log, instance_id, version):
    spec = types.SimpleNamespace(instance_id=instance_id, version=version)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # parse_log_next prints; the maven one warns
            return [[k, v] for k, v in parser(log, spec).items()]
    except Exception as error:  # the harness's run_instance records this as the instance's error
        return {"error": type(error).__name__}


def grading(registry) -> None:
    """log-grading-cases.json: each case's log wrapped as an eval script's output, graded by the harness."""
    from swebench.harness.grading import get_eval_report
    from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT, TEST_EXIT_CODE

    result = {}
    for case in json.loads((EVAL / "log-grading-cases.json").read_text(encoding="utf-8")):
        with open(EVAL / "parser-logs" / case["log"], encoding="utf-8") as f:
            log = f.read()
        text = (f"+ : '{START_TEST_OUTPUT}'\n{START_TEST_OUTPUT}\n{log}+ : '{END_TEST_OUTPUT}'\n"
                f"{END_TEST_OUTPUT}\n{TEST_EXIT_CODE}: {case['exit_code']}\n")
        name = case["log_parser"] if case["log_parser"].startswith("parse_log_") else f"parse_log_{case['log_parser']}"
        spec = types.SimpleNamespace(
            instance_id=case["id"], log_parser=name, FAIL_TO_PASS=case["FAIL_TO_PASS"],
            PASS_TO_PASS=case["PASS_TO_PASS"], eval_type=case.get("eval_type", "pass_and_fail"),
            version=case.get("version", "1.0"),
        )
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "test_output.txt"
            path.write_text(text, encoding="utf-8")
            prediction = {"instance_id": case["id"], "model_name_or_path": "m", "model_patch": "diff"}
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    report = get_eval_report(spec, prediction, str(path), include_tests_status=True)[case["id"]]
            except Exception as error:
                report = {"error": type(error).__name__}
        result[case["id"]] = {"test_output": text, "report": report}
    GRADING_OUT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--swebench", required=True)
    registry = load_registry(parser.parse_args().swebench)
    specs = {(name if label == "default" else f"{name}@{label}"): {"instance_id": i, "version": v}
             for name in registry for label, i, v in SPECS.get(name, [DEFAULT_SPEC])}
    result = {"specs": specs, "logs": {}}
    for path in [path for folder in FOLDERS for path in sorted((EVAL / folder).iterdir())]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, encoding="utf-8", newline="") as f:
            raw = f.read()
        reads = {"text": text, **({"raw": raw} if "\r" in raw else {})}
        entry = {}
        for mode, content in reads.items():
            cases = {}
            for name, fn in registry.items():
                for label, instance_id, version in SPECS.get(name, [DEFAULT_SPEC]):
                    key = name if label == "default" else f"{name}@{label}"
                    cases[key] = run(fn, content, instance_id, version)
            entry[mode] = cases
        result["logs"][f"{path.parent.name}/{path.name}"] = entry
    OUT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    grading(registry)


if __name__ == "__main__":
    main()
