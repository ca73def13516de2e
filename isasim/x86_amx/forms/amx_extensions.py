"""The AMX extensions Intel has published beyond AMX-TILE/INT8/BF16/FP16, one declaration per form, from the
opcode tables of Intel's ISE (Architecture Instruction Set Extensions Programming Reference):

    AMX-COMPLEX  TCMMIMFP16PS, TCMMRLFP16PS                 (Granite Rapids-D)
    AMX-FP8      TDPBF8PS, TDPBHF8PS, TDPHBF8PS, TDPHF8PS   (Diamond Rapids; VEX map 5)
    AMX-TF32     TMMULTF32PS                                (Diamond Rapids)
    AMX-MOVRS    TILELOADDRS, TILELOADDRST1                 (Diamond Rapids)
    AMX-AVX512   TCVTROWD2PS, TCVTROWPS2BF16H/L, TCVTROWPS2PHH/L, TILEMOVROW, each with a row in r32 or imm8
                 (Diamond Rapids; EVEX.512, declared here: iced-x86 1.21 does not know these opcodes)

SPEC ONLY, NO SILICON SEEN (except that the silicon backend runs AMX-COMPLEX where a host has it).  The VEX
forms are AmxForm declarations exactly as forms/amx.py's (the ISE row drives decode, encode, assembly,
disassembly and explain); the EVEX forms are AmxEvexForm, whose opcode text is the ISE's EVEX row.  The
MOVRS forms' EVEX (APX) spellings with r16-r31 are not simulated: isasim has no APX registers.
AMX-TRANSPOSE is not declared: Intel withdrew it (docs/x86_amx/amx-extensions.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from ...core.errors import AssemblyError
from ...core.program import FormTable, syntax_id
from ..context import X86Context
from ..encoding.vex import MAP_CODES, PP_CODES, VexOpcode
from ..faults import INVALID_OPCODE
from ..operands import GPR_VIEWS, Imm, Reg, gpr_name, tile_number
from ..semantics import amx_extensions as semantics
from .amx import AMX_E3_FAULTS, TMUL_FAULTS, AmxForm

SPEC_ONLY = "spec only, no silicon seen"

FORMS = FormTable()  # every AMX-extension form, by id

_TMUL_RMV = ("ModRM:reg (r, w)", "ModRM:r/m (r)", "VEX.vvvv (r)")
_TMUL_ROLES = ("C", "A", "B")

# The CPUID features (leaf 7 sub-leaf 1 and leaf 1EH sub-leaf 1 bits, as Intel names them).
EXTENSION_FEATURES = frozenset({"AMX-COMPLEX", "AMX-FP8", "AMX-TF32", "AMX-MOVRS", "AMX-AVX512"})


def declare(semantics_function: Callable, syntax: str, opcode: str, encoding: tuple[str, ...], feature: str,
            faults=(), operand_roles=(), elements=()) -> AmxForm:
    """A VEX AMX form from its ISE row, as forms/amx.py declares the AMX-TILE forms."""
    doc = (semantics_function.__doc__ or "").strip()
    form = AmxForm(syntax, VexOpcode.parse(opcode), encoding, feature, semantics_function, doc.split("\n")[0],
                   tuple(faults), operand_roles, element_types=elements)
    FORMS.add(form)
    return form


# ---- AMX-COMPLEX, AMX-FP8, AMX-TF32 (TMULs: C += A·B of three different tiles) ----------------------------
declare(semantics.tcmmimfp16ps, "TCMMIMFP16PS tmm1, tmm2, tmm3", "VEX.128.66.0F38.W0 6C 11:rrr:bbb", _TMUL_RMV,
        "AMX-COMPLEX", TMUL_FAULTS, _TMUL_ROLES, ("fp32", "fp16 pairs (re, im)", "fp16 pairs (re, im)"))
declare(semantics.tcmmrlfp16ps, "TCMMRLFP16PS tmm1, tmm2, tmm3", "VEX.128.NP.0F38.W0 6C 11:rrr:bbb", _TMUL_RMV,
        "AMX-COMPLEX", TMUL_FAULTS, _TMUL_ROLES, ("fp32", "fp16 pairs (re, im)", "fp16 pairs (re, im)"))
declare(semantics.tdpbf8ps, "TDPBF8PS tmm1, tmm2, tmm3", "VEX.128.NP.MAP5.W0 FD 11:rrr:bbb", _TMUL_RMV,
        "AMX-FP8", TMUL_FAULTS, _TMUL_ROLES, ("fp32", "bf8", "bf8"))
declare(semantics.tdpbhf8ps, "TDPBHF8PS tmm1, tmm2, tmm3", "VEX.128.F2.MAP5.W0 FD 11:rrr:bbb", _TMUL_RMV,
        "AMX-FP8", TMUL_FAULTS, _TMUL_ROLES, ("fp32", "bf8", "hf8"))
declare(semantics.tdphbf8ps, "TDPHBF8PS tmm1, tmm2, tmm3", "VEX.128.F3.MAP5.W0 FD 11:rrr:bbb", _TMUL_RMV,
        "AMX-FP8", TMUL_FAULTS, _TMUL_ROLES, ("fp32", "hf8", "bf8"))
declare(semantics.tdphf8ps, "TDPHF8PS tmm1, tmm2, tmm3", "VEX.128.66.MAP5.W0 FD 11:rrr:bbb", _TMUL_RMV,
        "AMX-FP8", TMUL_FAULTS, _TMUL_ROLES, ("fp32", "hf8", "hf8"))
declare(semantics.tmmultf32ps, "TMMULTF32PS tmm1, tmm2, tmm3", "VEX.128.66.0F38.W0 48 11:rrr:bbb", _TMUL_RMV,
        "AMX-TF32", TMUL_FAULTS, _TMUL_ROLES, ("fp32", "tf32", "tf32"))

# ---- AMX-MOVRS ---------------------------------------------------------------------------------------------
declare(semantics.tileloaddrs, "TILELOADDRS tmm1, sibmem", "VEX.128.F2.0F38.W0 4A !(11):rrr:100",
        ("ModRM:reg (w)", "ModRM:r/m (r)"), "AMX-MOVRS", AMX_E3_FAULTS)
declare(semantics.tileloaddrst1, "TILELOADDRST1 tmm1, sibmem", "VEX.128.66.0F38.W0 4A !(11):rrr:100",
        ("ModRM:reg (w)", "ModRM:r/m (r)"), "AMX-MOVRS", AMX_E3_FAULTS)


# ---- AMX-AVX512: EVEX.512 forms with a zmm destination ----------------------------------------------------

_EVEX_RE = re.compile(r"^EVEX\.512\.(?P<pp>NP|66|F2|F3)\.(?P<map>0F38|0F3A)\.W0 (?P<op>[0-9A-F]{2}) 11:rrr:bbb(?P<ib> ib)?$")


@dataclass(frozen=True)
class EvexOpcode:
    """An ISE EVEX row of the register-only AMX-AVX512 forms, e.g. ``EVEX.512.F3.0F38.W0 4A 11:rrr:bbb``:
    L'L = 10, the implied prefix, the map, W0, the opcode byte; ModRM.mod = 11; ``ib``: an imm8 follows."""

    text: str
    pp: int
    map: int
    opcode: int
    imm8: bool
    W: int = 0
    LL: int = 0b10

    @classmethod
    def parse(cls, text: str) -> "EvexOpcode":
        m = _EVEX_RE.match(text)
        if not m:
            raise ValueError(f"not an ISE EVEX opcode of an AMX-AVX512 form: {text!r}")
        return cls(text, PP_CODES[m["pp"]], MAP_CODES[m["map"]], int(m["op"], 16), bool(m["ib"]))


