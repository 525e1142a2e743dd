"""The build refuses an extension that carries its own static libstdc++ (two in one process crash it)."""

import shutil
import subprocess
import sys

import pytest
import torch_dml

from backend.cxx_runtime import check_extension, needed_libraries, static_runtime_error

READELF_SAMPLE = """
Dynamic section at offset 0x2fd000 contains 31 entries:
  Tag        Type                         Name/Value
 0x0000000000000001 (NEEDED)             Shared library: [libc10.so]
 0x0000000000000001 (NEEDED)             Shared library: [libtorch_cpu.so]
 0x0000000000000001 (NEEDED)             Shared library: [libstdc++.so.6]
 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]
 0x000000000000000e (SONAME)             Library soname: [_C.so]
"""


def test_needed_entries_are_read_from_readelf():
    assert needed_libraries(READELF_SAMPLE) == ["libc10.so", "libtorch_cpu.so", "libstdc++.so.6", "libc.so.6"]


@pytest.mark.parametrize("runtime", ["libstdc++.so.6", "libc++.so.1"])
def test_a_shared_cxx_runtime_passes(runtime):
    assert static_runtime_error(["libc10.so", runtime, "libc.so.6"], "g++") is None


def test_no_shared_cxx_runtime_is_refused_naming_the_compiler_and_the_fix():
    error = static_runtime_error(["libc10.so", "libm.so.6", "libc.so.6"], "/opt/wrap/c++")
    assert error is not None
    assert "/opt/wrap/c++" in error and "static" in error and "CXX=g++" in error


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF NEEDED entries: Linux only")
def test_this_build_links_the_shared_runtime():
    assert check_extension(torch_dml._C.__file__, "c++") is None


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("g++") is None, reason="needs g++ on Linux"
)
@pytest.mark.parametrize("static", [False, True])
def test_real_libraries_linked_both_ways(tmp_path, static):
    source = tmp_path / "probe.cpp"
    source.write_text('#include <sstream>\nextern "C" int probe() { std::ostringstream s; s << 42u; return 1; }\n')
    library = tmp_path / "probe.so"
    flags = ["-static-libstdc++"] if static else []
    built = subprocess.run(
        ["g++", "-shared", "-fPIC", *flags, str(source), "-o", str(library)],
        check=False, capture_output=True, text=True,
    )
    if built.returncode != 0:
        pytest.skip(f"g++ cannot link this way here: {built.stderr[-300:]}")
    error = check_extension(str(library), "g++")
    assert (error is not None) == static, error
