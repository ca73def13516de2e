"""What ``isasim run`` and ``isasim step`` show of an x86 core: the GPRs and RFLAGS (flags by name),
TILECFG (or, after a release, the configuration it ended), and each configured tile as a grid in the
element type the program's forms give it (a TMUL's C as int32, its A and B as their declared types),
with the elements a step changed highlighted.

pictures.py draws the parts, step.py puts them together for a run and a step, items.py answers the
stepper's ``p`` and ``w``.
"""

from .items import STEPPER_LOCATIONS, item_view, watch_value
from .step import state_view, step_view

__all__ = ["STEPPER_LOCATIONS", "item_view", "state_view", "step_view", "watch_value"]
