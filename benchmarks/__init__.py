"""Benchmarks: the same work timed on dml, on the CPU and (when present) on CUDA, CUDA in a process of
its own (PyTorch keeps one accelerator per process).

    python -m benchmarks --quick            # minutes on lavapipe
    python -m benchmarks --devices dml,cuda # a GPU machine

    python -m benchmarks run --quick --baseline auto   # checked against benchmarks/baselines/
    python -m benchmarks compare BASE.json NEW.json

Writes reports/bench/results.json, results.md and PNG plots; docs/benchmarks.md explains the columns.
"""
