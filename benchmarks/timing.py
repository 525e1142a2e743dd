"""Honest timing: warm-up, device synchronisation around the timed region, median and spread."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch


def synchronize(device: str) -> None:
    kind = torch.device(device).type
    if kind == "cuda":
        torch.cuda.synchronize()
    elif kind != "cpu":
        getattr(torch, kind).synchronize()


@dataclass
class Timing:
    median_s: float
    min_s: float
    max_s: float
    repeats: int

    @property
    def spread(self) -> float:
        """(max - min) / median: how noisy the repeats were."""
        return (self.max_s - self.min_s) / self.median_s if self.median_s else 0.0


def measure(fn: Callable[[], object], device: str, repeats: int = 5, warmup: int = 2, inner: int = 1,
            host_only: bool = False) -> Timing:
    """Seconds per call of `fn` (each repeat runs it `inner` times between two synchronisations).

    `host_only` counts the calling thread's CPU time up to the synchronisation: the host cost of
    issuing the work, without waiting for the device (which, on lavapipe, is the CPU itself)."""
    clock = time.thread_time if host_only else time.perf_counter
    for _ in range(warmup):
        fn()
    synchronize(device)
    samples = []
    for _ in range(repeats):
        started = clock()
        for _ in range(inner):
            fn()
        issued = clock()
        synchronize(device)
        samples.append(((issued if host_only else clock()) - started) / inner)
    return Timing(statistics.median(samples), min(samples), max(samples), repeats)
