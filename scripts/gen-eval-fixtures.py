#!/usr/bin/env python3
"""Expected grading outputs for swerun's tests, made by the official SWE-bench 5.x harness itself.

Run with a Python that has the harness's dependencies (docker, datasets, python-dotenv, tqdm), pointing
at an unpacked SWE-bench 5.0.2 source tree (see /work/shared/reference/README.md):

    python scripts/gen-eval-fixtures.py --swebench <SWE-bench-5.0.2 dir> [--image <eval test image tag>]

It writes, under test/fixtures/eval/expected/:
  parsers.json      every log sample in test/fixtures/eval/logs/ through every ported parser name
  grading.json      get_logs_eval + get_eval_report (and report.json's text) for grading-cases.json
  eval-scripts/     make_test_spec(...).eval_script for each test/fixtures/eval/eval-scripts/*.sh
With --image (the image test/helpers/eval-images.ts builds), it also runs the harness's run_evaluation on
test/fixtures/eval/docker/{dataset,preds}.json in Docker and copies its logs and run report to
test/fixtures/eval/docker/harness/. With --regrade, it re-grades those logs with the harness's report step
(`rewrite_reports`, no container) against a dataset whose breaks row lists no PASS_TO_PASS test (a fixed
test list), and writes the reports, run report and run.json to test/fixtures/eval/docker/regrade/. `modal` and `unidiff` (not used on these paths) are stubbed.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "test" / "fixtures" / "eval"
PORTED = [
    "parse_log_pytest", "parse_log_astroid", "parse_log_flask", "parse_log_marshmallow", "parse_log_pvlib",
    "parse_log_pyvista", "parse_log_sqlfluff", "parse_log_xarray", "parse_log_pytest_options",
    "parse_log_pydicom", "parse_log_requests", "parse_log_pylint", "parse_log_pytest_v2", "parse_log_astropy",
    "parse_log_scikit", "parse_log_sphinx", "parse_log_django", "parse_log_seaborn", "parse_log_sympy",
    "parse_log_matplotlib",
]


def import_harness(src: str):
    sys.path.insert(0, src)
    unidiff = types.ModuleType("unidiff")
    unidiff.PatchSet = None
    sys.modules.setdefault("unidiff", unidiff)
    modal_eval = types.ModuleType("swebench.harness.modal_eval")
    modal_eval.run_instances_modal = None
    modal_eval.validate_modal_credentials = None
    sys.modules["swebench.harness.modal_eval"] = modal_eval


def spec_for(case, make_test_spec):
    return make_test_spec({
        "instance_id": case["id"], "image": "unused", "repo": "x/y", "version": "1",
        "FAIL_TO_PASS": case["FAIL_TO_PASS"], "PASS_TO_PASS": case["PASS_TO_PASS"],
        "log_parser": case["log_parser"], "eval_type": case["eval_type"], "eval_script": "",
    })


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def samples_and_grading() -> None:
    from swebench.harness.grading import get_eval_report, get_logs_eval
    from swebench.harness.log_parsers import PARSER_REGISTRY
    from swebench.harness.utils import make_test_spec

    parsers = {}
    for log in sorted((FIXTURES / "logs").iterdir()):
        with open(log) as f:  # text mode, as the harness reads test_output.txt
            content = f.read()
        parsers[log.name] = {
            name: [[k, v] for k, v in PARSER_REGISTRY[name](content, None).items()] for name in PORTED
        }
    write_json(FIXTURES / "expected" / "parsers.json", parsers)

    grading = {}
    cases = json.loads((FIXTURES / "grading-cases.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            path = Path(tmp) / f"{case['id']}.txt"
            if "log" in case:
                shutil.copyfile(FIXTURES / "logs" / case["log"], path)
            else:
                path.write_bytes(case["text"].encode())
            spec = spec_for(case, make_test_spec)
            status_map, found = get_logs_eval(spec, str(path))
            pred = {"instance_id": case["id"], "model_name_or_path": "m", "model_patch": case["patch"]}
            report = get_eval_report(spec, pred, str(path), include_tests_status=True)
            grading[case["id"]] = {
                "found": found,
                "status_map": [[k, v] for k, v in status_map.items()],
                "report": report,
                "report_json": json.dumps(report, indent=4),
            }
    write_json(FIXTURES / "expected" / "grading.json", grading)

    out = FIXTURES / "expected" / "eval-scripts"
    out.mkdir(parents=True, exist_ok=True)
    for script in sorted((FIXTURES / "eval-scripts").glob("*.sh")):
        spec = make_test_spec({
            "instance_id": "x", "image": "x", "repo": "x/y", "version": "1", "FAIL_TO_PASS": [],
            "PASS_TO_PASS": [], "log_parser": "parse_log_pytest", "eval_type": "pass_and_fail",
            "eval_script": script.read_text(),
        })
        (out / script.name).write_text(spec.eval_script)


def docker_run(image: str) -> None:
    from swebench.harness import run_evaluation

    source = FIXTURES / "docker"
    rows = json.loads((source / "dataset.json").read_text())
    for row in rows:
        row["image"] = image
    out = source / "harness"
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "dataset.json").write_text(json.dumps(rows))
        shutil.copyfile(source / "preds.json", Path(tmp) / "preds.json")
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            run_evaluation.main(
                dataset_name="dataset.json", split="test", instance_ids=None, predictions_path="preds.json",
                max_workers=2, open_file_limit=4096, run_id="harness", timeout=5, rewrite_reports=False,
                modal=False, report_dir=".",
            )
        finally:
            os.chdir(cwd)
        logs = Path(tmp) / "logs" / "run_evaluation" / "harness" / "test__model"
        for instance in sorted(logs.iterdir()):
            for name in ["report.json", "test_output.txt", "eval.sh", "patch.diff", "run_instance.log"]:
                if (instance / name).exists():
                    (out / instance.name).mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(instance / name, out / instance.name / name)
        shutil.copyfile(Path(tmp) / "test__model.harness.json", out / "test__model.harness.json")
    (out / "image.txt").write_text(image + "\n")


def regrade() -> None:
    """The harness's re-grade from logs (what `swebench report <run>` runs) over the committed harness logs."""
    from swebench.harness import run_evaluation

    source = FIXTURES / "docker"
    rows = json.loads((source / "dataset.json").read_text())
    for row in rows:
        row["image"] = "swerun-regrade-unused:latest"
        if row["instance_id"].endswith("-breaks"):
            row["PASS_TO_PASS"] = "[]"
    out = source / "regrade"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "dataset.json").write_text(json.dumps(rows, indent=2) + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "logs" / "run_evaluation" / "harness"
        shutil.copytree(source / "harness", logs / "test__model", ignore=shutil.ignore_patterns("*.json", "*.txt"))
        for instance in (source / "harness").iterdir():
            if instance.is_dir():
                for name in ["test_output.txt"]:
                    if (instance / name).exists():
                        shutil.copyfile(instance / name, logs / "test__model" / instance.name / name)
        (Path(tmp) / "dataset.json").write_text(json.dumps(rows))
        shutil.copyfile(source / "preds.json", Path(tmp) / "preds.json")
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            run_evaluation.main(
                dataset_name="dataset.json", split="test", instance_ids=None, predictions_path="preds.json",
                max_workers=1, open_file_limit=4096, run_id="harness", timeout=1800, rewrite_reports=True,
                modal=False, report_dir=".",
            )
        finally:
            os.chdir(cwd)
        for instance in sorted((logs / "test__model").iterdir()):
            if (instance / "report.json").exists():
                (out / instance.name).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(instance / "report.json", out / instance.name / "report.json")
        shutil.copyfile(Path(tmp) / "test__model.harness.json", out / "test__model.harness.json")
        shutil.copyfile(logs / "run.json", out / "run.json")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--swebench", required=True, help="unpacked SWE-bench 5.0.2 source tree")
    parser.add_argument("--image", help="the grading test image (runs the harness in Docker)")
    parser.add_argument("--regrade", action="store_true", help="re-grade the harness's logs from the files alone")
    args = parser.parse_args()
    import_harness(args.swebench)
    samples_and_grading()
    if args.image:
        docker_run(args.image)
    if args.regrade:
        regrade()


if __name__ == "__main__":
    main()
