"""The files generated from backend/ops.yaml are up to date, and the drift check notices a change."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from backend.codegen import gen_elementwise

ROOT = Path(__file__).resolve().parent.parent


def test_generated_files_match_the_table():
    result = subprocess.run([sys.executable, "-m", "backend.codegen", "--check"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_changed_row_changes_the_output():
    rows = gen_elementwise.load_rows()
    before = gen_elementwise.render_ops_header(rows)
    rows[0].exprs["float"] = "a + T(1)"
    assert gen_elementwise.render_ops_header(rows) != before


def test_registrations_name_every_overload_once():
    text = gen_elementwise.REGISTRATIONS.read_text()
    overloads = [o for row in gen_elementwise.load_rows() for o in row.overloads]
    assert len(overloads) == len(set(overloads))
    for overload in overloads:
        assert text.count(f'm.impl("{overload}",') == 1, overload
