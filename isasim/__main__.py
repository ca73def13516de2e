"""``python -m isasim``: the same command as ``isasim`` (for environments where the script is not on PATH)."""

import sys

from .cli import main

sys.exit(main())
