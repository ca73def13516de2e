"""The A64 branches: B, B.cond (b.eq ... b.nv), CBZ/CBNZ, TBZ/TBNZ, and the calls and returns: BL, BLR, BR
and RET (X30, or another register), with a real call stack (semantics/base_branch.py)."""

from __future__ import annotations

from functools import partial

from ..operands import BitNumber, BranchTarget, Condition, TestReg
from ..operands.base import DefaultLinkRegister
from ..operands.scalar import CONDITION_SYNONYMS, CONDITIONS
from ..semantics import base_branch as semantics
from .base import Alias, add
from .scalar import R, _form, _sf

GROUP = "control"

add(_form("B", "b", "B <label>", "branch", "0 00101 imm26:26", (BranchTarget("imm26", 26),), semantics.b,
          group=GROUP))


def _condition_aliases():
    aliases = [Alias(f"b.{name}", (BranchTarget("imm19", 19),), partial(lambda c, f: f["cond"] == c, code),
                     {"cond": code}) for code, name in enumerate(CONDITIONS)]
    aliases += [Alias(f"b.{synonym}", (BranchTarget("imm19", 19),), lambda f: False,
                      {"cond": CONDITIONS.index(name)}, accepts=lambda f: True)
                for synonym, name in CONDITION_SYNONYMS.items()]
    return tuple(aliases)


add(_form("B_cond", "b.cond", "B.<cond> <label>", "branch if a condition holds on NZCV (b.eq, b.ne ... b.nv)",
          "0101010 0 imm19:19 0 cond:4", (BranchTarget("imm19", 19), Condition()), semantics.b_cond,
          group=GROUP, aliases=_condition_aliases(), written_as_aliases_only=True))

for _width in (32, 64):
    _r = "X" if _width == 64 else "W"
    for _name, _op in (("CBZ", "0"), ("CBNZ", "1")):
        add(_form(f"{_name}_{_width}", _name.lower(), f"{_name} <{_r}t>, <label>",
                  f"branch if a register is {'not ' if _op == '1' else ''}zero",
                  f"{_sf(_width)} 011010 {_op} imm19:19 Rt:5", (R("Rt", _width), BranchTarget("imm19", 19)),
                  partial(semantics.compare_branch, datasize=_width, nonzero=_op == "1"), group=GROUP))

for _name, _op in (("TBZ", "0"), ("TBNZ", "1")):
    add(_form(_name, _name.lower(), f"{_name} <R><t>, #<imm>, <label>",
              f"branch if a bit of a register is {'one' if _op == '1' else 'zero'}",
              f"b5:1 011011 {_op} b40:5 imm14:14 Rt:5", (TestReg(), BitNumber(), BranchTarget("imm14", 14)),
              partial(semantics.test_branch, bit_val=int(_op)), group=GROUP))

add(_form("BL", "bl", "BL <label>", "call: branch, with the return address (the next instruction) in X30",
          "1 00101 imm26:26", (BranchTarget("imm26", 26),), semantics.branch_link, group=GROUP,
          position_dependent=True))
add(_form("BR", "br", "BR <Xn>", "branch to the address in a register", "1101011 0 0 00 11111 0000 0 0 Rn:5 00000",
          (R("Rn", 64),), partial(semantics.branch_register, link=False), group=GROUP, position_dependent=True))
add(_form("BLR", "blr", "BLR <Xn>", "call the address in a register, with the return address in X30",
          "1101011 0 0 01 11111 0000 0 0 Rn:5 00000", (R("Rn", 64),), partial(semantics.branch_register, link=True),
          group=GROUP, position_dependent=True))
add(_form("RET", "ret", "RET {<Xn>}", "return to the address in X30 (or Xn); with no call pending the run ends",
          "1101011 0 0 10 11111 0000 0 0 Rn:5 00000", (DefaultLinkRegister(),), semantics.ret, group=GROUP))
