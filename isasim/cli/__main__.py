"""``python -m isasim.cli``: the same command as ``isasim`` (and ``python -m isasim``)."""

import sys

from . import main

sys.exit(main())
