"""`tox -e wheel`: the release path, run here. Build the wheel against the installed torch, repair it with
the command cibuildwheel runs (pyproject.toml [tool.cibuildwheel.linux]), check its metadata, install it
into a fresh venv with the pinned torch (and no wgpu: the wheel carries wgpu-native), and run
wheels/smoke.py there.

The build works on a copy of the source tree (tracked and untracked, not ignored) with its objects in
TORCH_DML_BUILD_TEMP, so the developers' build/ and editable install are left alone.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 has no TOML reader of its own (tox.ini installs tomli there)
    import tomli as tomllib

from wheels import check_metadata

ROOT = Path(__file__).resolve().parent.parent


def run(command: list[str], **kwargs: object) -> None:
    print("+", shlex.join(command), flush=True)
    subprocess.run(command, check=True, **kwargs)  # type: ignore[call-overload]


def sync_sources(dest: Path) -> None:
    """Mirrors the working tree into dest, keeping mtimes (ninja rebuilds only what changed)."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    wanted = {name for name in listed if name and (ROOT / name).is_file()}
    for name in wanted:
        source, target = ROOT / name, dest / name
        if not target.exists() or target.stat().st_mtime != source.stat().st_mtime:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    for stale in [p for p in dest.rglob("*") if p.is_file() and "build" not in p.relative_to(dest).parts[:1]]:
        relative = stale.relative_to(dest).as_posix()
        if relative not in wanted and ".egg-info" not in relative and not relative.endswith((".so", ".pyd")):
            stale.unlink()


def repair_command(wheel: Path, dest: Path) -> str:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    template = config["tool"]["cibuildwheel"]["linux"]["repair-wheel-command"]
    return template.replace("{wheel}", shlex.quote(str(wheel))).replace("{dest_dir}", shlex.quote(str(dest)))


def venv_python(path: Path) -> Path:
    return path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, default=ROOT / ".tox" / "wheel-work")
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "wheelhouse")
    parser.add_argument("--no-smoke", action="store_true", help="stop after the repaired wheel is checked")
    args = parser.parse_args(argv)

    import torch

    from matrix import model

    matrix = model.load()
    torch_version = torch.__version__.split("+")[0]
    minor = ".".join(torch_version.split(".")[:2])
    work, out = args.work.resolve(), args.out.resolve()
    source, raw = work / "src", work / "dist"
    for folder in (source, raw, out):
        folder.mkdir(parents=True, exist_ok=True)
    for old in [*raw.glob("*.whl"), *out.glob("torch_dml-*.whl")]:
        old.unlink()

    sync_sources(source)
    environ = dict(os.environ)
    environ.setdefault("TORCH_DML_BUILD_TEMP", str(work / "build-temp"))
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(raw)]
    run([*pip_wheel, str(source)], env=environ)
    built = next(raw.glob("torch_dml-*.whl"))
    run(["bash", "-c", repair_command(built, out)])
    wheel = next(out.glob("torch_dml-*.whl"))
    check = [str(wheel), "--torch", minor, "--wgpu", matrix.wgpu, "--wgpu-native", matrix.wgpu_native]
    if check_metadata.main(check) != 0:
        return 1
    if args.no_smoke:
        return 0

    environment = work / "venv"
    shutil.rmtree(environment, ignore_errors=True)
    venv.create(environment, with_pip=True)
    python = venv_python(environment)
    # The torch this wheel was built against (the CPU build on the local index), and no wgpu: the wheel
    # carries wgpu-native, and smoke.py checks that the bundled copy is the one loaded.
    run([str(python), "-m", "pip", "install", "--quiet", f"torch=={torch_version}", str(wheel)])
    with tempfile.TemporaryDirectory() as elsewhere:  # not the source tree: import what was installed
        run([str(python), str(ROOT / "wheels" / "smoke.py"), "--require-adapter"], cwd=elsewhere)
    print(f"wheel: {wheel} built, repaired, installed in {environment} and smoke-tested")
    return 0


if __name__ == "__main__":
    sys.exit(main())
