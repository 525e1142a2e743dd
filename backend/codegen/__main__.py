"""`python -m backend.codegen [--check]`: regenerate the files derived from the op tables (backend/ops.yaml,
backend/ops/native.yaml, backend/ops/reductions.yaml), or fail when the checked-in ones differ from what
the tables and the installed torch give."""

import sys

from backend.codegen.gen_elementwise import main

sys.exit(main(sys.argv[1:]))
