"""The test matrix (matrix.yaml) and what is made from it.

    python -m matrix check                      # every axis value covered, every cell explained, no drift
    python -m matrix render                     # write .github/workflows/*.yml from matrix.yaml
    python -m matrix merge a.json b.json -o out/    # per-cell conformance reports -> one dashboard
    python -m matrix pages -o docs/generated/   # the docs' matrix, coverage and compatibility pages
    python -m matrix publish CELL report.json.gz --commit SHA   # a full run -> docs/data/cells/

Knowledge lives in matrix.yaml; the modules here only interpret it.
"""
