"""What a release wheel must say about itself: the torch minor it was built for (version label and an exact
`torch==X.Y.*` pin), the exact `wgpu==` pin, and no copy of torch's own libraries.

    python -m wheels.check_metadata dist/wheelhouse/torch_dml-*.whl [--torch 2.13]
"""

from __future__ import annotations

import argparse
import email.parser
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

VERSION = re.compile(r"^\d+\.\d+\.\d+(\.post\d+)?\+torch(?P<minor>\d+\.\d+)$")
# torch's libraries are loaded by `import torch`; a second copy in our wheel would be a second torch.
TORCH_LIBRARY = re.compile(
    r"(^|/)(lib)?(c10|torch|torch_cpu|torch_python|shm|torch_global_deps)([-.][^/]*)?\.(so|dylib|dll)"
)


@dataclass(frozen=True)
class WheelFacts:
    filename_version: str
    version: str
    requires: list[str]
    files: list[str]


def inspect(wheel: Path) -> WheelFacts:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode())
    return WheelFacts(
        filename_version=wheel.name.split("-")[1],
        version=str(metadata["Version"]),
        requires=[r.replace(" ", "") for r in metadata.get_all("Requires-Dist") or []],
        files=names,
    )


def problems(facts: WheelFacts, wgpu: str, torch_minor: str = "") -> list[str]:
    found = []
    match = VERSION.match(facts.version)
    if not match:
        found.append(f"version {facts.version!r} does not name its torch minor (<version>+torch<X.Y>)")
    minor = match["minor"] if match else ""
    if torch_minor and minor != torch_minor:
        found.append(f"built for torch {minor or '?'}, expected {torch_minor}")
    if facts.filename_version != facts.version:
        found.append(f"file name says {facts.filename_version}, METADATA says {facts.version}")
    torch_pins = [r for r in facts.requires if re.match(r"torch[=<>!~;]|torch$", r)]
    if minor and torch_pins != [f"torch=={minor}.*"]:
        found.append(f"torch requirement {torch_pins} is not exactly torch=={minor}.*")
    wgpu_pins = [r for r in facts.requires if re.match(r"wgpu[=<>!~;]|wgpu$", r)]
    if wgpu_pins != [f"wgpu=={wgpu}"]:
        found.append(f"wgpu requirement {wgpu_pins} is not exactly wgpu=={wgpu}")
    if not any(re.match(r"torch_dml/_C\.[^/]+\.(so|pyd)$", f) for f in facts.files):
        found.append("no compiled extension torch_dml/_C in the wheel")
    bundled = [f for f in facts.files if TORCH_LIBRARY.search(f)]
    if bundled:
        found.append(f"torch's libraries were bundled (repair must exclude them): {bundled}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("wheels", nargs="+", type=Path)
    parser.add_argument("--torch", default="", help="the torch minor the wheel must be built for")
    parser.add_argument("--wgpu", default="", help="the exact wgpu version (default: matrix/matrix.yaml's)")
    args = parser.parse_args(argv)
    wgpu = args.wgpu
    if not wgpu:
        from matrix import model

        wgpu = model.load().wgpu
    failed = False
    for wheel in args.wheels:
        found = problems(inspect(wheel), wgpu, args.torch)
        for problem in found:
            print(f"{wheel.name}: {problem}", file=sys.stderr)
        if not found:
            facts = inspect(wheel)
            print(f"{wheel.name}: version {facts.version}, requires {', '.join(facts.requires)}")
        failed = failed or bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
