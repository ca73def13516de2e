"""The trace viewer's click-for-working of x86 AMX: how each element of C a TMUL step wrote was computed.

For a TDP instruction (TDPB[SU][SU]D, TDPBF16PS, TDPFP16PS, and the extension TMULs) every element C[m][n]
of the configured shape gets the account ``isasim explain`` writes for its worked element, made by the same
functions (tmul.element_account, amx_extensions.element_account) from the tiles the machine held before the
step, and checked against C as the machine holds it after.  No figure: the page shows its own grids.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...core.explain.model import ElementWorking
from ..forms import amx
from ..forms.amx_extensions import EXTENSION_FEATURES
from ..operands import tile_number
from . import amx_extensions, tmul


def element_workings(instruction, before, after) -> list[ElementWorking]:
    """One ElementWorking per dword of C the TMUL ``instruction`` wrote (row-major), or [] for any other
    instruction and for a step that faulted (e.g. the tiles were not configured)."""
    form = instruction.form
    if instruction.invalid is not None or not isinstance(form, amx.AmxForm) or not form.is_tmul:
        return []
    if after.fault is not None or len(instruction.operands) != 3:
        return []
    tiles = {role: tile_number(o.name) for role, o in zip(form.operand_roles, instruction.operands)}
    tc, ta, tb = tiles["C"], tiles["A"], tiles["B"]
    cfg = before.state.tilecfg
    if not cfg.configured:
        return []
    M, K, N = cfg.rows[tc], cfg.colsb[ta] // 4, cfg.colsb[tc] // 4
    if not (M and K and N):
        return []
    # (while a machine steps, its journal is on and TMUL products are made at once: settling only reads)
    tiles_before, tiles_after = before.state.settled_tiles(), after.state.settled_tiles()
    A = np.ascontiguousarray(tiles_before[ta, :M, :4 * K])
    B = np.ascontiguousarray(tiles_before[tb, :K, :4 * N])
    C_before = np.ascontiguousarray(tiles_before[tc, :M, :4 * N]).view(np.uint32)
    C_after = np.ascontiguousarray(tiles_after[tc, :M, :4 * N]).view(np.uint32)

    if form.feature in EXTENSION_FEATURES:
        def account(m: int, n: int) -> list:
            return amx_extensions.element_account(form, tiles, A, B, int(C_before[m, n]), int(C_after[m, n]),
                                                  m, n, (M, K, N))
    else:
        kind, signs = tmul._tdp_kind(form)
        element = tmul.WorkedElement(instruction, None, tiles, A=A, B=B, C_before=C_before, C_after=C_after,
                                     m=0, n=0, M=M, K=K, N=N)

        def account(m: int, n: int) -> list:
            return tmul.element_account(replace(element, m=m, n=n), kind, signs)[0]

    # the offset in tmm<c> as the trace shows a tile (Isa.observed_arrays): its rows x colsb bytes
    row_bytes = cfg.colsb[tc]
    return [ElementWorking(f"tmm{tc}", m * row_bytes + 4 * n, 4,
                           f"C[{m}][{n}] = tmm{tc} row {m}, dword {n}", account(m, n))
            for m in range(M) for n in range(N)]
