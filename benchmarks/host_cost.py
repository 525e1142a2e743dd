"""Host cost of one small dispatch and of a tiny op followed by `.item()` (issue 16, host path).

    python -m benchmarks.host_cost                  # wall clock per op, medians (any adapter, CUDA too)
    python -m benchmarks.host_cost --callgrind      # host instructions per op and per function (valgrind)
    python -m benchmarks.host_cost --loop add --iters 200   # one loop, what --callgrind runs twice

Wall clock moves with the machine's load; instruction counts do not. `--callgrind` runs each loop under
valgrind's callgrind twice, with N and 2N iterations after the same warm-up, and divides the difference by
N: what one more iteration costs, the synchronisation at the end cancelled out. Collection is on only
inside the measured loop (import, compilation and warm-up are left out), and only the calling thread is
counted (`--separate-threads`), so on lavapipe the driver threads that execute the shader are left out and
what remains is the host path a GPU would pay: Python, the dispatcher, torch_dml's recording and wgpu's.
"""

from __future__ import annotations

import argparse
import collections
import glob
import operator
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

ELEMENTS = 1 << 16
LOOPS = ("add", "item")


def make_loop(name: str, device: str) -> Callable[[int], None]:
    """The measured work, `iters` times: `add` records 64K-float `add_`s with one synchronisation at the
    end; `item` runs `(a + 1).sum().item()`, a dispatch or two, a submit, a wait and a 4-byte read."""
    a = torch.rand(ELEMENTS, device=device)
    b = torch.rand(ELEMENTS, device=device)
    if name == "add":
        def add(iters: int) -> None:
            for _ in range(iters):
                a.add_(b)
            sync(device)
        return add

    def item(iters: int) -> None:
        for _ in range(iters):
            (a + 1).sum().item()
    return item


def sync(device: str) -> None:
    kind = torch.device(device).type
    if kind != "cpu":
        getattr(torch, kind).synchronize()


def device_name(requested: str | None) -> str:
    if requested:
        return requested
    if torch.cuda.is_available():
        return "cuda"
    import torch_dml  # noqa: F401  (registers the dml device)
    return "dml"


def run_once(loop: str, iters: int, device: str) -> None:
    if device.startswith("dml"):
        import torch_dml  # noqa: F401
    fn = make_loop(loop, device)
    fn(20)  # compiles the kernels, fills the caches
    # operator.call is a C function nothing else here calls: --callgrind collects only inside it.
    operator.call(fn, iters)


def wall_clock(device: str, repeats: int) -> None:
    if device.startswith("dml"):
        import torch_dml  # noqa: F401
    print(f"device {device}, {ELEMENTS} float32 elements, median of {repeats} samples")
    for loop, iters in (("add", 200), ("item", 50)):
        fn = make_loop(loop, device)
        fn(20)
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn(iters)
            samples.append((time.perf_counter() - start) / iters)
        label = "a.add_(b), 200 per sync" if loop == "add" else "(a + 1).sum().item()"
        print(f"  {label:28s} median {statistics.median(samples) * 1e6:8.1f} us/op"
              f"  (min {min(samples) * 1e6:.1f}, max {max(samples) * 1e6:.1f})")


def callgrind_totals(out_file: str, inclusive: bool = False) -> tuple[int, dict[str, int], dict[str, int]]:
    """Instructions of the file's thread: in all, per function (self cost, or with its callees when
    `inclusive`) and per shared object."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", f"--inclusive={'yes' if inclusive else 'no'}",
                           "--auto=no", out_file],
                          capture_output=True, text=True, check=True).stdout
    total = 0
    per_function: dict[str, int] = collections.defaultdict(int)
    per_object: dict[str, int] = collections.defaultdict(int)
    for line in text.splitlines():
        found = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if not found:
            continue
        count = int(found.group(1).replace(",", ""))
        name = found.group(2).strip()
        if name.startswith("PROGRAM TOTALS"):
            total = count
            continue
        # "file:function [object]": the file differs between checkouts and the object is grouped apart.
        obj = re.search(r" \[([^\]]*)\]$", name)
        if obj:
            name = name[:obj.start()]
        per_object[os.path.basename(obj.group(1)) if obj else "?"] += count
        per_function[name.split(":", 1)[1] if re.match(r"^[^\s:]*:[^:]", name) else name] += count
    return total, per_function, per_object


def main_thread_file(prefix: str) -> str:
    """The calling thread's output (callgrind numbers threads from 1, the main one first)."""
    files = sorted(glob.glob(prefix + "*"))
    main = [f for f in files if f.endswith("-01")]
    if not main:
        raise SystemExit(f"callgrind wrote no output for thread 1 under {prefix}: {files}")
    return main[0]


def callgrind(device: str, iters: int, top: int, keep: str | None) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        work = keep or scratch
        os.makedirs(work, exist_ok=True)
        results = {}
        for loop in LOOPS:
            counts = []
            for n in (iters, 2 * iters):
                prefix = os.path.join(work, f"{loop}-{n}")
                command = ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--smc-check=all",
                           "--collect-atstart=no", "--toggle-collect=_operator_call",
                           f"--callgrind-out-file={prefix}", sys.executable, "-m", "benchmarks.host_cost",
                           "--loop", loop, "--iters", str(n), "--device", device]
                # A fixed hash seed keeps Python's dict probing, and so the counts, the same run to run.
                subprocess.run(command, check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": "0"},
                               cwd=Path(__file__).resolve().parent.parent)
                counts.append(callgrind_totals(main_thread_file(prefix)))
            results[loop] = counts
    for loop, ((total_n, funcs_n, objects_n), (total_2n, funcs_2n, objects_2n)) in results.items():
        label = "a.add_(b) (64K floats, one sync per loop)" if loop == "add" else "(a + 1).sum().item()"
        print(f"{label}: {(total_2n - total_n) / iters:,.0f} instructions per iteration (calling thread,"
              f" {iters} vs {2 * iters} iterations)")
        for title, before, after, count in (("shared object", objects_n, objects_2n, 8),
                                            ("function (self)", funcs_n, funcs_2n, top)):
            print(f"  per {title}:")
            delta = {name: (after.get(name, 0) - before.get(name, 0)) / iters for name in set(before) | set(after)}
            for name, per_op in sorted(delta.items(), key=lambda item: -item[1])[:count]:
                print(f"    {per_op:10,.0f}  {name[:160]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", help="dml (default without CUDA), cuda, cpu")
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--callgrind", action="store_true", help="instructions per op under valgrind")
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--top", type=int, default=25, help="functions listed per loop with --callgrind")
    parser.add_argument("--keep", metavar="DIR", help="keep callgrind's output files in DIR")
    parser.add_argument("--loop", choices=LOOPS, help="run one loop once (what --callgrind measures)")
    args = parser.parse_args()
    device = device_name(args.device)
    if args.loop:
        run_once(args.loop, args.iters, device)
    elif args.callgrind:
        callgrind(device, args.iters, args.top, args.keep)
    else:
        wall_clock(device, args.repeats)


if __name__ == "__main__":
    main()
