"""The worked element of the SME2 integer multiply-adds and adds into ZA (forms/za_integer_multiply_add.py), in
plain integers from the example's state before the step, and one Check against what the machine wrote:

- SMLAL ... SUMLALL: element 0 of the last of the ways ZA vectors of the group's first vector set (vec rounded
  down to a multiple of the ways, plus ways - 1): old +/- Zn lane (ways - 1) x its Zm lane;
- ADD/SUB into ZA: element 0 of the group's first vector (old +/- Zn lane 0, or Zn lane 0 +/- Zm lane 0);
- the multi-vector ADD: element 0 of the first register of the list.

The Check also holds the locations the step wrote outside its destination (none), as issue 28's write-set check
does, so that a stray write is caught too."""

from __future__ import annotations

from ...core.explain import Check, Table
from .before_state import first_group_vector, hex_text, lane, lane_text, plus, signed

MODULE = "za_integer_multiply_add"


def applies(form) -> bool:
    module = getattr(getattr(form.execute, "func", form.execute), "__module__", "") or ""
    return module.rsplit(".", 1)[-1] == MODULE


def _element(data, bits: int) -> int:
    return int.from_bytes(bytes(data[:bits // 8]), "little")


def _stray(run, allowed: str) -> str:
    """The locations the step wrote other than ``allowed`` ("za", or "z": the Z registers) and the PC, or "none"."""
    written = sorted({"memory" if w.kind == "mem" else str(w.where).split("[")[0].lower()
                      for w in run.record.writes if str(w.where) != "pc"})
    stray = [w for w in written if not (w == "za" if allowed == "za" else w[:1] == "z" and w[1:].isdigit())]
    return ", ".join(stray) or "none"


def _check(what: str, expected: int, got: int, bits: int, run, allowed: str, where: str) -> Check:
    return Check(f"{what}; locations written outside {where}", f"{hex_text(expected, bits)}; none",
                 f"{hex_text(got, bits)}; {_stray(run, allowed)}")


def za_multiply_add_blocks(ins, run) -> list:
    form, state = ins.form, run.machine.state
    if form.group != "za":  # the multi-vector ADD: Z[dn] element 0 += Z[m] element 0
        registers, _, m = ins.operands
        esize = {"b": 8, "h": 16, "s": 32, "d": 64}[form.id.split("_")[2]]
        dn = registers[0]
        a, b = lane(run, dn, 0, esize), lane(run, m, 0, esize)
        expected = (a + b) % (1 << esize)
        table = Table(["", "value"], [[lane_text(dn, 0, esize), f"{hex_text(a, esize)} = {a}"],
                                      [lane_text(m, 0, esize), f"{hex_text(b, esize)} = {b}"],
                                      [f"sum MOD 2^{esize}", f"{hex_text(expected, esize)}"]],
                      title=f"z{dn} element 0 worked through: Zdn + Zm")
        got = _element(state.z[dn], esize)
        return [table, _check(f"z{dn} element 0", expected, got, esize, run, "z", "the Z registers")]
    shape = form.extra.get("shape")
    if shape is None:
        return _za_add_blocks(ins, run)
    (v, offset), n, m = ins.operands
    ways, bits, esize = shape.ways, shape.source_bits, shape.esize
    vec = first_group_vector(run, v, offset, shape.nreg)
    first = vec - vec % ways
    i = ways - 1
    row = first + i
    if shape.second == "indexed":
        zm, index = m
        km, where = index, f" (segment 0, index {index})"
    else:  # single: Zm; multiple: the first register of the list, which r = 0 pairs with Zn
        zm, km, where = m, i, ""
    raw1, raw2 = lane(run, n, i, bits), lane(run, zm, km, bits)
    a = signed(raw1, bits) if shape.signed1 else raw1
    b = signed(raw2, bits) if shape.signed2 else raw2
    old = _element(run.before["za"][row], esize)
    term = -a * b if shape.subtract else a * b
    expected = (old + term) % (1 << esize)
    kind1, kind2 = ("SInt" if shape.signed1 else "UInt"), ("SInt" if shape.signed2 else "UInt")
    table = Table(["", "value"], [
        ["vec", f"(UInt(W{v}) + {offset}) MOD vstride = {vec}, down to a multiple of {ways}: {first}"],
        ["ZA vector", f"vec + i = {first} + {i} = {row} (r = 0, i = {i})"],
        [f"{kind1}({lane_text(n, i, bits)})", f"{hex_text(raw1, bits)} = {a}"],
        [f"{kind2}({lane_text(zm, km, bits)}){where}", f"{hex_text(raw2, bits)} = {b}"],
        [f"ZA[{row}] element 0 before", f"{hex_text(old, esize)} = {old}"],
        [f"old {'-' if shape.subtract else '+'} product MOD 2^{esize}",
         f"{old} {plus(term)} = {old + term} -> {hex_text(expected, esize)}"],
    ], title=f"ZA[{row}] element 0 worked through: lane ways * 0 + i of Zn times its Zm lane, widened to {esize} bits")
    got = _element(state.za[row], esize)
    return [table, _check(f"ZA[{row}] element 0", expected, got, esize, run, "za", "ZA")]


def _za_add_blocks(ins, run) -> list:
    form, state = ins.form, run.machine.state
    esize = 32 if "_zas_" in form.id else 64
    nreg = int(form.id[-1])
    subtract = form.mnemonic == "sub"
    (v, offset), n = ins.operands[:2]
    vec = first_group_vector(run, v, offset, nreg)
    a = lane(run, n, 0, esize)
    if len(ins.operands) == 2:  # array accumulators: ZA[vec] = ZA[vec] +/- Zn
        first_name, first = f"ZA[{vec}] element 0 before", _element(run.before["za"][vec], esize)
        second_name, second = lane_text(n, 0, esize), a
    else:  # array results: ZA[vec] = Zn +/- Zm (single) or Zn +/- Zm list's first (multiple)
        m = ins.operands[2]
        first_name, first = lane_text(n, 0, esize), a
        second_name, second = lane_text(m, 0, esize), lane(run, m, 0, esize)
    total = first - second if subtract else first + second
    expected = total % (1 << esize)
    table = Table(["", "value"], [
        ["vec", f"(UInt(W{v}) + {offset}) MOD vstride = {vec}"],
        [first_name, f"{hex_text(first, esize)} = {first}"],
        [second_name, f"{hex_text(second, esize)} = {second}"],
        [f"{'difference' if subtract else 'sum'} MOD 2^{esize}", f"{total} -> {hex_text(expected, esize)}"],
    ], title=f"ZA[{vec}] element 0 worked through")
    got = _element(state.za[vec], esize)
    return [table, _check(f"ZA[{vec}] element 0", expected, got, esize, run, "za", "ZA")]
