"""The worked example's check line for the SVE and SME2 forms of issue 28 (forms/sve_data.py, sve_multi.py,
sme2_za.py): what the step wrote, against the locations the form's destination names (its Z or P registers, a
general register and NZCV, ZA or ZT0, or memory for a store), so that an example shows a step that changed
nothing it should not.  Their values are held to QEMU by tests/arm_sme/semantics/test_sve_forms_vs_qemu.py."""

from __future__ import annotations

from ...core.explain import Check
from ..faults import UNDEFINED

MODULES = ("sve_data", "sve_arith", "sve_misc", "sve_counters", "sme2_za",
           "za_integer_multiply_add")  # issue 29: the SME2 integer multiply-adds and adds into ZA
MODULES += ("multi_vector_integer", "multi_vector_fp")  # issue 29: SME2's operations on groups of Z registers
MODULES += ("za_fp_multiply_add",)  # issue 29: the SME2 FP multiply-adds and adds into ZA, FP/bitwise outer products
MODULES += ("quarter_tile_outer_products",)  # issue 29: SME2.2's quarter-tile outer products (FEAT_SME_MOP4)


def applies(form) -> bool:
    module = getattr(getattr(form.execute, "func", form.execute), "__module__", "") or ""
    return module.rsplit(".", 1)[-1] in MODULES or form.mnemonic == "movaz"  # issue 29: SME2.1's MOVAZ


def _destinations(ins) -> set[str]:
    """The location names (as the journal writes them) the form may write."""
    form, fields = ins.form, ins.extra["fields"]
    if form.mnemonic.startswith("st"):
        return {"memory"}
    if (form.group == "za" and form.mnemonic != "movaz" and form.id != "MOVT_x"  # MOVT Xt, ZT0[offs] writes Xt
            or form.group == "za_move" and form.id.startswith("MOVA_za")):
        return {"za", "zt0"}
    first = form.operands[0]
    value = first.value(fields) if hasattr(first, "value") else None
    kind = getattr(first, "kind", "")
    names = set()
    if kind == "gpr":
        names.add(f"x{value}")
    elif kind in ("p", "p_governing"):
        names.add(f"p{value}")
    elif isinstance(value, tuple):
        names |= {f"z{n}" for n in value}
    elif kind == "z_list" and getattr(first, "nreg", 1) > 1:  # {z4.s - z7.s}: the first register's number
        names |= {f"z{(value + i) % 32}" for i in range(first.nreg)}
    elif kind == "fp" or kind.startswith("z"):
        names.add(f"z{value}")
    if form.mnemonic == "movaz":
        names.add("za")  # MOVAZ zeroes what it read
    if form.mnemonic.startswith(("while", "cmp")) or form.mnemonic.endswith("s") and form.group == "predicate":
        names.add("nzcv")  # the WHILEs, the compares and the flag-setting predicate logic set NZCV
    return names


def sve_blocks(ins, run) -> list:
    allowed = _destinations(ins)
    written = sorted({"memory" if w.kind == "mem" else str(w.where).split("[")[0].lower()
                      for w in run.record.writes if str(w.where) != "pc"})
    stray = [w for w in written if w not in allowed]
    return [Check(f"locations written outside the destination ({', '.join(sorted(allowed))})", "none",
                  ", ".join(stray) or "none")]


def fault_check(ins, run) -> Check:
    """The fault the example's step raised, beside the one the form must raise there: UNDEFINED for an SME2
    MOVA of four .D slices where the tile has two (SVL 128, as QEMU has it) and for a form whose feature the
    configuration lacks (SVE_B16B16's BFMAX... by default), none otherwise."""
    form, svl = ins.form, run.machine.state.svl
    four_d = form.id in ("MOVA_z_za_d_x4", "MOVA_za_z_d_x4") and svl // 64 < 4
    missing = form.feature not in ("A64", "SME", "SME2") and form.feature not in run.machine.state.features
    # ZIP/UZP of nreg registers: UNDEFINED where nreg * esize > VL (.Q pairs at 128 bits, .D and .Q quads)
    too_wide = form.mnemonic in ("zip", "uzp") and _zip_width(form.id) > svl
    return Check("the fault the machine raised", UNDEFINED if four_d or missing or too_wide else "none",
                 run.fault.kind)


def _zip_width(form_id: str) -> int:
    """nreg * esize of a multi-vector ZIP/UZP form (ZIP_x4_d: 4 * 64)."""
    _, count, size = form_id.split("_")
    return int(count[1:]) * {"b": 8, "h": 16, "s": 32, "d": 64, "q": 128}[size]
