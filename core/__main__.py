"""``python -m changeprov``: the console script, for wrappers that run modules (ut49 #10)."""

import sys

from changeprov.cli import main

if __name__ == "__main__":
    sys.exit(main())
