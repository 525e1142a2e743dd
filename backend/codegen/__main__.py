"""`python -m backend.codegen [--check]`: regenerate the files derived from backend/ops.yaml, or fail
when the checked-in ones differ from what the table and the installed torch give."""

import sys

from backend.codegen.gen_elementwise import main

sys.exit(main(sys.argv[1:]))
