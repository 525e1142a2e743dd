"""python -m conformance run [--quick] [--ops ...] [--dtypes ...] [--workers N] [--backend-module M --device D]"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
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


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the suite and write the report")
    run.add_argument("--quick", action="store_true", help="the CI profile: a fixed set of ops, 2 samples each")
    run.add_argument("--ops", default="", help="comma-separated OpInfo names (default: all, or the quick set)")
    run.add_argument("--dtypes", default="", help="comma-separated dtypes, e.g. float32,int64")
    run.add_argument("--max-samples", type=int, default=0, help="samples per (op, dtype); default 2 quick, 6 full")
    run.add_argument("--workers", type=int, default=int(os.environ.get("CONFORMANCE_WORKERS", "2")))
    run.add_argument("--backend-module", default=os.environ.get("CONFORMANCE_BACKEND", "torch_dml"))
    run.add_argument("--device", default=os.environ.get("CONFORMANCE_DEVICE", "dml"))
    run.add_argument("--out", default="reports/conformance")
    run.add_argument("--baseline", default="", help="an earlier report.json to diff against")
    run.add_argument("--update-expectations", action="store_true", help="rewrite this adapter class's expectations")
    run.add_argument("--shard", default="", help=argparse.SUPPRESS)
    run.add_argument("--shard-out", default="", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def select_ops(op_db: list[Any], args: argparse.Namespace) -> list[Any]:
    wanted = [n for n in args.ops.split(",") if n] or (QUICK_OPS if args.quick else [])
    ops = [op for op in op_db if not wanted or op.name in wanted or getattr(op, "full_name", op.name) in wanted]
    seen, unique = set(), []
    for op in ops:  # op_db holds several variants per name; each full name once
        key = (op.name, op.variant_test_name)
        if key not in seen:
            seen.add(key)
            unique.append(op)
    return unique


def run_shard(args: argparse.Namespace) -> dict[str, Any]:
    """Runs this process's share of the ops and returns its rows and fallback counts."""
    from conformance import backend as backend_info

    backend = backend_info.load(args.backend_module, args.device)  # before torch.testing._internal
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    from conformance.runner import Runner

    ops = select_ops(op_db, args)
    index, count = (int(x) for x in args.shard.split("/")) if args.shard else (0, 1)
    ops = ops[index::count]
    has_f64 = bool(getattr(backend, "has_float64_support", lambda i: True)(0))
    max_samples = args.max_samples or (2 if args.quick else 6)
    runner = Runner(backend, args.device, max_samples, has_f64)
    wanted_dtypes = {d for d in args.dtypes.split(",") if d}
    reset = getattr(backend, "reset_fallback_counts", lambda: None)
    counts = getattr(backend, "fallback_counts", dict)
    reset()
    rows = []
    for i, op in enumerate(ops, 1):
        started = time.perf_counter()
        dtypes = sorted(op.supported_dtypes("cpu"), key=str)
        cells = [runner.run_cell(op, dtype) for dtype in dtypes
                 if not wanted_dtypes or str(dtype).removeprefix("torch.") in wanted_dtypes]
        rows.extend(c.as_dict() for c in cells)
        summary = " ".join(f"{s}={sum(c.status == s for c in cells)}" for s in sorted({c.status for c in cells}))
        print(f"[{index}:{i}/{len(ops)}] {getattr(op, 'full_name', op.name)}: {summary} "
              f"({time.perf_counter() - started:.1f} s)", flush=True)
        torch.manual_seed(0)
    return {"results": rows, "fallbacks": counts()}


def merge(parts: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    rows, fallbacks = [], {}
    for part in parts:
        rows.extend(part["results"])
        for name, count in part["fallbacks"].items():
            fallbacks[name] = fallbacks.get(name, 0) + count
    rows.sort(key=lambda r: (r["op"], r["dtype"]))
    return rows, fallbacks


def run(args: argparse.Namespace) -> int:
    if args.shard:
        result = run_shard(args)
        Path(args.shard_out).write_text(json.dumps(result))
        return 0
    started = time.perf_counter()
    if args.workers <= 1:
        parts = [run_shard(args)]
    else:
        with tempfile.TemporaryDirectory() as scratch:
            outputs = [Path(scratch) / f"shard{i}.json" for i in range(args.workers)]
            base = ["run", "--ops", args.ops, "--dtypes", args.dtypes, "--max-samples", str(args.max_samples),
                    "--backend-module", args.backend_module, "--device", args.device, *(["--quick"] if args.quick else [])]
            procs = [subprocess.Popen([sys.executable, "-m", "conformance", *base, "--workers", "1",
                                       "--shard", f"{i}/{args.workers}", "--shard-out", str(outputs[i])])
                     for i in range(args.workers)]
            codes = [p.wait() for p in procs]
            if any(codes):
                print(f"conformance: a worker failed (exit codes {codes})", file=sys.stderr)
                return 1
            parts = [json.loads(o.read_text()) for o in outputs]
    rows, fallbacks = merge(parts)
    return finish(args, rows, fallbacks, time.perf_counter() - started)


def finish(args: argparse.Namespace, rows: list[dict[str, Any]], fallbacks: dict[str, int], wall: float) -> int:
    from conformance import backend as backend_info
    from conformance import expectations, report, statuses

    backend_info.load(args.backend_module, args.device)
    meta = backend_info.describe(args.backend_module, args.device)
    expected = expectations.load(meta["adapter_class"])
    for row in rows:
        row["status"], reason = expectations.apply(row["status"], row["op"], row["dtype"], expected)
        if reason:
            row["message"] = reason
    exercised = {o for row in rows for o in row["overloads"]}
    overloads = []
    for name in backend_info.registered_overloads():
        short = name.removeprefix("aten::")
        overloads.append({"name": short, "dispatch": backend_info.dispatch_kind(name),
                          "exercised": short in exercised})
    for o in overloads:
        if not o["exercised"]:
            rows.append({"op": o["name"], "variant": "forward", "dtype": "-", "status": statuses.UNTESTED,
                         "samples": 0, "sample_statuses": {}, "max_abs_error": 0.0, "max_rel_error": 0.0,
                         "message": "registered for the device, reached by no sample", "overloads": [o["name"]],
                         "time_s": 0.0})
    data = report.build({"generated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                         "profile": "quick" if args.quick else "full", "wall_time_s": round(wall, 1),
                         "backend": meta}, rows, overloads, fallbacks)
    if args.baseline:
        data["diff"] = report.diff(data, json.loads(Path(args.baseline).read_text()))
    out = Path(args.out)
    report.render(data, out)
    if args.update_expectations:
        failures = [(r["op"], r["dtype"], r["message"]) for r in rows if r["status"] in (statuses.FAIL, statuses.ERROR)]
        expectations.write(expectations.HERE / f"{meta['adapter_class']}.yaml", meta["adapter_class"], failures)
    totals = ", ".join(f"{k} {v}" for k, v in data["totals"].items() if v)
    print(f"conformance: {totals}; wall time {wall:.1f} s; report in {out}/ (report.json, report.md, index.html)")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    return run(args)
