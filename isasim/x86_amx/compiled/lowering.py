"""Lowering: each instruction of a program as a form number and a row of int64 operands, or no compiled body.

What the compiled loop (loop.py) runs is plain data: ``forms[i]`` says which body instruction i takes (NONE:
it hands back to the Python semantics), ``ops[i]`` holds its operands resolved at lowering (register numbers
and masks, immediates reduced to the operand width, tile numbers, branch targets as instruction indices).
Lowering decides only what depends on the instruction and the CPU model; everything that depends on the
state (a TILECFG's shapes, an address, a memory region) is checked by the body at run time.

An instruction gets no body where its operands are not a case the body models (8- and 16-bit registers,
memory operands of scalar instructions, a segment prefix, a feature the CPU model lacks, repeated TMUL
tiles, an invalid encoding): the Python semantics then run it, and raise what it raises.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..operands import GPR_VIEWS, Imm, Mem, Reg, Target, tile_number
from ..semantics import amx as amx_semantics
from ..semantics import scalar as scalar_semantics

# ---- form numbers (the loop's dispatch) ------------------------------------------------------------------
NONE = 0
TILEZERO, TILELOADD, TILELOADDT1, TILESTORED = 1, 2, 3, 4
TDPBSSD, TDPBSUD, TDPBUSD, TDPBUUD, TDPBF16PS, TDPFP16PS = 5, 6, 7, 8, 9, 10
ADD, SUB, CMP, INC, DEC, MOV, LEA, JCC, JMP, RET, NOP, XOR, AND, OR, TEST = range(11, 26)

FORM_NAMES = {TILEZERO: "tilezero", TILELOADD: "tileloadd", TILELOADDT1: "tileloaddt1", TILESTORED: "tilestored",
              TDPBSSD: "tdpbssd", TDPBSUD: "tdpbsud", TDPBUSD: "tdpbusd", TDPBUUD: "tdpbuud",
              TDPBF16PS: "tdpbf16ps", TDPFP16PS: "tdpfp16ps", ADD: "add", SUB: "sub", CMP: "cmp", INC: "inc",
              DEC: "dec", MOV: "mov", LEA: "lea", JCC: "jcc", JMP: "jmp", RET: "ret", NOP: "nop", XOR: "xor",
              AND: "and", OR: "or", TEST: "test"}
FORM_NUMBERS = {name: number for number, name in FORM_NAMES.items()}

# ---- the operand row --------------------------------------------------------------------------------------
OPERANDS = 10  # columns of ops
PLANT = OPERANDS - 1  # a test's deliberate difference: the body perturbs its result (see program.build)
# tile forms:   0 tile (TMUL: C), 1 checks slot, then
#   loads/stores: 2 base register (-1: none), 3 base mask, 4 index register (-1: none), 5 index mask,
#                 6 scale, 7 disp (int64 bits)
#   TMULs:        2 A, 3 B
# scalar forms: 0 dest register, 1 dest mask (its width), 2 source register (-1: an immediate), 3 the
#   immediate (reduced to the width, as int64 bits), 4 the width in bits; LEA: 2-7 as the tile loads' address
# branches:     0 condition code (Jcc), 1 target index (-1: the end of the program, -2: not an instruction),
#               2 target address

_AMX_FORMS = {amx_semantics.tilezero: TILEZERO, amx_semantics.tileloadd: TILELOADD,
              amx_semantics.tileloaddt1: TILELOADDT1, amx_semantics.tilestored: TILESTORED,
              amx_semantics.tdpbssd: TDPBSSD, amx_semantics.tdpbsud: TDPBSUD, amx_semantics.tdpbusd: TDPBUSD,
              amx_semantics.tdpbuud: TDPBUUD, amx_semantics.tdpbf16ps: TDPBF16PS,
              amx_semantics.tdpfp16ps: TDPFP16PS}
_ARITHMETIC = {scalar_semantics.add: ADD, scalar_semantics.sub: SUB, scalar_semantics.cmp: CMP,
               scalar_semantics.xor: XOR, scalar_semantics.and_: AND, scalar_semantics.or_: OR,
               scalar_semantics.test: TEST}
_JCC_CODES = {semantics: code for code, semantics in enumerate(scalar_semantics.JCC.values())}  # CONDITIONS order
TMUL_FORMS = (TDPBSSD, TDPBSUD, TDPBUSD, TDPBUUD, TDPBF16PS, TDPFP16PS)
TILE_FORMS = (TILEZERO, TILELOADD, TILELOADDT1, TILESTORED) + TMUL_FORMS


def _bits(value: int) -> int:
    """An unsigned 64-bit number as the int64 with the same bits."""
    value %= 1 << 64
    return value - (1 << 64) if value >> 63 else value


def _whole_gpr(operand):
    """(register number, mask) of a 64- or 32-bit GPR operand, else None."""
    if isinstance(operand, Reg):
        view = GPR_VIEWS.get(operand.name)
        if view is not None and view.bits in (32, 64):
            return view.number, _bits(view.mask)
    return None


def _address(mem) -> list[int] | None:
    """[base, base mask, index, index mask, scale, disp] of a memory operand the bodies model (GPR base and
    index of 64 or 32 bits, no segment, not rip-relative), else None."""
    if not isinstance(mem, Mem) or mem.segment or mem.base == "rip":
        return None
    row = []
    for name in (mem.base, mem.index if mem.index != "riz" else None):
        if not name:
            row += [-1, 0]
            continue
        register = _whole_gpr(Reg(name))
        if register is None:
            return None
        row += list(register)
    return row + [mem.scale, _bits(mem.disp)]


class Lowered:
    """A program's lowering for one CPU model: forms, ops, addresses, and the checks-passed keys."""

    def __init__(self, program, model):
        instructions = program.instructions
        count = len(instructions)
        self.count = count
        self.end = program.end
        self.addresses = np.array([i.address for i in instructions] + [program.end], dtype=np.int64)
        self.next_addresses = [i.next_address for i in instructions]
        self.index_of = {i.address: n for n, i in enumerate(instructions)}
        self.forms = np.zeros(count, dtype=np.int32)
        self.ops = np.zeros((count, OPERANDS), dtype=np.int64)
        # The TILECFG-dependent checks the Python semantics remember in state.checks_passed, one slot per key
        self.keys: list[tuple] = []
        slots: dict[tuple, int] = {}
        for n, instruction in enumerate(instructions):
            lowered = self._lower(instruction, model)
            if lowered is None:
                continue
            form, row, key = lowered
            if key is not None:
                row[1] = slots.setdefault(key, len(slots))
                if row[1] == len(self.keys):
                    self.keys.append(key)
            self.forms[n] = form
            self.ops[n, :len(row)] = row

    def _target(self, target: Target) -> list[int]:
        address = target.address
        if address == self.end:
            return [-1, _bits(address)]
        return [self.index_of.get(address, -2), _bits(address)]

    def _lower(self, instruction, model):
        """(form, operand row, checks-passed key or None), or None: no compiled body."""
        if instruction.invalid is not None:
            return None
        form, operands = instruction.form, instruction.operands
        semantics = getattr(form, "semantics", None)
        if instruction.extra.get("prefixes") and semantics not in _JCC_CODES:
            return None  # (a repeat or lock prefix: the Python semantics know what it means)
        number = _AMX_FORMS.get(semantics)
        if number is not None:
            if form.feature not in model.features:
                return None  # the semantics' bind raises #UD
            return self._lower_amx(number, operands)
        if getattr(form, "feature", None) != "BASE":
            return None
        if semantics in _ARITHMETIC:
            return self._lower_arithmetic(_ARITHMETIC[semantics], operands)
        if semantics in (scalar_semantics.inc, scalar_semantics.dec):
            dest = _whole_gpr(operands[0])
            if dest is None:
                return None
            bits = 64 if dest[1] == -1 else 32
            return (INC if semantics is scalar_semantics.inc else DEC), [dest[0], dest[1], -1, 1, bits], None
        if semantics is scalar_semantics.mov:
            return self._lower_arithmetic(MOV, operands)
        if semantics is scalar_semantics.lea:
            dest, address = _whole_gpr(operands[0]), _address(operands[1])
            if dest is None or address is None:
                return None
            return LEA, [dest[0], dest[1]] + address, None
        if semantics in _JCC_CODES:
            return JCC, [_JCC_CODES[semantics]] + self._target(operands[0]), None
        if semantics is scalar_semantics.jmp and isinstance(operands[0], Target):
            return JMP, [0] + self._target(operands[0]), None
        if semantics is scalar_semantics.ret and not operands:
            return RET, [], None
        if semantics is scalar_semantics.nop:
            return NOP, [], None
        return None

    def _lower_arithmetic(self, number: int, operands):
        if len(operands) != 2:
            return None
        dest, src = operands
        target = _whole_gpr(dest)
        if target is None:
            return None
        bits = 64 if target[1] == -1 else 32
        if isinstance(src, Imm):
            return number, [target[0], target[1], -1, _bits(src.value % (1 << bits)), bits], None
        source = _whole_gpr(src)
        if source is None or source[1] != target[1]:
            return None
        return number, [target[0], target[1], source[0], 0, bits], None

    def _lower_amx(self, number: int, operands):
        if number == TILEZERO:
            t = tile_number(operands[0].name)
            return number, [t, 0], ("TILEZERO", t)
        if number in (TILELOADD, TILELOADDT1, TILESTORED):
            tile, mem = (operands[0], operands[1]) if number != TILESTORED else (operands[1], operands[0])
            address = _address(mem)
            if address is None:
                return None
            t = tile_number(tile.name)
            return number, [t, 0] + address, ("E3", t)
        c, a, b = (tile_number(o.name) for o in operands)
        if len({c, a, b}) != 3:
            return None  # #UD, the semantics' to raise
        return number, [c, 0, a, b], ("TMUL", c, a, b)


# Lowerings by program and CPU model, while the program lives (the fuzzer and the benchmarks make a new
# Machine for every run of one program).
_LOWERED: dict[tuple[int, str], tuple[weakref.ref, Lowered]] = {}


def lowered(program, model) -> Lowered:
    key = (id(program), model.name)
    entry = _LOWERED.get(key)
    if entry is not None and entry[0]() is program:
        return entry[1]

    def forget(ref, key=key):
        if _LOWERED.get(key, (None,))[0] is ref:
            del _LOWERED[key]

    result = Lowered(program, model)
    _LOWERED[key] = (weakref.ref(program, forget), result)
    return result
