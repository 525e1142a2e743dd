"""Where a benchmark case's dml dispatches go: each kernel's launches per call, its workgroups (fewest,
median, most) and its share of the device time, for reading a step's occupancy without a GPU (a kernel
with fewer workgroups than a large GPU has cores leaves most of it idle, whatever lavapipe's times say).

    python -m benchmarks.kernel_grids "transformer encoder block step" [--quick] [--top 40]

Any case of `python -m benchmarks` (its `name`); the sizes are the full profile's unless --quick.
"""

from __future__ import annotations

import argparse
import statistics
import sys

import torch


def grids(name: str, quick: bool) -> tuple[int, list[tuple[str, int, list[int], float]]]:
    """(dispatches, [(kernel, launches, sorted workgroup counts, device seconds)]) of one call."""
    import torch_dml

    from benchmarks import suites

    cases = [c for c in suites.cases(quick, list(suites.SUITES)) if c.name == name]
    if not cases:
        raise SystemExit(f"no benchmark case named {name!r}")
    fn = cases[0].make("dml")
    fn()  # compile the kernels outside the record
    torch_dml.synchronize()
    torch_dml._C._start_kernel_timing(0)
    try:
        fn()
        torch_dml.synchronize()
    finally:
        timings = torch_dml._C._stop_kernel_timing(0)
    per_kernel: dict[str, tuple[list[int], list[float]]] = {}
    for kernel, start_ns, end_ns, _on_device, (x, y, z) in timings:
        groups, seconds = per_kernel.setdefault(kernel, ([], []))
        groups.append(x * y * z)
        seconds.append((end_ns - start_ns) * 1e-9)
    rows = [(kernel, len(groups), sorted(groups), sum(seconds)) for kernel, (groups, seconds) in per_kernel.items()]
    return len(timings), sorted(rows, key=lambda row: -row[3])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kernel_grids", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case", help="a benchmark case's name, e.g. 'ResNet-18 training step (SGD)'")
    parser.add_argument("--quick", action="store_true", help="the quick profile's sizes")
    parser.add_argument("--top", type=int, default=40, help="kernels shown, heaviest first")
    args = parser.parse_args(argv)
    import torch_dml

    dispatches, rows = grids(args.case, args.quick)
    total = sum(row[3] for row in rows) or 1.0
    print(f"{args.case} on {torch_dml.device_name(0)} (torch {torch.__version__}): {dispatches} dispatches, "
          f"{total * 1e3:.1f} ms of device time")
    print("| kernel | launches | workgroups (fewest / median / most) | device time |")
    print("| --- | ---: | --- | ---: |")
    for kernel, launches, groups, seconds in rows[:args.top]:
        print(f"| {kernel} | {launches} | {groups[0]} / {int(statistics.median(groups))} / {groups[-1]} | "
              f"{seconds / total:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
