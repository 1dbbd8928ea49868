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
test list), and writes the reports, run report and run.json to test/fixtures/eval/docker/regrade/.
With --languages, it grades the gold patches of the Go, JavaScript and Ruby test instances
(test/fixtures/eval/languages/) in their images and keeps the reports in languages/harness/.
Always: how the harness stages a row's binary patch assets (test/fixtures/eval/image-assets.json). `modal` and `unidiff` (not used on these paths) are stubbed.
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


ASSET_BYTES = {
    "tests/data/baseline.bin": bytes([0, 1, 2, 255, 254]) + b"binary\r\n",
    "tests/data/expected.png": bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + b"expected",
}


def image_assets() -> None:
    """The harness's staging of a row's binary patch assets (_stage_image_assets, _inject_asset_restore).

    One asset comes from a task repo folder, one from its URL (served here over HTTP), one is in neither
    (a warning, skipped). The container is a stand-in that records what the harness copies into it.
    """
    import base64
    import http.server
    import logging
    import threading

    from swebench.harness import run_evaluation
    from swebench.harness.utils import make_test_spec

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = ASSET_BYTES["tests/data/expected.png"]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    class Container:
        def __init__(self):
            self.calls = []

        def exec_run(self, cmd, **kwargs):
            self.calls.append(["exec_run", cmd])

        def put_archive(self, path, data):
            self.calls.append(["put_archive", path])

    class Records(logging.Handler):
        def __init__(self):
            super().__init__()
            self.records = []

        def emit(self, record):
            self.records.append([record.levelname, record.getMessage()])

    row = next(r for r in json.loads((FIXTURES / "docker" / "dataset.json").read_text()) if r["instance_id"].endswith("-gold"))
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/expected.png"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp) / "task-repo"
            local = repo / "tasks" / row["instance_id"] / "test_assets" / "tests" / "data" / "baseline.bin"
            local.parent.mkdir(parents=True)
            local.write_bytes(ASSET_BYTES["tests/data/baseline.bin"])
            assets = {
                "test_patch": [{"path": "tests/data/baseline.bin"}, {"path": "tests/data/expected.png", "url": url}],
                "patch": [{"path": "docs/missing.png"}],
                "problem_statement": ["http://127.0.0.1:9/never-fetched.png"],
            }
            spec = make_test_spec({**row, "image": "x", "image_assets": json.dumps(assets)})
            container = Container()
            logger = logging.getLogger("swerun-assets")
            logger.setLevel(logging.INFO)
            records = Records()
            logger.addHandler(records)
            log_dir = Path(tmp) / "log"
            restore = run_evaluation._stage_image_assets(container, spec, log_dir, logger, str(repo))
            staged = {p.name: base64.b64encode(p.read_bytes()).decode() for p in sorted((log_dir / "image_assets").iterdir())}
            result = {
                "image_assets": {**assets, "test_patch": [{"path": "tests/data/baseline.bin"}, {"path": "tests/data/expected.png", "url": "{url}"}]},
                "restore": restore,
                "eval_script": run_evaluation._inject_asset_restore(spec.eval_script, restore),
                "no_marker": run_evaluation._inject_asset_restore("#!/bin/bash\necho hi\n", restore),
                "log": records.records,
                "container": container.calls,
                "staged": staged,
                "bytes": {k: base64.b64encode(v).decode() for k, v in ASSET_BYTES.items()},
            }
    finally:
        server.shutdown()
    write_json(FIXTURES / "image-assets.json", result)


def languages_run(images: str) -> None:
    """The harness's run_evaluation with the gold patches on the Go, JavaScript and Ruby test instances.

    `images` is `go=<tag>,js=<tag>,ruby=<tag>` (what test/helpers/language-images.ts builds); the reports go to
    test/fixtures/eval/languages/harness/<instance>/report.json, with the test output the harness parsed.
    """
    from swebench.harness import run_evaluation

    tags = dict(part.split("=", 1) for part in images.split(","))
    source = FIXTURES / "languages"
    rows = json.loads((source / "dataset.json").read_text())
    for row in rows:
        row["image"] = tags[row["image"].strip("{}")]
    preds = [{"instance_id": r["instance_id"], "model_name_or_path": "gold", "model_patch": r["patch"]} for r in rows]
    out = source / "harness"
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "dataset.json").write_text(json.dumps(rows))
        (Path(tmp) / "preds.json").write_text(json.dumps(preds))
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            run_evaluation.main(
                dataset_name="dataset.json", split="test", instance_ids=None, predictions_path="preds.json",
                max_workers=1, open_file_limit=4096, run_id="languages", timeout=300, rewrite_reports=False,
                modal=False, report_dir=".",
            )
        finally:
            os.chdir(cwd)
        logs = Path(tmp) / "logs" / "run_evaluation" / "languages" / "gold"
        for instance in sorted(logs.iterdir()):
            if instance.is_dir():
                (out / instance.name).mkdir(parents=True, exist_ok=True)
                for name in ["report.json", "test_output.txt"]:
                    if (instance / name).exists():
                        shutil.copyfile(instance / name, out / instance.name / name)


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
    parser.add_argument("--languages", help="go=<tag>,js=<tag>,ruby=<tag>: grade the language test instances")
    args = parser.parse_args()
    import_harness(args.swebench)
    samples_and_grading()
    if args.image:
        docker_run(args.image)
    if args.regrade:
        regrade()
    if args.languages:
        languages_run(args.languages)
    image_assets()


if __name__ == "__main__":
    main()
