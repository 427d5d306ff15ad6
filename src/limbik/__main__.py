"""``python -m limbik``: the command line."""

import sys

from limbik.app.cli import main

sys.exit(main())
