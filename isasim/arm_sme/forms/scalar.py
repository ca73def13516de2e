"""The scalar A64 subset a kernel's loop needs, and UDF."""

from __future__ import annotations

from .. import scalar
from ..encoding import Encoding
from ..operands import AddImm, BaseOffset, BranchTarget, Imm, MovWideImm
from .base import X, X_OR_SP, A64Form, add


# ---- the scalar subset ----------------------------------------------------------------------------------
for _form in (
    A64Form("MOVZ_64_mov", "mov", "MOV <Xd>, #<imm>", "move a 16-bit immediate shifted by 0/16/32/48 (MOVZ)",
            Encoding("1 10 100101 hw:2 imm16:16 Rd:5"), (X("Rd"), MovWideImm(64)), scalar.movz,
            doc=scalar.movz.__doc__),
    A64Form("ADD_64_imm", "add", "ADD <Xd|SP>, <Xn|SP>, #<imm>{, LSL #12}", "add an immediate",
            Encoding("1 0 0 100010 sh:1 imm12:12 Rn:5 Rd:5"), (X_OR_SP("Rd"), X_OR_SP("Rn"), AddImm()), scalar.add_imm,
            doc=scalar.add_imm.__doc__),
    A64Form("SUB_64_imm", "sub", "SUB <Xd|SP>, <Xn|SP>, #<imm>{, LSL #12}", "subtract an immediate",
            Encoding("1 1 0 100010 sh:1 imm12:12 Rn:5 Rd:5"), (X_OR_SP("Rd"), X_OR_SP("Rn"), AddImm()), scalar.sub_imm,
            doc=scalar.sub_imm.__doc__),
    A64Form("SUBS_64_imm", "subs", "SUBS <Xd>, <Xn|SP>, #<imm>{, LSL #12}", "subtract an immediate, setting NZCV",
            Encoding("1 1 1 100010 sh:1 imm12:12 Rn:5 Rd:5"), (X("Rd"), X_OR_SP("Rn"), AddImm()), scalar.subs_imm,
            doc=scalar.subs_imm.__doc__),
    A64Form("LDR_64_uoff", "ldr", "LDR <Xt>, [<Xn|SP>{, #<pimm>}]", "load a 64-bit register from memory",
            Encoding("11 111 0 01 01 imm12:12 Rn:5 Rt:5"), (X("Rt"), BaseOffset(8)), scalar.ldr_x,
            doc=scalar.ldr_x.__doc__, group="memory"),
    A64Form("STR_64_uoff", "str", "STR <Xt>, [<Xn|SP>{, #<pimm>}]", "store a 64-bit register to memory",
            Encoding("11 111 0 01 00 imm12:12 Rn:5 Rt:5"), (X("Rt"), BaseOffset(8)), scalar.str_x,
            doc=scalar.str_x.__doc__, group="memory"),
    A64Form("B", "b", "B <label>", "branch", Encoding("0 00101 imm26:26"), (BranchTarget("imm26", 26),),
            scalar.b, doc=scalar.b.__doc__, group="control"),
    A64Form("CBZ_64", "cbz", "CBZ <Xt>, <label>", "branch if a register is zero",
            Encoding("1 011010 0 imm19:19 Rt:5"), (X("Rt"), BranchTarget("imm19", 19)), scalar.cbz,
            doc=scalar.cbz.__doc__, group="control"),
    A64Form("CBNZ_64", "cbnz", "CBNZ <Xt>, <label>", "branch if a register is not zero",
            Encoding("1 011010 1 imm19:19 Rt:5"), (X("Rt"), BranchTarget("imm19", 19)), scalar.cbnz,
            doc=scalar.cbnz.__doc__, group="control"),
    A64Form("RET", "ret", "RET", "return (the program ends)", Encoding("1101011 0 0 10 11111 0000 0 0 11110 00000"),
            (), scalar.ret, doc=scalar.ret.__doc__, group="control"),
    A64Form("NOP", "nop", "NOP", "no operation", Encoding("11010101 00000011 0010 0000 000 11111"), (), scalar.nop,
            doc=scalar.nop.__doc__),
):
    add(_form)



# UDF #imm16: permanently undefined (its every execution is UNDEFINED): what a raw word that decodes
# to no isasim form would also be, but named, so that a trace can hold one
add(A64Form("UDF", "udf", "UDF #<imm>", "permanently undefined", Encoding("0000000000000000 imm16:16"),
             (Imm("imm16", 16),), None, doc="UNDEFINED;", group="control"))
UNDEFINED_FORMS = {"UDF": "UDF is permanently undefined (Arm ARM C6.2.443)"}
