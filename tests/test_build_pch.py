"""The build's precompiled header (backend/build_pch.py, used by setup.py): built with the sources' own
flags, kept while they hold, rebuilt when they change, and really used by a compile."""

import shutil
import subprocess
from pathlib import Path

import pytest

from backend import build_pch

GCC = shutil.which("g++")
needs_gcc = pytest.mark.skipif(GCC is None or not build_pch.is_gcc(GCC), reason="precompiled headers are GCC-only")


def test_the_header_command_takes_the_sources_flags_without_their_bare_c():
    command = build_pch.header_command("g++", ["-DNDEBUG", "-I/src", "-c"], ["-std=c++20", "-DNAME=_C"],
                                       Path("/b/pch.h"))
    assert command == ["g++", "-DNDEBUG", "-I/src", "-x", "c++-header", "/b/pch.h", "-o", "/b/pch.h.gch",
                       "-std=c++20", "-DNAME=_C"]


def test_the_folder_changes_with_the_flags_and_the_header_only(tmp_path):
    folder = build_pch.folder_for("c++", ["-O2"], "#include <vector>", str(tmp_path))
    assert folder == build_pch.folder_for("c++", ["-O2"], "#include <vector>", str(tmp_path))
    assert folder != build_pch.folder_for("c++", ["-O3"], "#include <vector>", str(tmp_path))
    assert folder != build_pch.folder_for("c++", ["-O2"], "#include <map>", str(tmp_path))


@needs_gcc
def test_a_compile_uses_the_header_and_a_flag_change_replaces_it(tmp_path, monkeypatch):
    source = tmp_path / "header.h"
    source.write_text("#include <vector>\n#include <string>\n")
    monkeypatch.setattr(build_pch, "HEADER", source)
    build = tmp_path / "build"
    header = build_pch.build(GCC, ["-O1", "-fPIC", "-c"], ["-std=c++20"], str(build))
    assert header is not None and Path(f"{header}.gch").is_file()
    built = Path(f"{header}.gch").stat().st_mtime_ns
    assert build_pch.build(GCC, ["-O1", "-fPIC", "-c"], ["-std=c++20"], str(build)) == header
    assert Path(f"{header}.gch").stat().st_mtime_ns == built  # kept, not rebuilt

    unit = tmp_path / "unit.cpp"
    unit.write_text("int main() { std::vector<std::string> v{\"x\"}; return static_cast<int>(v.size()) - 1; }\n")
    # -H lists the headers a compile reads; a precompiled one it loads is marked with '!'.
    listed = subprocess.run([GCC, "-O1", "-fPIC", "-std=c++20", "-Winvalid-pch", "-include", str(header), "-H",
                             "-c", str(unit), "-o", str(tmp_path / "unit.o")],
                            check=False, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert f"! {header}.gch" in listed.stderr

    other = build_pch.build(GCC, ["-O2", "-fPIC", "-c"], ["-std=c++20"], str(build))
    assert other is not None and other != header
    assert not header.parent.exists()  # one .gch at a time: each is large
