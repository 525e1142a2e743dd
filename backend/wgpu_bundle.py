"""setup.py's wgpu-native: the headers it compiles against and the library it bundles, from the pinned
`wgpu` wheel, so an installed torch-dml needs no `wgpu` package at run time.

The files come from the build environment's `wgpu` when that is the pinned release; otherwise (Python 3.10,
where wgpu >= 0.31.1 does not install, or no wgpu at all) from the pinned wheel for this platform, fetched
with `pip download` and unpacked under build/. wgpu's wheels are py3-none: one library serves every Python.
Their own wheel carries no wgpu-native licence, so the licence texts live in third_party/.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_TABLE = ROOT / "backend" / "torch_dml" / "_wgpu_library.py"
THIRD_PARTY = ROOT / "third_party"


def runtime_table() -> ModuleType:
    """torch_dml/_wgpu_library.py (file names, bundle folder), loaded without importing torch_dml."""
    spec = importlib.util.spec_from_file_location("torch_dml_wgpu_library", RUNTIME_TABLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TABLE = runtime_table()
WGPU_VERSION = TABLE.WGPU_PIN.split("==")[1]
# Bundled name -> the file in this repository (LICENCE_FILES of the runtime table, in its order).
LICENCE_SOURCES = dict(
    zip(
        TABLE.LICENCE_FILES,
        [
            THIRD_PARTY / "wgpu-native" / "LICENSE.APACHE",
            THIRD_PARTY / "wgpu-native" / "LICENSE.MIT",
            THIRD_PARTY / "wgpu-py" / "LICENSE",
        ],
        strict=True,
    )
)


@dataclass(frozen=True)
class WgpuPackage:
    """A `wgpu` package folder, installed or unpacked: resources/ holds the headers and the library,
    backends/wgpu_native/__init__.py names the wgpu-native release it carries."""

    folder: Path
    wgpu: str

    @property
    def resources(self) -> Path:
        return self.folder / "resources"

    def library(self, platform: str = sys.platform) -> Path:
        return self.resources / TABLE.library_name(platform)

    def native_version(self) -> tuple[str, str]:
        """wgpu-native's version and commit, read from wgpu-py's source (importing it would load cffi)."""
        text = (self.folder / "backends" / "wgpu_native" / "__init__.py").read_text()
        version = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
        commit = re.search(r'^__commit_sha__ = "([^"]+)"', text, re.MULTILINE)
        if not version or not commit:
            raise ValueError(f"no wgpu-native __version__/__commit_sha__ in wgpu {self.wgpu}'s {self.folder}")
        return version[1], commit[1]


def installed(version: str = WGPU_VERSION) -> WgpuPackage | None:
    spec = importlib.util.find_spec("wgpu")
    if spec is None or spec.origin is None:
        return None
    try:
        found = importlib.metadata.version("wgpu")
    except importlib.metadata.PackageNotFoundError:  # a wgpu-py checkout on sys.path: no release to trust
        found = "an unreleased checkout"
    if found != version:
        print(f"wgpu_bundle: the installed wgpu is {found}, not {version}: using the pinned wheel instead")
        return None
    return WgpuPackage(Path(spec.origin).parent, found)


def download(version: str, dest: Path) -> Path:
    """The pinned wgpu wheel for this platform. --python-version 3.11: wgpu's Requires-Python, which the
    py3-none wheel's contents do not depend on, so a 3.10 build gets the same wheel."""
    dest.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--python-version", "3.11", "-d", str(dest), f"wgpu=={version}"]
    print("wgpu_bundle:", " ".join(command), flush=True)
    subprocess.run(command, check=True)
    wheels = sorted(dest.glob(f"wgpu-{version}-*.whl"))
    if not wheels:
        raise SystemExit(f"wgpu_bundle: pip download left no wgpu-{version} wheel in {dest}")
    return wheels[0]


def unpack(wheel: Path, dest: Path) -> WgpuPackage:
    """The wheel's wgpu/resources and wgpu-native version file, unpacked to dest/wgpu."""
    version = wheel.name.split("-")[1]
    wanted = ("wgpu/resources/", "wgpu/backends/wgpu_native/__init__.py")
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith(wanted) and not name.endswith("/"):
                archive.extract(name, dest)
    package = WgpuPackage(dest / "wgpu", version)
    if not package.library().is_file():
        raise SystemExit(f"wgpu_bundle: {wheel.name} has no {package.library().name} for this platform")
    return package


def locate(version: str = WGPU_VERSION, cache: Path = ROOT / "build") -> WgpuPackage:
    package = installed(version)
    if package is not None:
        return package
    folder = cache / f"wgpu-{version}-{sysconfig.get_platform()}"
    unpacked = WgpuPackage(folder / "wgpu", version)
    if unpacked.library().is_file():
        return unpacked
    return unpack(download(version, folder / "wheel"), folder)


def bundle_sources(package: WgpuPackage, platform: str = sys.platform) -> dict[str, Path]:
    """Each file of torch_dml/wgpu_native/ (but VERSION, which write() composes) and where it comes from."""
    return {TABLE.library_name(platform): package.library(platform), **LICENCE_SOURCES}


def version_text(package: WgpuPackage) -> str:
    native, commit = package.native_version()
    return f"wgpu-native: {native}\nwgpu-native-commit: {commit}\nwgpu: {package.wgpu}\n"


def write(package: WgpuPackage, package_dir: Path, platform: str = sys.platform) -> list[Path]:
    """Fills package_dir/wgpu_native/ (package_dir: torch_dml in build/lib, or in the source tree)."""
    folder = package_dir / TABLE.BUNDLE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, source in bundle_sources(package, platform).items():
        if not source.is_file():
            raise SystemExit(f"wgpu_bundle: {source} is missing; it must be bundled as {name}")
        shutil.copy2(source, folder / name)
        written.append(folder / name)
    (folder / TABLE.VERSION_FILE).write_text(version_text(package))
    return [*written, folder / TABLE.VERSION_FILE]
