"""python -m conformance run [--quick] [--ops ...] [--dtypes ...] [--variants ...] [--workers N]
                            [--backend-module M --device D] [--baseline old.json] [--update-expectations]
                            [--progress auto|tty|lines|off] [--report-every SECONDS]
python -m conformance generate [--force]

`run` (re)generates the pytest modules when torch or the backend's registrations changed, runs them with
pytest (and pytest-xdist for --workers > 1), then merges the per-test rows into the report. While pytest
runs, the report is rewritten every --report-every seconds, marked partial: Ctrl-C, SIGTERM or a crash
leaves a readable report of the tests that ran."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

QUICK_OPS = [
    "abs", "add", "addmm", "all", "amax", "amin", "any", "argmax", "argmin", "bmm", "cat", "clamp", "clone",
    "contiguous", "count_nonzero", "div", "dot", "exp", "fill", "index_select", "linalg.vector_norm", "log_softmax",
    "logsumexp", "matmul", "max", "mean", "min", "mm", "mul", "mv", "nansum", "neg", "nn.functional.cross_entropy",
    "nn.functional.embedding", "nn.functional.layer_norm", "nn.functional.linear", "nn.functional.nll_loss",
    "nn.functional.relu", "prod", "relu", "reshape", "sigmoid", "softmax", "stack", "std", "sub", "sum", "t",
    "tanh", "transpose", "var", "var_mean", "where", "zero_",
]
QUICK_SAMPLES, FULL_SAMPLES = 2, 4
PROGRESS_LINES_EVERY = 30.0  # seconds between the plain progress lines in a log


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend-module", default=os.environ.get("CONFORMANCE_BACKEND", "torch_dml"),
                        help="the backend's import module (env CONFORMANCE_BACKEND; default torch_dml)")
    parser.add_argument("--device", default=os.environ.get("CONFORMANCE_DEVICE", "dml"),
                        help="its device name (env CONFORMANCE_DEVICE; default dml)")
    parser.add_argument("--generated", default=os.environ.get("CONFORMANCE_GENERATED", ""),
                        help="where the generated pytest modules go (default <out>/generated)")
    parser.add_argument("--out", default="reports/conformance", help="the report folder")
    parser.add_argument("--expectations", default=os.environ.get("CONFORMANCE_EXPECTATIONS", ""),
                        help="folder of expectation files (env CONFORMANCE_EXPECTATIONS; default "
                             "conformance/expectations)")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="generate if needed, run the suite and write the report")
    _common(run)
    run.add_argument("--quick", action="store_true", help="the CI profile: a fixed set of ops, 2 samples each")
    run.add_argument("--ops", default="", help="comma-separated OpInfo names (default: all, or the quick set)")
    run.add_argument("--dtypes", default="", help="comma-separated dtypes, e.g. float32,int64")
    run.add_argument("--variants", default="", help="comma-separated: forward,inplace,out,backward (default all)")
    run.add_argument("--max-samples", type=int, default=0,
                     help=f"samples per case; default {QUICK_SAMPLES} quick, {FULL_SAMPLES} full")
    run.add_argument("--workers", type=int, default=int(os.environ.get("CONFORMANCE_WORKERS", "2")),
                     help="pytest-xdist workers (1: in one process)")
    run.add_argument("--baseline", default="", help="an earlier report.json to diff against")
    run.add_argument("--update-expectations", action="store_true",
                     help="rewrite this adapter class's expectations from the run's FAIL/ERROR cases")
    run.add_argument("--check", action="store_true",
                     help="exit 1 when a case is FAIL, ERROR or XPASS (default: 0 once the report is written)")
    run.add_argument("--pytest-args", default="", help="extra pytest arguments, space-separated")
    run.add_argument("--progress", default=os.environ.get("CONFORMANCE_PROGRESS", "auto"),
                     choices=("auto", "tty", "lines", "off"),
                     help="the live view: tty (bars redrawn in place), lines (plain lines, for CI logs), off "
                          "(pytest's dots); auto: tty when stdout is a terminal (env CONFORMANCE_PROGRESS)")
    run.add_argument("--report-every", type=float, default=60.0,
                     help="seconds between rewrites of the partial report while the run goes on (default 60; "
                          "longer when a rewrite is slow: it takes CPU from the tests)")
    rebuild = sub.add_parser("report", help="rebuild the report from a run's results.jsonl (e.g. an interrupted run)")
    _common(rebuild)
    rebuild.add_argument("--results", default="", help="default <out>/results.jsonl")
    rebuild.add_argument("--wall-time", type=float, default=0.0, help="the run's wall time to record, seconds")
    rebuild.add_argument("--baseline", default="", help="an earlier report.json to diff against")
    generate = sub.add_parser("generate", help="(re)generate the pytest modules only")
    _common(generate)
    generate.add_argument("--force", action="store_true", help="even when the key has not changed")
    return parser.parse_args(argv)


def generated_dir(args: argparse.Namespace) -> Path:
    return Path(args.generated) if args.generated else Path(args.out) / "generated"


def prepare(args: argparse.Namespace, force: bool = False) -> dict[str, Any]:
    from conformance import backend as backend_info
    from conformance import generate

    backend_info.load(args.backend_module, args.device)  # before torch.testing._internal
    started = time.perf_counter()
    regenerated, manifest = generate.ensure(generated_dir(args), args.backend_module, args.device, force)
    state = f"regenerated in {time.perf_counter() - started:.1f} s" if regenerated else "up to date"
    cases = sum(o["cases"] for o in manifest["ops"].values())
    print(f"conformance: suite {generated_dir(args)} (key {manifest['key']}, {len(manifest['ops'])} OpInfos, "
          f"{cases} cases, {len(manifest['registered'])} registered overloads): {state}", flush=True)
    return manifest


def pytest_command(args: argparse.Namespace, results: Path) -> list[str]:
    folder = generated_dir(args)
    ops = args.ops or (",".join(QUICK_OPS) if args.quick else "")
    samples = args.max_samples or (QUICK_SAMPLES if args.quick else FULL_SAMPLES)
    command = [sys.executable, "-m", "pytest", str(folder), "-c", str(folder / "pytest.ini"), "--rootdir", str(folder),
               "-p", "no:cacheprovider", "-q", "--tb=no", "-rN", "-W", "ignore",
               "--conformance-backend", args.backend_module, "--conformance-device", args.device,
               "--conformance-max-samples", str(samples), "--conformance-results", str(results)]
    if args.expectations:
        command += ["--conformance-expectations", args.expectations]
    for option, value in (("--conformance-ops", ops), ("--conformance-dtypes", args.dtypes),
                          ("--conformance-variants", args.variants)):
        if value:
            command += [option, value]
    if args.workers > 1:
        command += ["-n", str(args.workers)]
    if getattr(args, "progress", "off") != "off":
        command += ["--conformance-progress", args.progress,
                    "--conformance-progress-every", str(PROGRESS_LINES_EVERY)]
    return command + args.pytest_args.split()


def read_rows(results: Path, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The plugin's rows; a row left by a crashed test names only its function: fill in its op. A last line
    without its newline is being written (or was cut by a crash): it is left out."""
    rows = []
    text = results.read_text() if results.exists() else ""
    for line in text.split("\n")[:-1]:
        row = json.loads(line)
        if "function" in row:
            entry = manifest["ops"].get(row.pop("function"), {})
            row = {"op": entry.get("op", "?"), "family": entry.get("family", ""), "samples": 0,
                   "sample_statuses": {}, "max_abs_error": 0.0, "max_rel_error": 0.0, "overloads": [],
                   "time_s": 0.0, "sample_results": [], "fallbacks": {}, "tolerance": None, "expectation": "",
                   **row}
        rows.append(row)
    rows.sort(key=lambda r: (r["op"], r["variant"], r["dtype"]))
    return rows


