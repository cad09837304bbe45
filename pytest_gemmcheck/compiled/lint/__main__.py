import sys

from .invocation import main

sys.exit(main())
