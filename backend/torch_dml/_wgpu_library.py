"""Where torch_dml finds wgpu-native, the WebGPU implementation its C++ core loads at import.

A release wheel carries the library in torch_dml/wgpu_native/ with its licences (setup.py copies them from
the pinned `wgpu` wheel at build time), so an installed torch-dml needs no `wgpu` package, whose
Python >= 3.11 requirement would otherwise shut out Python 3.10. A source build puts the same files there;
the `wgpu` package is the fallback for an extension built before that, and TORCH_DML_WGPU_LIBRARY, a path,
overrides both (a debug build of wgpu-native, another release).

Imports nothing of torch_dml: setup.py and the release checks read the tables below from this file.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping

OVERRIDE = "TORCH_DML_WGPU_LIBRARY"
WGPU_PIN = "wgpu==0.32.0"
# Beside _C in the package; written by the build, never committed.
BUNDLE_DIR = "wgpu_native"
# wgpu-native's file name per sys.platform, as the `wgpu` wheels ship it; other Unixes name it like Linux.
LIBRARY_NAMES = {
    "win32": "wgpu_native-release.dll",
    "darwin": "libwgpu_native-release.dylib",
    "linux": "libwgpu_native-release.so",
}
# Bundled beside the library: wgpu-native is MIT OR Apache-2.0; the binary comes from wgpu-py's wheel.
LICENCE_FILES = ("LICENSE.APACHE", "LICENSE.MIT", "LICENSE.wgpu-py")
# What the bundle was taken from (wgpu-native's version and commit, the wgpu wheel), one `key: value` a line.
VERSION_FILE = "VERSION"


def library_name(platform: str = sys.platform) -> str:
    return LIBRARY_NAMES.get(platform, LIBRARY_NAMES["linux"])


def bundled_library(package_dir: str = os.path.dirname(__file__), platform: str = sys.platform) -> str | None:
    candidate = os.path.join(package_dir, BUNDLE_DIR, library_name(platform))
    return candidate if os.path.isfile(candidate) else None


def wgpu_package_library(platform: str = sys.platform) -> str | None:
    # find_spec, not import: importing wgpu-py would load its own copy of the library through cffi.
    spec = importlib.util.find_spec("wgpu")
    if spec is None or spec.origin is None:
        return None
    candidate = os.path.join(os.path.dirname(spec.origin), "resources", library_name(platform))
    return candidate if os.path.isfile(candidate) else None


def find(environ: Mapping[str, str] = os.environ, package_dir: str = os.path.dirname(__file__)) -> str:
    """The library to load: the override, else the bundled copy, else the `wgpu` package's."""
    override = environ.get(OVERRIDE)
    if override:
        return override
    found = bundled_library(package_dir) or wgpu_package_library()
    if found:
        return found
    raise ImportError(
        f"torch_dml: no wgpu-native library ({library_name()}) found: none bundled in "
        f"{os.path.join(package_dir, BUNDLE_DIR)} and no `wgpu` package. Reinstall the "
        "torch-dml wheel (it carries the library); in a source checkout rebuild the extension "
        "(pip install --no-build-isolation -e .), or pip install " + WGPU_PIN + " (Python >= 3.11); "
        f"or set {OVERRIDE} to the path of a wgpu-native library."
    )
