"""What ``isasim run`` and ``isasim step`` show of an SME2 core: registers (NZCV as flags), the modes,
Z registers as typed lanes, predicates as one mark per element, and ZA as a grid of its SVL/8 vectors.

Each location is shown in the element type the instruction gives it (types.py, from the form's one
declaration), the stepper's ``p`` and ``w`` read names such as ``za.s[w8, 0, vgx4]``, ``za1v.s`` and
``z4.s[3]`` (locations.py, items.py), and only the ZA vectors that are not zero (or, in a step, that
were written) are listed, so a 2048-bit ZA does not fill the terminal with zeros.
"""

from .items import STEPPER_LOCATIONS, item_view, tile_values, watch_value
from .step import state_view, step_view
from .types import PREDICATE_VIEWS, VECTOR_VIEWS, ZA_VIEWS, views_of

__all__ = ["PREDICATE_VIEWS", "STEPPER_LOCATIONS", "VECTOR_VIEWS", "ZA_VIEWS", "item_view", "state_view", "step_view",
           "tile_values", "views_of", "watch_value"]
