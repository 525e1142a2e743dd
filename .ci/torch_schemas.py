"""`python .ci/torch_schemas.py TORCHGEN_ROOT [--check]`: run the op-table generators (`python -m
backend.codegen`) with the aten schemas of another torch release instead of the installed torch's.

TORCHGEN_ROOT is a folder holding that release's `torchgen` package (unpacked from its wheel by
`.ci/torch-headers-check`); its `native_functions.yaml` gives every overload's schema, `autogen` ones
included. The installed torch still runs the generators; only `torch._C._get_schema`, the one place
they read schemas from (backend/codegen/schema.py), answers from the other release. Run from the
repository root whose generated files should be written.
"""

from __future__ import annotations

import sys
from pathlib import Path


def schemas(torchgen_root: Path) -> dict[str, str]:
    """'name.overload' -> 'name.overload(args) -> returns', parsed by that release's own torchgen."""
    # Its torchgen must come first: the installed one may not parse an older or newer yaml.
    sys.path.insert(0, str(torchgen_root))
    from torchgen.gen import parse_native_yaml

    packaged = torchgen_root / "torchgen" / "packaged" / "ATen" / "native"
    parsed = parse_native_yaml(str(packaged / "native_functions.yaml"), str(packaged / "tags.yaml"))
    return {str(f.func).split("(", 1)[0]: str(f.func) for f in parsed.native_functions}


class _Registered:
    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return "aten::" + self.text


def main(argv: list[str]) -> int:
    known = schemas(Path(argv[0]).resolve())
    print(f"torch_schemas: {len(known)} aten overloads in {argv[0]}", file=sys.stderr)
    import torch

    def get_schema(qualified: str, overload: str) -> _Registered:
        key = qualified.removeprefix("aten::") + (f".{overload}" if overload else "")
        if key not in known:
            raise RuntimeError(f"no aten::{key} in that release")
        return _Registered(known[key])

    torch._C._get_schema = get_schema
    sys.path.insert(0, str(Path.cwd()))
    from backend.codegen.gen_elementwise import main as generate

    return generate(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
