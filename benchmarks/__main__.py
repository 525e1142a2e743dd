"""python -m benchmarks [--quick] [--devices cpu,dml,cuda] [--suites ...] [--repeats N] [--out DIR]"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import sys
from pathlib import Path

import torch

from benchmarks import report, runner, suites


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes: minutes on a software adapter")
    parser.add_argument("--devices", default="", help="default: cpu,dml and cuda when available")
    parser.add_argument("--suites", default=",".join(suites.SUITES), help="comma-separated: " + ", ".join(suites.SUITES))
    parser.add_argument("--repeats", type=int, default=0, help="timed repeats per row (default 3 quick, 10 full)")
    parser.add_argument("--out", default="reports/bench")
    args = parser.parse_args()
    devices = [d for d in args.devices.split(",") if d] or (
        ["cpu", "dml"] + (["cuda"] if torch.cuda.is_available() else []))
    chosen = [s for s in args.suites.split(",") if s]
    unknown = set(chosen) - set(suites.SUITES)
    if unknown:
        parser.error(f"unknown suites: {', '.join(sorted(unknown))}")
    repeats = args.repeats or (3 if args.quick else 10)
    kinds = {device: device.split(":")[0] for device in devices}
    apart = [device for device, kind in kinds.items() if kind == "cuda"] if "dml" in kinds.values() else []
    if "dml" in kinds.values():
        import torch_dml  # noqa: F401 -- registers the dml device
    result = runner.run(suites.cases(args.quick, chosen), [d for d in devices if d not in apart], repeats)
    if apart:
        result = runner.merge(result, runner.run_apart(
            ["--devices", ",".join(apart), "--suites", ",".join(chosen), "--repeats", str(repeats)]
            + (["--quick"] if args.quick else [])))
    result.update(generated=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  profile="quick" if args.quick else "full",
                  versions={"torch": torch.__version__, "wgpu": importlib.metadata.version("wgpu")})
    out = Path(args.out)
    report.write(result, out)
    print(f"benchmarks: {len(result['rows'])} rows in {result['wall_time_s']} s; report in {out}/ (results.json, "
          f"results.md{''.join(', ' + p for p in result['plots'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
