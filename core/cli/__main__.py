"""``python -m effdim.cli``: the ``effdim`` command."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
