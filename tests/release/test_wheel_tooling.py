"""Wheel tooling: the metadata check on wheels made here, the wgpu-native bundle the build puts in them,
before_build's torch choice, and the cibuildwheel settings (schema, selected builds, repair commands that
keep torch's libraries out)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 has no TOML reader of its own (tox.ini installs tomli there)
    import tomli as tomllib

from backend import wgpu_bundle
from matrix import model
from wheels import before_build, check_metadata, local

ROOT = Path(__file__).resolve().parents[2]
CIBW = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
WGPU, WGPU_NATIVE = model.load().wgpu, model.load().wgpu_native
VERSION_TEXT = f"wgpu-native: {WGPU_NATIVE}\nwgpu-native-commit: 0123abc\nwgpu: {WGPU}\n"
LINUX = "manylinux_2_28_x86_64"


def bundle(platform: str = "linux", version_text: str = VERSION_TEXT) -> dict[str, str]:
    """torch_dml/wgpu_native/ as the build writes it, for a wheel's files."""
    names = [wgpu_bundle.TABLE.library_name(platform), *wgpu_bundle.TABLE.LICENCE_FILES]
    files = {f"{check_metadata.BUNDLE}/{name}": "" for name in names}
    return {**files, check_metadata.VERSION_FILE: version_text}


def make_wheel(
    folder: Path,
    version: str = "0.1.0+torch2.13",
    requires: tuple[str, ...] = ("torch==2.13.*",),
    extra_files: tuple[str, ...] = (),
    filename_version: str = "",
    platform_tag: str = LINUX,
    bundled: dict[str, str] | None = None,
) -> Path:
    path = folder / f"torch_dml-{filename_version or version}-cp311-cp311-{platform_tag}.whl"
    metadata = "Metadata-Version: 2.4\nName: torch-dml\nVersion: " + version + "\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"torch_dml-{version}.dist-info/METADATA", metadata)
        archive.writestr("torch_dml/__init__.py", "")
        archive.writestr("torch_dml/_C.cpython-311-x86_64-linux-gnu.so", b"\x7fELF")
        for name, text in (bundle() if bundled is None else bundled).items():
            archive.writestr(name, text)
        for name in extra_files:
            archive.writestr(name, b"")
    return path


def problems(wheel: Path, minor: str = "2.13") -> list[str]:
    return check_metadata.problems(check_metadata.inspect(wheel), WGPU, WGPU_NATIVE, minor)


def test_a_wheel_that_follows_the_rules_passes(tmp_path: Path) -> None:
    assert problems(make_wheel(tmp_path)) == []
    command = [str(make_wheel(tmp_path)), "--torch", "2.13", "--wgpu", WGPU, "--wgpu-native", WGPU_NATIVE]
    assert check_metadata.main(command) == 0


def test_each_platform_needs_its_own_library(tmp_path: Path) -> None:
    for tag, platform in [("win_amd64", "win32"), ("macosx_14_0_arm64", "darwin"), (LINUX, "linux")]:
        assert problems(make_wheel(tmp_path, platform_tag=tag, bundled=bundle(platform))) == [], tag
    windows_with_linux_library = make_wheel(tmp_path, platform_tag="win_amd64", bundled=bundle("linux"))
    assert any("wgpu_native-release.dll" in p for p in problems(windows_with_linux_library))


