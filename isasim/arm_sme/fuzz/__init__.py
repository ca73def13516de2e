"""Differential fuzzing of arm_sme: random programs over every form isasim knows, for the ISA-neutral
campaign engine (:mod:`isasim.core.fuzz`), compared with QEMU (``isasim fuzz --isa arm_sme --against qemu``).
cases.py draws one case, form_generator.py the cases of one subset; here the campaign's generators.

Subsets
    One per form group (``FORMS``' ``group``: dot, outer, za, za_move, za_memory, z_memory, predicate,
    count, mode, scalar, memory, control, ... whatever the families declare), whose programs draw only
    that group's forms, and ``mixed``, whose programs draw from every form, so that a load feeds a dot
    and a PTRUE governs a store.  ``--only GROUP`` runs one; without it half the cases are mixed and
    the rest are shared over the groups.  A form added to FORMS is fuzzed with no change here.

A case
    Up to MAX_INSTRUCTIONS instructions, each a form and a seed that packs random values into its
    encoding's fields and disassembles the word (as tests/arm_sme/semantics/test_integer_dots_vs_qemu.py
    does), so every register, list, index and immediate the encoding allows comes up; an encoding the
    decoder refuses or calls UNDEFINED is drawn again.  Then the fields that must point somewhere are put there:
      * memory operands take their base from x16-x19 or SP, which point into the middle of one writable
        block large enough for every offset an encoding holds (LDR Z's 256 vectors, LDR X's 32 KiB), and
        their index register from x20-x23, which hold small values; in a third of the cases x18 and
        x19 point just below the block's end, so that loads through them may fault part way;
      * a branch goes forward: its target is its seed's number of instructions on, or the program's end,
        so no program loops (shrinking, which removes instructions, keeps every target inside it);
      * no operand names x30 or w30: x30 holds the harness's return address under QEMU.
    x8-x15 (the vector selects of the dots, W8-W11, and of the ZA slices, W12-W15) hold edge values
    (0, dim - 1, dim for the group and slice counts at this SVL, 0x7fffffff, 0xffffffff, junk in the
    upper half) or random ones; the other registers are random or (one in four) scalar edge values
    (0, 1, all ones, the sign bits and their neighbours in X and W); NZCV, Z, ZA, ZT0 and the memory
    are random from the case's data seed, and P0-P15 are random bits, all true, all false or a run of leading trues.
    Streaming mode and ZA are on.

What the comparison cannot see, or QEMU gets wrong in a documented way, is kept out of the cases
    (docs/known-oracle-deviations.md):
      * a load to a vertical ZA tile slice with a predicate whose inactive elements follow the last
        active one (QEMU's sme_ld1 leaves them unzeroed): such loads are governed by P7, which is all
        true and which no instruction of a case writes (an instruction writing P7 is drawn again);
      * a store that faults part way: isasim writes the elements before the faulting one, as the ASL's
        element loop does (the architecture leaves those bytes UNKNOWN), while QEMU probes every page
        first and writes none (and the qemu backend reports the state before a faulting instruction),
        so stores never take their base from x18/x19, the registers that point near the block's end;
      * nor do the ZA tile-slice loads: one whose active element straddles the end of mapped memory
        aborts QEMU (its sme_ld1 reaches g_assert_not_reached, deviation 2), which would end a campaign;
      * ZA while PSTATE.ZA is off is not architectural state, and the QEMU harness dumps it after an
        SMSTART that zeroes it (at the end, or at a fault): a case's mode instructions come last, and a
        program holding one ends with SMSTART, which turns both modes back on with the architecture's
        zeroing on both sides (redundant where they are on).  So the fuzzer compares the zeroing rules
        of every SMSTART/SMSTOP sequence, and leaves UNDEFINED-with-a-mode-off to the differential tests
        and golden traces.  In lockstep mode the step after an SMSTOP ZA would show the harness's
        zeroed ZA (the harness cannot see ZA while it is off), so lockstep campaigns leave out the
        instructions that turn ZA off (SMSTOP, SMSTOP ZA).
"""

from __future__ import annotations

from pathlib import Path

from ..config import configure
from .cases import ISA_NAME
from .form_generator import MIXED, FormGenerator, subsets


def generators(svl: int, lockstep: bool = False) -> tuple[FormGenerator, ...]:
    """``mixed`` (half the cases) and one generator per group; the order fixes each one's seed."""
    groups = subsets()[1:]
    return (FormGenerator(MIXED, svl, len(groups), lockstep), *(FormGenerator(g, svl, 1, lockstep) for g in groups))


def run_fuzz(cases: int, seed: int, against: str = "qemu", isa_subset: str | None = None, lockstep: bool = False,
             out_dir: str | Path = ".", config: dict | None = None, **options):
    """Run ``cases`` random arm_sme programs on the simulator and on ``against`` and compare them."""
    from ...core.campaign import run_campaign

    config = configure(config or {})
    return run_campaign(ISA_NAME, generators(config["svl"], lockstep), cases, seed, against, isa_subset, lockstep,
                        out_dir, config=config, **options)