_ROW_FAULTS = (
    (INVALID_OPCODE, "tiles are not configured (TILECFG.palette is 0)"),
    (INVALID_OPCODE, "tsrc is not configured (its rows or colsb is 0)"),
    (INVALID_OPCODE, "row_index >= tsrc.rows (isasim's choice: ROW_BEYOND_ROWS; the ISE's loop does not check)"),
    (INVALID_OPCODE, "EVEX.z, EVEX.b, EVEX.aaa not 0, EVEX.W not 0, or tmm16-31 / r16-31 named"),
)


@dataclass
class AmxEvexForm:
    syntax: str  # e.g. "TCVTROWD2PS zmm1, tmm2, r32"
    opcode: EvexOpcode
    operand_encoding: tuple[str, ...]
    feature: str
    semantics: Callable = field(repr=False)
    summary: str = ""
    faults: tuple[tuple[str, str], ...] = _ROW_FAULTS
    operand_roles: tuple[str, ...] = ()
    element_types: tuple[str, ...] = ()
    is_tmul = False

    @cached_property
    def id(self) -> str:
        return syntax_id(self.syntax)

    @cached_property
    def mnemonic(self) -> str:
        return self.syntax.split()[0].lower()

    @cached_property
    def slug(self) -> str:
        """The reference page's name: the mnemonic and the row operand's kind (tcvtrowd2ps-r32)."""
        return f"{self.mnemonic}-{'imm8' if self.opcode.imm8 else 'r32'}"

    @cached_property
    def operand_names(self) -> tuple[str, ...]:
        return tuple(o.strip() for o in self.syntax.split(None, 1)[1].split(","))

    @cached_property
    def operand_kinds(self) -> tuple[str, ...]:
        return tuple({"zmm1": "zmm", "tmm2": "tmm", "r32": "r32", "imm8": "imm8"}[n] for n in self.operand_names)

    @cached_property
    def operand_fields(self) -> tuple[str, ...]:
        return tuple(enc.split(" (")[0] for enc in self.operand_encoding)

    @property
    def doc(self) -> str:
        return (self.semantics.__doc__ or "").strip()

    def check_operands(self, operands: tuple) -> None:
        if len(operands) != 3:
            raise AssemblyError(f"{self.mnemonic} takes 3 operands ({', '.join(self.operand_names)}), got {len(operands)}")
        zmm, tmm, row = operands
        if not (isinstance(zmm, Reg) and re.fullmatch(r"zmm([0-9]|[12][0-9]|3[01])", zmm.name)):
            raise AssemblyError(f"{self.mnemonic}: operand zmm1 must be a register zmm0-zmm31, not '{zmm}'")
        if not (isinstance(tmm, Reg) and tile_number(tmm.name) is not None):
            raise AssemblyError(f"{self.mnemonic}: operand tmm2 must be a tile register tmm0-tmm7, not '{tmm}'")
        either = "a 32-bit register eax-r15d or an 8-bit immediate"
        if self.opcode.imm8:
            if not isinstance(row, Imm):
                raise AssemblyError(f"{self.mnemonic}: the row operand must be {either}, not '{row}'")
            if not -128 <= row.value <= 255:
                raise AssemblyError(f"{self.mnemonic}: the immediate {row.value} does not fit in 8 bits")
        elif not (isinstance(row, Reg) and row.name in GPR_VIEWS and GPR_VIEWS[row.name].bits == 32):
            raise AssemblyError(f"{self.mnemonic}: the row operand must be {either}, not '{row}'")

    def encode(self, operands: tuple) -> bytes:
        zmm, tmm, row = operands
        z = int(zmm.name[3:])
        t = tile_number(tmm.name)
        vvvv = 0 if self.opcode.imm8 else GPR_VIEWS[row.name].number
        op = self.opcode
        p0 = ((~z >> 3 & 1) << 7) | (1 << 6) | (1 << 5) | ((~z >> 4 & 1) << 4) | op.map
        p1 = (op.W << 7) | ((~vvvv & 0xF) << 3) | (1 << 2) | op.pp
        p2 = (op.LL << 5) | (1 << 3)  # z=0, b=0, V'=0 (stored inverted), aaa=000
        modrm = 0xC0 | ((z & 7) << 3) | t
        tail = bytes([row.value & 0xFF]) if op.imm8 else b""
        return bytes([0x62, p0, p1, p2, op.opcode, modrm]) + tail

    def encoded_operands(self, operands: tuple) -> tuple:
        zmm, tmm, row = operands
        return (zmm, tmm, Imm(row.value & 0xFF, 8) if self.opcode.imm8 else row)

    def format(self, operands: tuple) -> str:
        return f"{self.mnemonic} " + ",".join(str(o) for o in operands)

    def prepare(self, instruction) -> Callable[[X86Context], Callable[[], int]]:
        zmm, tmm, row = instruction.operands
        args = (int(zmm.name[3:]), tile_number(tmm.name), row.value & 0xFF if isinstance(row, Imm) else GPR_VIEWS[row.name])
        semantics_function, feature, mnemonic = self.semantics, self.feature, self.mnemonic
        next_address = instruction.next_address

        def bind(cpu: X86Context) -> Callable[[], int]:
            if feature not in cpu.model.features:
                def unsupported() -> int:
                    cpu.require_feature(feature, mnemonic)  # raises #UD
                    return next_address
                return unsupported

            def execute() -> int:
                semantics_function(cpu, *args)
                return next_address
            return execute

        return bind


