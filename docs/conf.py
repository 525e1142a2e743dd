"""Sphinx configuration: MyST Markdown pages, built offline with warnings as errors (tox -e docs)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parent), str(HERE / "_ext")]

project = "torch-dml"
author = "torch-dml contributors"
copyright = "torch-dml contributors"

extensions = ["myst_parser", "generated_pages"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "data", "README.md"]
myst_heading_anchors = 3
html_theme = "alabaster"
html_theme_options = {"description": "A vendor-neutral PyTorch GPU backend", "fixed_sidebar": True}
html_static_path: list[str] = []
