"""Mutation testing of the LDS-race lint on assembly files: gemmcheck_dev/mutants.py.

    python -m benchmarks.lint_mutants FILE.s [...] [--in-scope-only] [--ordering-only] [--oracle] [--json FILE]

Each wait's vmcnt or lgkmcnt part is deleted or raised by one, each barrier that LDS reads follow
is deleted; every mutant is linted and reported as caught (a new error), latent, warned,
unchecked or missed, with whether it can change anything (equivalent, out of scope, in scope:
see the module's documentation). Prints the mutation score per file.
"""

import sys

from gemmcheck_dev.mutants import main

if __name__ == "__main__":
    sys.exit(main())