EVEX_BY_OPCODE: dict[tuple[int, int, int], AmxEvexForm] = {}


def declare_evex(semantics_function: Callable, syntax: str, opcode: str, feature: str = "AMX-AVX512") -> AmxEvexForm:
    imm = syntax.endswith("imm8")
    encoding = ("ModRM:reg (w)", "ModRM:r/m (r)", "imm8" if imm else "EVEX.vvvv (r)")
    doc = (semantics_function.__doc__ or "").strip()
    form = AmxEvexForm(syntax, EvexOpcode.parse(opcode), encoding, feature, semantics_function, doc.split("\n")[0],
                       operand_roles=("destination", "tile", "row"))
    FORMS.add(form)
    EVEX_BY_OPCODE[form.opcode.map, form.opcode.opcode, form.opcode.pp] = form
    return form


for _name, _function, _r32, _imm8 in (
    ("TCVTROWD2PS", semantics.tcvtrowd2ps, "EVEX.512.F3.0F38.W0 4A", "EVEX.512.F3.0F3A.W0 07"),
    ("TCVTROWPS2BF16H", semantics.tcvtrowps2bf16h, "EVEX.512.F2.0F38.W0 6D", "EVEX.512.F2.0F3A.W0 07"),
    ("TCVTROWPS2BF16L", semantics.tcvtrowps2bf16l, "EVEX.512.F3.0F38.W0 6D", "EVEX.512.F3.0F3A.W0 77"),
    ("TCVTROWPS2PHH", semantics.tcvtrowps2phh, "EVEX.512.NP.0F38.W0 6D", "EVEX.512.NP.0F3A.W0 07"),
    ("TCVTROWPS2PHL", semantics.tcvtrowps2phl, "EVEX.512.66.0F38.W0 6D", "EVEX.512.F2.0F3A.W0 77"),
    ("TILEMOVROW", semantics.tilemovrow, "EVEX.512.66.0F38.W0 4A", "EVEX.512.66.0F3A.W0 07"),
):
    declare_evex(_function, f"{_name} zmm1, tmm2, r32", f"{_r32} 11:rrr:bbb")
    declare_evex(_function, f"{_name} zmm1, tmm2, imm8", f"{_imm8} 11:rrr:bbb ib")

