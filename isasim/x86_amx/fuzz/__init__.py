"""Differential fuzzing of x86_amx (``isasim fuzz``): random programs run on the simulator and on another
backend (this machine's CPU by default), their differences shrunk and written as traces.

- :mod:`.generators`: the two case generators the ISA-neutral campaign engine (:mod:`isasim.core.fuzz`)
  runs, ``run_fuzz``, and what a run of them counts;
- :mod:`.scalar`: programs of the scalar subset and the vector moves, many cases batched into one program;
- :mod:`.amx`: tile programs, drawn with numpy (or hypothesis) one case to a program.
"""

from .generators import (GENERATORS, SUBSETS, AmxGenerator, ScalarGenerator, chosen_config, config_notes,
                         count_executed, form_key, run_fuzz)

__all__ = ["GENERATORS", "SUBSETS", "AmxGenerator", "ScalarGenerator", "chosen_config", "config_notes",
           "count_executed", "form_key", "run_fuzz"]
