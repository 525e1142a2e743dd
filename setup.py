"""Builds torch_dml._C against the installed torch (one build per torch minor; see pyproject.toml).

Run without build isolation so the extension links the torch that will import it:
    pip install -v --no-build-isolation -e .
The build is incremental through ninja: objects live in build/ and only changed sources recompile.
pip shows the build's progress (a line per source, backend/build_progress.py) only with -v.
"""

import glob
import itertools
import os
import sys
from pathlib import Path

# Importing torch at build time must not trigger our own autoload entry point (a half-built package).
os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join("backend", "csrc")
sys.path.insert(0, ROOT)  # the build helpers in backend/

# Lock-step with torch (docs/release.md): the extension only loads in the torch minor it was compiled
# against, so the version names it (a PEP 440 local label) and the metadata pins it. wgpu-native is no
# requirement: build_ext bundles it (backend/wgpu_bundle.py).
VERSION = "0.1.0"
TORCH_MINOR = ".".join(torch.__version__.split("+")[0].split(".")[:2])


def generate() -> None:
    """Regenerates the files derived from backend/ops.yaml (written only when they change, so ninja
    rebuilds nothing when the table did not change)."""
    sys.path.insert(0, ROOT)
    from backend.codegen.gen_elementwise import outputs, write_if_changed

    for path, text in outputs().items():
        write_if_changed(path, text)


def sources() -> list[str]:
    found = sorted(glob.glob(os.path.join(CSRC, "**", "*.cpp"), recursive=True))
    return [os.path.relpath(p, ROOT) for p in found]


if sys.platform == "win32":
    cxx_flags = ["/std:c++20", "/O2", "/EHsc"]
    libraries: list[str] = []
else:
    cxx_flags = ["-std=c++20", "-O2", "-fvisibility=hidden", "-Wno-unused-parameter"]
    libraries = ["dl"]

class IncrementalBuildExt(BuildExtension.with_options(use_ninja=True)):
    """Keeps objects in build/temp (pip's editable builds otherwise use a fresh temp dir each time),
    so ninja recompiles only what changed. TORCH_DML_BUILD_TEMP moves it (e.g. for wheel builds).
    Compiles against the pinned wgpu's headers and puts its wgpu-native library, with the licences, beside
    _C: in build/lib (what the wheel packs) and, for in-place and editable builds, in the source tree."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.build_temp = os.environ.get("TORCH_DML_BUILD_TEMP", os.path.join(ROOT, "build", "temp"))

    def run(self) -> None:
        from backend import wgpu_bundle

        # Here, not at import: pip runs setup.py for metadata too, which needs no wgpu download.
        wgpu = wgpu_bundle.locate()
        for ext in self.extensions:
            ext.include_dirs.append(str(wgpu.resources))
        super().run()
        folders = [os.path.join(self.build_lib, "torch_dml")]
        if self.inplace:
            folders.append(os.path.join(ROOT, self.get_finalized_command("build_py").get_package_dir("torch_dml")))
        for folder in folders:
            wgpu_bundle.write(wgpu, Path(folder))

    def build_extension(self, ext) -> None:
        from backend.build_pch import precompiled_header
        from backend.build_progress import condensed_ninja

        with condensed_ninja(ROOT, len(ext.sources)), precompiled_header(self.build_temp):
            super().build_extension(ext)
        from backend.cxx_runtime import check_extension

        path = self.get_ext_fullpath(ext.name)
        linker = getattr(self.compiler, "compiler_cxx", None) or getattr(self.compiler, "linker_so", None) or []
        error = check_extension(path, " ".join(itertools.takewhile(lambda arg: not arg.startswith("-"), linker)))
        if error:
            os.remove(path)  # never leave a module behind that crashes the process importing it
            sys.exit(error)


generate()

setup(
    version=f"{VERSION}+torch{TORCH_MINOR}",
    install_requires=[f"torch=={TORCH_MINOR}.*"],
    ext_modules=[
        CppExtension(
            name="torch_dml._C",
            sources=sources(),
            include_dirs=[os.path.join(ROOT, CSRC)],
            extra_compile_args={"cxx": cxx_flags},
            libraries=libraries,
        )
    ],
    cmdclass={"build_ext": IncrementalBuildExt},
)
