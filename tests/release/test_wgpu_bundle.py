"""The wgpu-native bundle the build puts in every wheel (backend/wgpu_bundle.py): taken from the pinned `wgpu`
(installed, or its wheel unpacked where it does not install), with the licences, and exactly what
wheels/check_metadata.py asks of a wheel; and the metadata setup.py writes requires no `wgpu`."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from backend import wgpu_bundle
from matrix import model
from wheels import check_metadata

ROOT = Path(__file__).resolve().parents[2]
MATRIX = model.load()
NAME = wgpu_bundle.TABLE.library_name()
COMMIT = "6aed50955d934ac36049ba8d002034841633ae02"


def fake_wgpu_wheel(folder: Path, library: str = NAME) -> Path:
    """The parts of a wgpu wheel the build reads, and one it must leave alone."""
    path = folder / f"wgpu-{MATRIX.wgpu}-py3-none-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("wgpu/__init__.py", "")
        archive.writestr(f"wgpu/resources/{library}", b"\x7fELF wgpu-native")
        archive.writestr("wgpu/resources/webgpu.h", "// header")
        archive.writestr(
            "wgpu/backends/wgpu_native/__init__.py",
            f'__version__ = "{MATRIX.wgpu_native}"\n__commit_sha__ = "{COMMIT}"\n',
        )
    return path


def wheel_with(folder: Path, bundle: Path) -> Path:
    """A wheel holding torch_dml/wgpu_native/ as the build wrote it, for check_metadata."""
    tag = {"win32": "win_amd64", "darwin": "macosx_14_0_arm64"}.get(sys.platform, "manylinux_2_28_x86_64")
    path = folder / f"torch_dml-0.1.0+torch2.13-cp311-cp311-{tag}.whl"
    metadata = (
        "Metadata-Version: 2.4\nName: torch-dml\nVersion: 0.1.0+torch2.13\nRequires-Dist: torch==2.13.*\n"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("torch_dml-0.1.0+torch2.13.dist-info/METADATA", metadata)
        archive.writestr("torch_dml/_C.cpython-311-x86_64-linux-gnu.so", b"\x7fELF")
        for file in bundle.iterdir():
            archive.write(file, f"torch_dml/{bundle.name}/{file.name}")
    return path


def test_unpacking_takes_the_library_headers_and_version_only(tmp_path: Path) -> None:
    package = wgpu_bundle.unpack(fake_wgpu_wheel(tmp_path), tmp_path / "out")
    assert package.wgpu == MATRIX.wgpu
    assert package.library().read_bytes() == b"\x7fELF wgpu-native"
    assert (package.resources / "webgpu.h").is_file()
    assert package.native_version() == (MATRIX.wgpu_native, COMMIT)
    assert not (tmp_path / "out" / "wgpu" / "__init__.py").exists()


def test_a_wgpu_wheel_without_this_platforms_library_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=NAME):
        wgpu_bundle.unpack(fake_wgpu_wheel(tmp_path, library="other-platform.bin"), tmp_path / "out")


def test_without_the_pinned_wgpu_installed_the_wheel_is_downloaded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    downloads: list[Path] = []

    def download(version: str, dest: Path) -> Path:
        downloads.append(dest)
        dest.mkdir(parents=True)
        return fake_wgpu_wheel(dest)

    monkeypatch.setattr(wgpu_bundle, "installed", lambda version: None)
    monkeypatch.setattr(wgpu_bundle, "download", download)
    first = wgpu_bundle.locate(MATRIX.wgpu, tmp_path)
    again = wgpu_bundle.locate(MATRIX.wgpu, tmp_path)
    assert first == again and first.library().is_file()
    assert len(downloads) == 1


def test_the_bundle_holds_what_check_metadata_requires(tmp_path: Path) -> None:
    package = wgpu_bundle.unpack(fake_wgpu_wheel(tmp_path), tmp_path / "unpacked")
    written = wgpu_bundle.write(package, tmp_path / "torch_dml")
    names = sorted(p.name for p in written)
    expected = [NAME, *wgpu_bundle.TABLE.LICENCE_FILES, wgpu_bundle.TABLE.VERSION_FILE]
    assert names == sorted(expected)
    bundle = tmp_path / "torch_dml" / wgpu_bundle.TABLE.BUNDLE_DIR
    assert "MIT License" in (bundle / "LICENSE.MIT").read_text()
    assert "Apache License" in (bundle / "LICENSE.APACHE").read_text()
    assert "BSD 2-Clause" in (bundle / "LICENSE.wgpu-py").read_text()
    facts = check_metadata.inspect(wheel_with(tmp_path, bundle))
    assert check_metadata.problems(facts, MATRIX.wgpu, MATRIX.wgpu_native, "2.13") == []


def test_matrix_records_the_wgpu_native_the_pinned_wgpu_carries() -> None:
    package = wgpu_bundle.installed(MATRIX.wgpu)
    if package is None:
        pytest.skip(f"wgpu {MATRIX.wgpu} is not installed here (Python 3.10)")
    assert package.native_version()[0] == MATRIX.wgpu_native
    assert package.library().is_file()
    assert MATRIX.wgpu == wgpu_bundle.WGPU_VERSION


def test_setup_writes_no_wgpu_requirement(tmp_path: Path) -> None:
    environ = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    subprocess.run(
        [sys.executable, "setup.py", "-q", "egg_info", "--egg-base", str(tmp_path)],
        cwd=ROOT,
        env=environ,
        check=True,
        capture_output=True,
        timeout=300,
    )
    requires = next(tmp_path.glob("*.egg-info")).joinpath("requires.txt").read_text().split()
    assert len(requires) == 1 and requires[0].startswith("torch=="), requires
