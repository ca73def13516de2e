"""Every A64 form isasim knows, declared once (see base.py for what a declaration holds).

One module per instruction family declares its forms into ``FORMS``, in the order imported
here: the SME2 dot products (dot), the mode instructions and ZERO (mode), ZA moves and ZA
memory (za), the SVE instructions a streaming kernel needs (sve), the scalar subset (scalar), the
integer outer products (outer) and the floating-point outer products and dots (fp), then the rest of the
A64 base instructions clang emits around SME code (base_register, base_memory, base_branch, base_system).
A new family is a new module and one line below.
"""

from __future__ import annotations

from . import dot, mode, scalar, sve, za  # noqa: F401  (importing a family declares its forms)
from . import outer  # noqa: F401  (the integer outer products)
from . import fp  # noqa: F401  (the floating-point outer products and dots)
from . import base_branch, base_memory, base_register, base_system  # noqa: F401  (the rest of the A64 base)
from . import sme2_za, sve_arith, sve_data, sve_misc, sve_multi  # noqa: F401  (SVE data, counters, multi-vector memory, ZA)
from . import advsimd  # noqa: F401  (the AdvSIMD forms of the plain C helpers around SME kernels)
from . import za_integer_multiply_add  # noqa: F401  (SME2 integer multiply-adds and adds into ZA)
from . import multi_vector  # noqa: F401  (SME2 integer operations on groups of Z registers)
from . import multi_vector_fp  # noqa: F401  (SME2 floating-point operations on groups of Z registers)
from . import za_fp_multiply_add  # noqa: F401  (SME2 floating-point multiply-adds and adds into ZA, FP/bitwise outer products)
from . import quarter_tile_outer_products  # noqa: F401  (SME2.2's quarter-tile outer products, FEAT_SME_MOP4)
from .base import FORMS, A64Form
from .dot import NOT_ENCODABLE
from .scalar import UNDEFINED_FORMS

__all__ = ["FORMS", "A64Form", "NOT_ENCODABLE", "UNDEFINED_FORMS"]
