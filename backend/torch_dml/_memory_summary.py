"""``torch.dml.memory_summary``: the allocator's counters as a table a person reads, in the layout of
``torch.cuda.memory_summary`` (rows per metric and pool, columns current / peak / allocated / freed)."""

from __future__ import annotations

from typing import Any

_ROWS = [
    ("allocated_bytes", "Allocated memory", True),
    ("active_bytes", "Active memory", True),
    ("requested_bytes", "Requested memory", True),
    ("reserved_bytes", "Reserved memory", True),
    ("allocation", "Allocations", False),
    ("active", "Active allocs", False),
    ("segment", "Buffers (segments)", False),
]
_POOLS = [("all", ""), ("large_pool", "from large pool"), ("small_pool", "from small pool")]
_COLUMNS = ("current", "peak", "allocated", "freed")
_WIDTH = 92


def _format_bytes(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(count) >= size:
            return f"{count / size:.2f} {unit}"
    return f"{count} B"


def render(device: str, stats: dict[str, Any], abbreviated: bool) -> str:
    """The table for one device; ``abbreviated`` keeps only the all-pools rows."""
    line = "=" * _WIDTH
    rule = "-" * _WIDTH
    lines = [
        line,
        f"|{f' torch.dml memory summary, device {device} ':^{_WIDTH - 2}}|",
        rule,
        (
            f"| {'retries: ' + str(stats.get('num_alloc_retries', 0)):<41}"
            f"| {'out-of-memory errors: ' + str(stats.get('num_ooms', 0)):<46}|"
        ),
        line,
        f"| {'Metric':<26}| {'Cur Usage':>13} | {'Peak Usage':>13} | {'Tot Alloc':>13} | {'Tot Freed':>13} |",
    ]
    for key, title, in_bytes in _ROWS:
        lines.append(rule)
        for pool, label in _POOLS[:1] if abbreviated else _POOLS:
            cells = [stats.get(f"{key}.{pool}.{column}", 0) for column in _COLUMNS]
            text = [_format_bytes(c) if in_bytes else str(c) for c in cells]
            name = title if not label else f"      {label}"
            lines.append(f"| {name:<26}| " + " | ".join(f"{t:>13}" for t in text) + " |")
    lines.append(line)
    return "\n".join(lines) + "\n"
