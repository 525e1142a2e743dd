"""Writes docs/generated/*.md (matrix, op coverage, compatibility) before Sphinx reads the sources.

DOCS_REPORTS (paths or folders of conformance reports, separated by os.pathsep) replaces the committed full
runs of docs/data/cells/, e.g. with those and the reports of every CI cell; DOCS_JUNIT (pytest
--junitxml output) turns the feature marks into test results.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from matrix import model, pages


def generate(app: Sphinx) -> None:
    reports = [p for p in os.environ.get("DOCS_REPORTS", "").split(os.pathsep) if p] or None
    junit = os.environ.get("DOCS_JUNIT") or None
    pages.write(model.load(), Path(app.srcdir) / "generated", reports, Path(junit) if junit else None)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