def source_commit() -> str:
    """The checkout's commit, `+dirty` when tracked files differ from it: a published report says what it
    tested. Empty outside a git checkout (an installed package)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    try:
        head, changed = git("rev-parse", "--short=7", "HEAD"), git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return ""
    return head + ("+dirty" if changed else "")


def untested_rows(overloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from conformance import statuses

    return [{"op": o["name"], "variant": "forward", "dtype": "-", "status": statuses.UNTESTED, "samples": 0,
             "sample_statuses": {}, "max_abs_error": 0.0, "max_rel_error": 0.0,
             "message": "registered for the device, reached by no sample", "overloads": [o["name"]],
             "time_s": 0.0, "family": "", "test_id": "", "sample_results": [], "fallbacks": {}, "tolerance": None,
             "expectation": ""}
            for o in overloads if o["registered"] and not o["exercised"]]


def finish(args: argparse.Namespace, rows: list[dict[str, Any]], manifest: dict[str, Any], wall: float,
           exit_code: int, partial: dict[str, Any] | None = None,
           baseline: dict[str, Any] | None = None) -> dict[str, Any]:
    """Writes the report. A partial one (an unfinished run) lists no UNTESTED overloads: what no test
    has reached yet may still be reached, and it never rewrites the expectations. `baseline`: the
    --baseline report read before this run wrote anything (it may be the report this run replaces)."""
    from conformance import backend as backend_info
    from conformance import expectations, report

    meta = backend_info.describe(args.backend_module, args.device)
    fallbacks: dict[str, int] = {}
    for row in rows:
        for name, count in row.get("fallbacks", {}).items():
            fallbacks[name] = fallbacks.get(name, 0) + count
    overloads = report.overload_table(rows, manifest["registered"], backend_info.dispatch_kind)
    rows = rows + ([] if partial else untested_rows(overloads))
    samples = args.max_samples or (QUICK_SAMPLES if args.quick else FULL_SAMPLES)
    suite = {"key": manifest["key"], "generated_dir": str(generated_dir(args)), "workers": args.workers,
             "max_samples": samples, "ops": args.ops or ("quick set" if args.quick else "all"),
             "dtypes": args.dtypes or "all", "variants": args.variants or "all", "pytest_exit_code": exit_code,
             "commit": source_commit()}
    data = report.build({"generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                         "profile": "quick" if args.quick else ("full" if not (args.ops or args.dtypes
                                                                               or args.variants) else "custom"),
                         "wall_time_s": round(wall, 1), "backend": meta, "suite": suite,
                         **({"partial": partial} if partial else {})}, rows, overloads, fallbacks)
    if baseline is None and args.baseline:
        baseline = report.read(Path(args.baseline))
    if baseline is not None:
        data["diff"] = report.diff(data, baseline)
    report.render(data, Path(args.out))
    if args.update_expectations and partial:
        print("conformance: expectations left as they are: the run did not finish")
    elif args.update_expectations:
        folder = Path(args.expectations) if args.expectations else expectations.HERE
        path = folder / f"{meta['adapter_class']}.yaml"
        written = expectations.update(path, meta["adapter_class"], rows)
        print(f"conformance: wrote {sum(e.kind == 'xfail' for e in written)} expected failures to {path}")
    return data


def run(args: argparse.Namespace) -> int:
    from conformance import partial, report

    started = time.perf_counter()
    manifest = prepare(args)
    baseline = report.read(Path(args.baseline)) if args.baseline else None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    results.unlink(missing_ok=True)
    partial.collected_path(results).unlink(missing_ok=True)
    env = {**os.environ, "TORCH_DML_FALLBACK_WARN": os.environ.get("TORCH_DML_FALLBACK_WARN", "0")}
    command = pytest_command(args, results)
    print("conformance: " + " ".join(command), flush=True)
    print(f"conformance: report in {out}/, rewritten every {args.report_every:g} s while the run goes on",
          flush=True)
    written = [-1]

    def snapshot() -> None:
        rows = read_rows(results, manifest)
        if len(rows) != written[0]:
            written[0] = len(rows)
            finish(args, rows, manifest, time.perf_counter() - started, -1,
                   partial.marker(len(rows), partial.collected_tests(results), partial.RUNNING), baseline)

    exit_code, stopped = partial.supervise(command, env, args.report_every, snapshot)
    if not results.exists():
        print(f"conformance: pytest exited {exit_code} without results", file=sys.stderr)
        return partial.EXIT_CODES.get(_signal_of(stopped), exit_code or 1)
    rows = read_rows(results, manifest)
    unfinished = partial.final_marker(len(rows), partial.collected_tests(results), exit_code, stopped)
    data = finish(args, rows, manifest, time.perf_counter() - started, exit_code, unfinished, baseline)
    totals = ", ".join(f"{k} {v}" for k, v in data["totals"].items() if v)
    print(f"conformance: {totals}; wall time {data['wall_time_s']:.1f} s; "
          f"report in {out}/ (report.json, report.md, index.html)")
    if unfinished:
        print(f"conformance: the report is {partial.describe(unfinished)}", file=sys.stderr)
    if stopped:
        return partial.EXIT_CODES.get(_signal_of(stopped), 1)
    if args.check:
        bad = data["totals"]["FAIL"] + data["totals"]["ERROR"] + data["totals"]["XPASS"]
        return 1 if bad or unfinished else 0
    return 0


def _signal_of(stopped: str) -> int:
    from conformance import partial

    return next((signum for signum, name in partial.SIGNAL_NAMES.items() if name == stopped), 0)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.command == "generate":
        prepare(args, force=args.force)
        return 0
    if args.command == "report":
        manifest = prepare(args)
        results = Path(args.results) if args.results else Path(args.out) / "results.jsonl"
        defaults = {"quick": False, "ops": "", "dtypes": "", "variants": "", "max_samples": 0, "workers": 0,
                    "update_expectations": False}
        for name, value in defaults.items():
            setattr(args, name, getattr(args, name, value))
        from conformance import partial

        rows = read_rows(results, manifest)
        total = partial.collected_tests(results)
        unfinished = (partial.marker(len(rows), total, "rebuilt from the results of an unfinished run")
                      if total is not None and len(rows) < total else None)
        data = finish(args, rows, manifest, args.wall_time, -1, unfinished)
        print(f"conformance: report from {results} ({len(data['results'])} rows) in {args.out}/")
        return 0
    return run(args)
