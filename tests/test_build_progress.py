"""The build shows its progress: ninja's status lines shortened to the source each compiles, with the
time left; warnings and errors pass through whole (backend/build_progress.py, used by setup.py)."""

import shutil
import sys

import pytest

from backend.build_progress import condense, condensed_ninja, duration, run_ninja

ROOT = "/src/torch-dml"
COMPILE = (f"[3/74] /usr/lib/ccache/c++ -MMD -MF {ROOT}/build/temp/backend/csrc/ops/add.o.d -DTORCH_API_INCLUDE_"
           f"EXTENSION_H -I{ROOT}/backend/csrc -isystem /venv/torch/include -c -c {ROOT}/backend/csrc/ops/add.cpp "
           f"-o {ROOT}/build/temp/backend/csrc/ops/add.o -std=c++20 -O2")


def test_a_compile_line_names_its_source_and_the_time_left():
    assert condense(COMPILE, ROOT, 30.0) == "[3/74] backend/csrc/ops/add.cpp (30s, about 11m50s left)"


def test_the_last_edge_and_a_link_line():
    link = f"[74/74] c++ {ROOT}/build/temp/a.o {ROOT}/build/temp/b.o -shared -o {ROOT}/build/lib/torch_dml/_C.so"
    assert condense(link, ROOT, 125.0) == "[74/74] build/lib/torch_dml/_C.so (2m05s)"
    assert duration(59.4) == "59s" and duration(600) == "10m00s"


def test_other_lines_pass_through_unchanged():
    for line in ("FAILED: backend/csrc/ops/add.o", f"{ROOT}/backend/csrc/ops/add.cpp:12:5: error: 'x' was not declared",
                 "ninja: build stopped: subcommand failed.", "[not a status] line"):
        assert condense(line, ROOT, 1.0) == line


class Lines:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_a_real_process_is_streamed_condensed_and_its_exit_code_kept(tmp_path):
    script = ("import sys\n"
              f"print({COMPILE!r})\n"
              "print('warning: unused variable')\n"
              "sys.exit(3)\n")
    out = Lines()
    code = run_ninja([sys.executable, "-c", script], str(tmp_path), ROOT, out, clock=iter([0.0, 60.0, 61.0]).__next__)
    assert code == 3
    assert out.text == "[3/74] backend/csrc/ops/add.cpp (1m00s, about 23m40s left)\nwarning: unused variable\n"


def test_setup_py_swaps_torchs_ninja_runner_only_inside_the_build(monkeypatch):
    from torch.utils import cpp_extension

    original = cpp_extension._run_ninja_build
    monkeypatch.delenv("TORCH_DML_BUILD_VERBOSE", raising=False)
    with condensed_ninja(ROOT, 74):
        assert cpp_extension._run_ninja_build is not original
    assert cpp_extension._run_ninja_build is original
    monkeypatch.setenv("TORCH_DML_BUILD_VERBOSE", "1")  # the full commands: torch's own runner
    with condensed_ninja(ROOT, 74):
        assert cpp_extension._run_ninja_build is original


def test_real_ninja_status_lines_come_out_short(tmp_path):
    """ninja -v through a pipe, as setup.py runs it: each edge's `[n/N] command` becomes its source."""
    ninja = shutil.which("ninja") or pytest.skip("no ninja on PATH (pip install ninja)")
    for name in ("a.cpp", "b.cpp"):
        (tmp_path / name).write_text("")
    # `touch OUT -c IN` has the shape of a compile command (-c SOURCE) and needs no compiler.
    (tmp_path / "build.ninja").write_text("rule compile\n  command = touch $out -c $in\n"
                                          f"build {tmp_path}/a.o: compile {tmp_path}/a.cpp\n"
                                          f"build {tmp_path}/b.o: compile {tmp_path}/b.cpp\n")
    out = Lines()
    assert run_ninja([ninja, "-v", "-j", "1"], str(tmp_path), str(tmp_path), out) == 0
    lines = out.text.splitlines()
    assert [line.split(" (")[0] for line in lines] == ["[1/2] a.cpp", "[2/2] b.cpp"], out.text
