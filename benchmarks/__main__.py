"""python -m benchmarks [run] [--quick] [--devices cpu,dml,cuda] [--suites ...] [--repeats N] [--out DIR]
                          [--baseline auto|PATH] [--fail-on-regression] [--no-device-time]
python -m benchmarks compare BASE.json NEW.json [--fail-on-regression]"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks import compare


def commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).parent).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def check_against(result: dict[str, Any], baseline: str) -> Path | None:
    """Adds the regression check against `baseline` ("auto": the stored one for this adapter and profile)
    to `result`; returns None when auto found none, so the caller stores this run as the first."""
    path = compare.find_baseline(result) if baseline == "auto" else Path(baseline)
    if path is None:
        return None
    result["regression_check"] = {**compare.compare(compare.load(path), result), "path": str(path)}
    return path


def run(argv: list[str]) -> int:
    import torch

    from benchmarks import report, runner, suites

    parser = argparse.ArgumentParser(prog="python -m benchmarks run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes: minutes on a software adapter")
    parser.add_argument("--devices", default="", help="default: cpu,dml and cuda when available")
    parser.add_argument("--suites", default=",".join(suites.SUITES), help="comma-separated: " + ", ".join(suites.SUITES))
    parser.add_argument("--repeats", type=int, default=0, help="timed repeats per row (default 3 quick, 10 full)")
    parser.add_argument("--out", default="reports/bench")
    parser.add_argument("--baseline", default="", help="a results.json to check against, or auto: the one stored "
                        "in benchmarks/baselines/ for this adapter and profile (none stored: this run is written as one)")
    parser.add_argument("--fail-on-regression", action="store_true", help="exit 1 when the check finds a regression")
    parser.add_argument("--no-device-time", action="store_true", help="skip the profiled pass that times kernels")
    args = parser.parse_args(argv)
    devices = [d for d in args.devices.split(",") if d] or (
        ["cpu", "dml"] + (["cuda"] if torch.cuda.is_available() else []))
    chosen = [s for s in args.suites.split(",") if s]
    unknown = set(chosen) - set(suites.SUITES)
    if unknown:
        parser.error(f"unknown suites: {', '.join(sorted(unknown))}")
    if args.baseline not in ("", "auto") and not Path(args.baseline).is_file():
        parser.error(f"no baseline at {args.baseline}")
    repeats = args.repeats or (3 if args.quick else 10)
    kinds = {device: device.split(":")[0] for device in devices}
    apart = [device for device, kind in kinds.items() if kind == "cuda"] if "dml" in kinds.values() else []
    if "dml" in kinds.values():
        import torch_dml  # noqa: F401 -- registers the dml device
    cases = suites.cases(args.quick, chosen)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # rows.json holds the rows measured so far, the CUDA child's in apart/rows.json: a run cut short keeps them.
    result = runner.run(cases, [d for d in devices if d not in apart], repeats, not args.no_device_time,
                        rows_file=out / "rows.json")
    if apart:
        result = runner.merge(result, runner.run_apart(
            ["--devices", ",".join(apart), "--suites", ",".join(chosen), "--repeats", str(repeats)]
            + (["--quick"] if args.quick else []) + (["--no-device-time"] if args.no_device_time else []),
            out / "apart"))
    result.update(generated=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  profile="quick" if args.quick else "full", commit=commit(),
                  versions={"torch": torch.__version__, "wgpu": importlib.metadata.version("wgpu")})
    baseline = check_against(result, args.baseline) if args.baseline else None
    report.write(result, out)
    print(f"benchmarks: {len(result['rows'])} rows in {result['wall_time_s']} s; report in {out}/ (results.json, "
          f"results.md{''.join(', ' + p for p in result['plots'])})")
    if args.baseline and baseline is None:
        name = compare.baseline_name(result)
        (out / "baseline").mkdir(exist_ok=True)
        shutil.copy(out / "results.json", out / "baseline" / name)
        print(f"benchmarks: no stored baseline for {compare.adapter(result)!r}, profile {result['profile']}: this "
              f"run is written as {out / 'baseline' / name}; commit it as benchmarks/baselines/{name} to check "
              "later runs against it")
    return verdict(result.get("regression_check"), args.fail_on_regression)


def verdict(check: dict[str, Any] | None, fail_on_regression: bool) -> int:
    if check is None:
        return 0
    print(compare.markdown(check), end="")
    return 1 if fail_on_regression and check["regressions"] else 0


def compare_files(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks compare",
                                     description="dml rows of NEW.json slower than BASE.json beyond their noise")
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--fail-on-regression", action="store_true", help="exit 1 when a row regressed")
    args = parser.parse_args(argv)
    return verdict(compare.compare(compare.load(args.base), compare.load(args.new)), args.fail_on_regression)


def main(argv: list[str]) -> int:
    # Kineto logs two lines per profiler session at every level below 6 (the device-time pass opens one
    # per row); the rows' device_time_note says when a pass recorded nothing. Read when torch loads.
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    if argv[:1] == ["compare"]:
        return compare_files(argv[1:])
    return run(argv[1:] if argv[:1] == ["run"] else argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