MNEMONICS = frozenset(FORMS.mnemonics())
EVEX_MNEMONICS = frozenset(f.mnemonic for f in FORMS if isinstance(f, AmxEvexForm))

# (map, opcode byte, pp) -> the VEX forms sharing it, as forms/amx.py's BY_OPCODE
BY_OPCODE: dict[tuple[int, int, int], list[AmxForm]] = {}
for _form in FORMS:
    if isinstance(_form, AmxForm):
        BY_OPCODE.setdefault((_form.opcode.map, _form.opcode.opcode, _form.opcode.pp), []).append(_form)


def decode_evex(code: bytes, pos: int, address: int):
    """An AMX-AVX512 instruction at code[pos:] as (form, operands, length, problems), or None if the bytes
    are not one (then another decoder tries them).  ``problems`` lists the fields that make it #UD."""
    if pos + 6 > len(code) or code[pos] != 0x62:
        return None
    p0, p1, p2, opcode, modrm = code[pos + 1 : pos + 6]
    form = EVEX_BY_OPCODE.get((p0 & 0x7, opcode, p1 & 3))
    if form is None:
        return None
    if (p2 >> 5) & 3 != form.opcode.LL or modrm >> 6 != 3:
        return None  # another instruction at this opcode (AMX-MOVRS's EVEX (APX) TILELOADDRS*: L'L 00, memory)
    length = 6 + (1 if form.opcode.imm8 else 0)
    if pos + length > len(code):
        return None
    problems = []
    if p0 & 0x08:
        problems.append("EVEX.P0 bit 3 is not 0")
    if not p1 & 0x04:
        problems.append("EVEX.P1 bit 2 is not 1")
    if p1 >> 7:
        problems.append("EVEX.W=1 (must be 0)")
    if p2 >> 7 or p2 & 0x10 or p2 & 0x07:
        problems.append("EVEX.z, EVEX.b or EVEX.aaa is not 0")
    if not (p0 & 0x40 and p0 & 0x20):
        problems.append("tmm16-31 do not exist (EVEX.X/B)")
    if not p2 & 0x08:
        problems.append("EVEX.V' names a register 16-31")
    z = ((modrm >> 3) & 7) | ((~p0 >> 7 & 1) << 3) | ((~p0 >> 4 & 1) << 4)
    vvvv = (~p1 >> 3) & 0xF
    if form.opcode.imm8:
        if vvvv:
            problems.append(f"EVEX.vvvv={~vvvv & 0xF:04b} (must be 1111)")
        row = Imm(code[pos + 6], 8)
    else:
        row = Reg(gpr_name(vvvv, 32))
    operands = (Reg(f"zmm{z}"), Reg(f"tmm{modrm & 7}"), row)
    return form, operands, length, problems


def is_extension_form(form) -> bool:
    return form in FORMS


__all__ = ["FORMS", "MNEMONICS", "EVEX_MNEMONICS", "BY_OPCODE", "EVEX_BY_OPCODE", "EXTENSION_FEATURES", "SPEC_ONLY",
           "AmxEvexForm", "EvexOpcode", "decode_evex", "is_extension_form"]
