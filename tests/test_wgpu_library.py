"""Which wgpu-native torch_dml loads: TORCH_DML_WGPU_LIBRARY, else the copy the build put beside _C (what a
wheel carries), else the `wgpu` package's; none of them is an ImportError that says what to do."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from helpers import run_python
from torch_dml import _wgpu_library

NAME = _wgpu_library.library_name()


def bundle_in(package_dir: Path) -> Path:
    library = package_dir / _wgpu_library.BUNDLE_DIR / NAME
    library.parent.mkdir(parents=True)
    library.write_bytes(b"")
    return library


def test_the_override_comes_before_the_bundled_copy(tmp_path: Path) -> None:
    bundle_in(tmp_path)
    environ = {_wgpu_library.OVERRIDE: "/opt/wgpu-debug/" + NAME}
    assert _wgpu_library.find(environ, str(tmp_path)) == "/opt/wgpu-debug/" + NAME


def test_the_bundled_copy_comes_before_the_wgpu_package(tmp_path: Path) -> None:
    library = bundle_in(tmp_path)
    assert _wgpu_library.find({}, str(tmp_path)) == str(library)


def test_without_a_bundle_the_wgpu_package_is_used(tmp_path: Path) -> None:
    if importlib.util.find_spec("wgpu") is None:
        pytest.skip("no `wgpu` package here (Python 3.10): the bundled copy is all there is")
    found = _wgpu_library.find({}, str(tmp_path))
    assert found == _wgpu_library.wgpu_package_library()
    assert Path(found).parts[-3:] == ("wgpu", "resources", NAME)


def test_each_platform_has_its_own_file_name() -> None:
    names = {p: _wgpu_library.library_name(p) for p in ("win32", "darwin", "linux", "freebsd14")}
    assert names == {
        "win32": "wgpu_native-release.dll",
        "darwin": "libwgpu_native-release.dylib",
        "linux": "libwgpu_native-release.so",
        "freebsd14": "libwgpu_native-release.so",
    }


def test_nothing_found_is_an_import_error_that_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        _wgpu_library.importlib.util,
        "find_spec",
        lambda name, *args: None if name == "wgpu" else real_find_spec(name, *args),
    )
    with pytest.raises(ImportError) as raised:
        _wgpu_library.find({}, str(tmp_path))
    message = str(raised.value)
    for words in (
        NAME,
        str(tmp_path / _wgpu_library.BUNDLE_DIR),
        "Reinstall the torch-dml wheel",
        _wgpu_library.WGPU_PIN,
        _wgpu_library.OVERRIDE,
    ):
        assert words in message, message


def test_a_built_extension_loads_its_bundled_copy() -> None:
    package_dir = os.path.dirname(_wgpu_library.__file__)
    bundled = _wgpu_library.bundled_library(package_dir)
    if bundled is None:
        pytest.skip("no torch_dml/wgpu_native/: this _C was built before builds bundled wgpu-native")
    result = run_python(
        "import torch_dml\nprint(torch_dml._C._wgpu_library())\n",
        TORCH_DEVICE_BACKEND_AUTOLOAD="0",
        TORCH_DML_WGPU_LIBRARY="",  # an override in the environment would hide the bundled copy
    )
    assert result.returncode == 0, result.stderr
    assert os.path.samefile(result.stdout.strip(), bundled)
