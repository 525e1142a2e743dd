"""OpInfo-driven conformance suite: every op a PrivateUse1 backend runs, compared against the CPU.

    python -m conformance run --quick          # the CI profile
    python -m conformance run                  # everything

Results go to reports/conformance/ as report.json (the data), report.md and index.html (rendered from
the JSON). The backend is imported before torch.testing._internal, which freezes device lists on import.
"""

SCHEMA_VERSION = 1