@pytest.mark.parametrize(
    ("kwargs", "complaint"),
    [
        ({"version": "0.1.0"}, "does not name its torch minor"),
        ({"version": "0.1.0+torch2.12", "requires": ("torch==2.12.*",)}, "expected 2.13"),
        ({"requires": ("torch>=2.11,<2.15",)}, "not exactly torch==2.13.*"),
        ({"requires": ("torch==2.13.*", f"wgpu=={WGPU}")}, "bundles wgpu-native"),
        ({"requires": ("torch==2.13.*", "wgpu>=0.30;python_version>='3.11'")}, "bundles wgpu-native"),
        ({"bundled": {}}, "wgpu-native is not bundled"),
        ({"bundled": {k: v for k, v in bundle().items() if "LICENSE.MIT" not in k}}, "LICENSE.MIT"),
        (
            {"bundled": bundle(version_text="wgpu-native: 27.0.0.0\nwgpu: 0.29.0\n")},
            "expected " + WGPU_NATIVE,
        ),
        ({"extra_files": ("torch_dml.libs/libtorch_cpu-1a2b3c4d.so",)}, "bundled"),
        ({"extra_files": ("torch_dml.libs/libc10.so",)}, "bundled"),
        ({"filename_version": "0.1.0"}, "file name says"),
    ],
)
def test_each_broken_rule_is_reported(tmp_path: Path, kwargs: dict[str, object], complaint: str) -> None:
    found = problems(make_wheel(tmp_path, **kwargs))  # type: ignore[arg-type]
    assert any(complaint in p for p in found), found


def test_before_build_picks_the_cpu_torch_of_the_job() -> None:
    assert (
        before_build.torch_requirement({"TORCH_VERSION": "2.12.1", "TORCH_MINOR": "2.12"}) == "torch==2.12.1"
    )
    assert before_build.torch_requirement({"TORCH_MINOR": "2.14"}) == "torch==2.14.*"
    with pytest.raises(SystemExit):
        before_build.torch_requirement({})
    assert "download.pytorch.org/whl/cpu" in before_build.CPU_INDEX
    assert f"wgpu=={WGPU}; python_version >= '3.11'" in before_build.BUILD_TOOLS


def test_smoke_test_refuses_a_wheel_pinned_to_another_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from wheels import smoke

    minor = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    monkeypatch.setattr(smoke.importlib.metadata, "requires", lambda _: [f"torch=={minor}.*"])
    assert smoke.check_pin() == f"torch=={minor}.*"
    monkeypatch.setattr(smoke.importlib.metadata, "requires", lambda _: ["torch==2.0.*"])
    with pytest.raises(SystemExit, match="requires"):
        smoke.check_pin()


def test_build_selection_and_skips() -> None:
    assert CIBW["build"].split() == ["cp310-*", "cp311-*", "cp312-*", "cp313-*", "cp314-*"]
    assert set(CIBW["skip"].split()) == {"*-musllinux_*", "*-win32", "*_i686", "cp3??t-*"}
    assert "--no-isolation" in CIBW["build-frontend"]
    assert "download.pytorch.org/whl/cpu" in CIBW["environment"]["PIP_EXTRA_INDEX_URL"]
    assert "wheels/smoke.py" in CIBW["test-command"]


def test_repair_commands_exclude_torchs_libraries() -> None:
    linux = CIBW["linux"]["repair-wheel-command"]
    for name in ("libc10.so", "'libtorch*.so'"):
        assert f"--exclude {name}" in linux
    for name in ("c10.dll", "torch_cpu.dll", "torch_python.dll"):
        assert f"--exclude {name}" in CIBW["windows"]["repair-wheel-command"]
    for name in ("libc10", "libtorch"):
        assert f"--exclude {name}" in CIBW["macos"]["repair-wheel-command"]
    command = local.repair_command(Path("/w/a b.whl"), Path("/out"))
    assert command.startswith("auditwheel repair -w /out '/w/a b.whl'")


def test_cibuildwheel_config_matches_its_schema_and_selects_cp310_to_cp314() -> None:
    if importlib.util.find_spec("cibuildwheel") is None:
        pytest.skip("cibuildwheel is not installed (tox.ini's test deps install it)")
    import jsonschema

    schema = json.loads(
        (resources.files("cibuildwheel") / "resources" / "cibuildwheel.schema.json").read_text()
    )
    jsonschema.validate(CIBW, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**CIBW, "test-comand": "x"}, schema)
    listed = subprocess.run(
        [sys.executable, "-m", "cibuildwheel", "--print-build-identifiers", "--platform", "linux"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    assert listed == [f"cp3{v}-manylinux_x86_64" for v in (10, 11, 12, 13, 14)]
