"""What a release wheel must say about itself: the torch minor it was built for (version label and an exact
`torch==X.Y.*` pin), no `wgpu` requirement but wgpu-native bundled for its platform with the licences and
the VERSION of the pinned release (matrix.yaml), and no copy of torch's own libraries.

    python -m wheels.check_metadata dist/wheelhouse/torch_dml-*.whl [--torch 2.13]
"""

from __future__ import annotations

import argparse
import email.parser
import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from backend import wgpu_bundle

VERSION = re.compile(r"^\d+\.\d+\.\d+(\.post\d+)?\+torch(?P<minor>\d+\.\d+)$")
# torch's libraries are loaded by `import torch`; a second copy in our wheel would be a second torch.
TORCH_LIBRARY = re.compile(
    r"(^|/)(lib)?(c10|torch|torch_cpu|torch_python|shm|torch_global_deps)([-.][^/]*)?\.(so|dylib|dll)"
)


BUNDLE = f"torch_dml/{wgpu_bundle.TABLE.BUNDLE_DIR}"
VERSION_FILE = f"{BUNDLE}/{wgpu_bundle.TABLE.VERSION_FILE}"


@dataclass(frozen=True)
class WheelFacts:
    filename_version: str
    version: str
    requires: list[str]
    files: list[str]
    platform_tag: str = ""
    bundled_versions: dict[str, str] = field(default_factory=dict)  # torch_dml/wgpu_native/VERSION


def inspect(wheel: Path) -> WheelFacts:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode())
        version_text = archive.read(VERSION_FILE).decode() if VERSION_FILE in names else ""
    return WheelFacts(
        filename_version=wheel.name.split("-")[1],
        version=str(metadata["Version"]),
        requires=[r.replace(" ", "") for r in metadata.get_all("Requires-Dist") or []],
        files=names,
        platform_tag=wheel.stem.split("-")[-1],
        bundled_versions={
            key.strip(): value.strip()
            for key, _, value in (line.partition(":") for line in version_text.splitlines())
        },
    )


def sys_platform(platform_tag: str) -> str:
    """The sys.platform a wheel's platform tag (win_amd64, macosx_14_0_arm64, manylinux_...) installs on."""
    if platform_tag.startswith("win"):
        return "win32"
    return "darwin" if platform_tag.startswith("macosx") else "linux"


def bundle_problems(facts: WheelFacts, wgpu: str, wgpu_native: str) -> list[str]:
    found = []
    library = f"{BUNDLE}/{wgpu_bundle.TABLE.library_name(sys_platform(facts.platform_tag))}"
    expected = [library, *(f"{BUNDLE}/{name}" for name in wgpu_bundle.TABLE.LICENCE_FILES), VERSION_FILE]
    missing = [name for name in expected if name not in facts.files]
    if missing:
        found.append(f"wgpu-native is not bundled for {facts.platform_tag or '?'}: no {', '.join(missing)}")
    bundled = facts.bundled_versions
    versions = (bundled.get("wgpu"), bundled.get("wgpu-native"))
    if VERSION_FILE in facts.files and versions != (wgpu, wgpu_native):
        found.append(
            f"bundled wgpu-native {bundled.get('wgpu-native', '?')} from wgpu {bundled.get('wgpu', '?')}, "
            f"expected {wgpu_native} from wgpu {wgpu} (matrix.yaml)"
        )
    return found


def problems(facts: WheelFacts, wgpu: str, wgpu_native: str, torch_minor: str = "") -> list[str]:
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
    wgpu_requirements = [r for r in facts.requires if re.match(r"wgpu[=<>!~;\[]|wgpu$", r)]
    if wgpu_requirements:
        found.append(
            f"requires {wgpu_requirements}: the wheel bundles wgpu-native, and wgpu does not install on "
            "Python 3.10"
        )
    found += bundle_problems(facts, wgpu, wgpu_native)
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
    parser.add_argument(
        "--wgpu", default="", help="the wgpu release the bundle comes from (default: matrix/matrix.yaml's)"
    )
    parser.add_argument(
        "--wgpu-native", default="", help="the wgpu-native it carries (default: matrix/matrix.yaml's)"
    )
    args = parser.parse_args(argv)
    wgpu, wgpu_native = args.wgpu, args.wgpu_native
    if not wgpu or not wgpu_native:
        from matrix import model

        matrix = model.load()
        wgpu, wgpu_native = wgpu or matrix.wgpu, wgpu_native or matrix.wgpu_native
    failed = False
    for wheel in args.wheels:
        found = problems(inspect(wheel), wgpu, wgpu_native, args.torch)
        for problem in found:
            print(f"{wheel.name}: {problem}", file=sys.stderr)
        if not found:
            facts = inspect(wheel)
            print(f"{wheel.name}: version {facts.version}, requires {', '.join(facts.requires)}")
        failed = failed or bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
