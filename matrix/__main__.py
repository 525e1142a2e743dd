"""python -m matrix {check,render,merge,pages,publish}: see matrix/__init__.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from matrix import model, workflows


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m matrix", description=__doc__)
    parser.add_argument("--matrix", type=Path, default=model.MATRIX_FILE, help="the matrix file")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="validate matrix.yaml and fail when .github/workflows drifted from it")
    render = sub.add_parser("render", help="write .github/workflows/*.yml from matrix.yaml")
    render.add_argument("-o", "--out", type=Path, default=workflows.WORKFLOWS)
    merge = sub.add_parser("merge", help="merge per-cell conformance reports into one dashboard")
    merge.add_argument(
        "reports", nargs="+", help="report.json files or folders holding them; NAME=PATH names the cell"
    )
    merge.add_argument("-o", "--out", type=Path, default=Path("reports/dashboard"))
    pages = sub.add_parser("pages", help="write the docs' generated pages (matrix, coverage, compatibility)")
    pages.add_argument("-o", "--out", type=Path, default=model.ROOT / "docs" / "generated")
    pages.add_argument(
        "--reports", nargs="*", default=None, help="conformance reports (default: docs/data/cells)"
    )
    pages.add_argument(
        "--junit", type=Path, default=None, help="pytest --junitxml output for the feature marks"
    )
    publish = sub.add_parser(
        "publish", help="commit a cell's full conformance report to docs/data/cells/ (with its origin)"
    )
    publish.add_argument("cell", help="the matrix.yaml cell id the report belongs to")
    publish.add_argument("report", type=Path, help="its report.json or report.json.gz")
    publish.add_argument("--commit", default="", help="the commit it was built from (default: the report's)")
    publish.add_argument(
        "--run-command", default="python -m conformance run", help="the command that produced it"
    )
    publish.add_argument(
        "--machine", default="", help="the machine, driver, torch build (default: the report's)"
    )
    publish.add_argument("--to", type=Path, default=None, help="the folder (default docs/data/cells)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    matrix = model.load(args.matrix)
    found = model.problems(matrix)
    if found:
        print("matrix.yaml is not valid:\n  " + "\n  ".join(found), file=sys.stderr)
        return 1
    if args.command == "check":
        drifted = workflows.drift(matrix)
        if drifted:
            listing = "\n  ".join(drifted)
            print(f"workflows drifted; run python -m matrix render:\n  {listing}", file=sys.stderr)
            return 1
        print(f"matrix: {len(matrix.cells)} cells, every axis value covered; workflows up to date")
        return 0
    if args.command == "render":
        for path in workflows.write(matrix, args.out):
            print(f"wrote {path}")
        return 0
    if args.command == "merge":
        from matrix import merge

        site = merge.build_site(matrix, merge.collect(args.reports), args.out)
        print(f"dashboard: {site}")
        return 0
    if args.command == "pages":
        from matrix import pages

        for path in pages.write(matrix, args.out, args.reports, args.junit):
            print(f"wrote {path}")
        return 0
    if args.command == "publish":
        from matrix import publish

        folder = args.to or publish.CELLS
        try:
            path = publish.publish(
                matrix, args.cell, args.report, args.commit, args.run_command, args.machine, folder
            )
        except ValueError as refused:
            print(refused, file=sys.stderr)
            return 1
        print(f"wrote {path} and {folder / 'sources.yaml'}: commit both")
        return 0
    raise AssertionError(args.command)


if __name__ == "__main__":
    sys.exit(main())
