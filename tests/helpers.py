"""Running a snippet in a fresh interpreter, for behaviour that happens once per process
(autoload, environment variables read at start-up, warnings issued once)."""

from __future__ import annotations

import os
import subprocess
import sys


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=environment, timeout=300
    )
