"""VEX encoding of the AMX instruction forms, driven by the SDM's opcode column.

Each AMX form is defined once, by the row the Intel SDM prints for it, e.g.::

    VEX.128.F2.0F38.W0 4B !(11):rrr:100

which reads: a VEX prefix with L=0 (128), implied prefix F2 (pp=11), opcode map
0F38 (mmmmm=00010), W=0; opcode byte 4B; a ModRM byte whose mod is not 11
(a memory operand), whose reg field holds an operand (``rrr``) and whose r/m is
100 (a SIB byte follows).  :class:`VexOpcode` parses that text; the encoder, the
decoder and ``isasim explain`` all read the parsed fields, so there is no second
copy of any encoding.

The three-byte VEX prefix (Intel SDM Vol. 2, 2.3.5)::

    C4 | R̄ X̄ B̄ m-mmmm | W v̄v̄v̄v̄ L pp | opcode | ModRM | [SIB] | [disp]

R̄, X̄, B̄ and v̄v̄v̄v̄ are stored inverted.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ...core.errors import AssemblyError
from ..operands import GPR64, Mem

PP_CODES = {"NP": 0b00, "66": 0b01, "F3": 0b10, "F2": 0b11}
PP_NAMES = {v: k for k, v in PP_CODES.items()}
MAP_CODES = {"0F": 0b00001, "0F38": 0b00010, "0F3A": 0b00011, "MAP5": 0b00101}  # MAP5: AMX-FP8 (VEX map 5)
MAP_NAMES = {v: k for k, v in MAP_CODES.items()}

_OPCODE_RE = re.compile(
    r"^VEX\.(?P<L>128|256|L0|LZ)\.(?P<pp>NP|66|F2|F3)\.(?P<map>0F|0F38|0F3A|MAP5)\.(?P<W>W0|W1|WIG)"
    r"\s+(?P<op>[0-9A-F]{2})\s+(?P<modrm>\S+)$"
)
_MODRM_RE = re.compile(r"^(?P<mod>11|!\(11\)):(?P<reg>rrr|[01]{3}):(?P<rm>bbb|[01]{3})$")


@dataclass(frozen=True)
class ModRMPattern:
    """What the SDM says about the ModRM byte of a form."""

    register_form: bool  # mod must be 11 (True) or must not be 11 (False)
    reg: int | None  # a fixed value of ModRM.reg, or None when it holds an operand
    rm: int | None  # a fixed value of ModRM.r/m, or None when it holds an operand

    @property
    def text(self) -> str:
        mod = "11" if self.register_form else "!(11)"
        reg = "rrr" if self.reg is None else f"{self.reg:03b}"
        rm = "bbb" if self.rm is None else f"{self.rm:03b}"
        return f"{mod}:{reg}:{rm}"


@dataclass(frozen=True)
class VexOpcode:
    text: str
    L: int
    pp: int
    map: int
    W: int
    opcode: int
    modrm: ModRMPattern

    @classmethod
    def parse(cls, text: str) -> "VexOpcode":
        m = _OPCODE_RE.match(text)
        if not m:
            raise ValueError(f"not an SDM VEX opcode: {text!r}")
        modrm_text = m["modrm"]
        if re.fullmatch(r"[0-9A-F]{2}", modrm_text):  # a fixed ModRM byte, e.g. TILERELEASE's C0
            byte = int(modrm_text, 16)
            pattern = ModRMPattern(byte >> 6 == 3, (byte >> 3) & 7, byte & 7)
        else:
            mm = _MODRM_RE.match(modrm_text)
            if not mm:
                raise ValueError(f"not an SDM ModRM pattern: {modrm_text!r}")
            pattern = ModRMPattern(
                mm["mod"] == "11",
                None if mm["reg"] == "rrr" else int(mm["reg"], 2),
                None if mm["rm"] == "bbb" else int(mm["rm"], 2),
            )
        return cls(
            text=text,
            L=0 if m["L"] in ("128", "L0", "LZ") else 1,
            pp=PP_CODES[m["pp"]],
            map=MAP_CODES[m["map"]],
            W=1 if m["W"] == "W1" else 0,
            opcode=int(m["op"], 16),
            modrm=pattern,
        )


# ---------------------------------------------------------------------------
# ModRM / SIB memory operands (64-bit addressing)
# ---------------------------------------------------------------------------


def _gpr_number(name: str, what: str) -> int:
    if name not in GPR64:
        raise AssemblyError(f"{what} register must be a 64-bit general-purpose register, not '{name}'")
    return GPR64.index(name)


def encode_memory(mem: Mem, reg_field: int, *, require_sib: bool = False) -> tuple[bytes, int, int]:
    """Encode ``mem`` as ModRM [+SIB] [+disp] with ``reg_field`` in ModRM.reg.

    Returns (bytes, X, B): the high bits of the index and base register numbers,
    which go into the (inverted) VEX.X and VEX.B bits.  Follows the choices GNU as
    makes: the shortest displacement, disp8 0 for an rbp/r13 base, and a SIB with
    index 100 (no index, "riz") when a SIB is required but there is no index.
    """
    if not -(1 << 31) <= mem.disp < (1 << 31):
        raise AssemblyError(f"displacement {mem.disp:#x} does not fit in 32 signed bits")
    if mem.base == "rip":  # [rip+disp32]: ModRM.mod=00, r/m=101, no SIB (LDTILECFG/STTILECFG, as GNU as encodes)
        if mem.index or require_sib:
            raise AssemblyError("a RIP-relative address takes no index register and cannot have a SIB byte")
        return bytes([((reg_field & 7) << 3) | 0b101]) + mem.disp.to_bytes(4, "little", signed=True), 0, 0
    base = _gpr_number(mem.base, "base") if mem.base else None
    index = None
    if mem.index and mem.index != "riz":
        index = _gpr_number(mem.index, "index")
        if index == 4:
            raise AssemblyError("rsp cannot be an index register")
    if mem.scale not in (1, 2, 4, 8):
        raise AssemblyError(f"scale must be 1, 2, 4 or 8, not {mem.scale}")
    reg = reg_field & 7
    need_sib = require_sib or index is not None or mem.index == "riz" or base is None or (base & 7) == 4
    if base is None:
        mod, disp = 0b00, mem.disp.to_bytes(4, "little", signed=True)  # SIB base=101, mod=00: disp32, no base
        base_low = 0b101
    elif mem.disp == 0 and (base & 7) != 0b101:
        mod, disp, base_low = 0b00, b"", base & 7
    elif -128 <= mem.disp <= 127:
        mod, disp, base_low = 0b01, mem.disp.to_bytes(1, "little", signed=True), base & 7
    else:
        mod, disp, base_low = 0b10, mem.disp.to_bytes(4, "little", signed=True), base & 7
    if need_sib:
        scale_bits = {1: 0, 2: 1, 4: 2, 8: 3}[mem.scale]
        index_low = 0b100 if index is None else index & 7
        modrm = (mod << 6) | (reg << 3) | 0b100
        sib = (scale_bits << 6) | (index_low << 3) | base_low
        out = bytes([modrm, sib]) + disp
    else:
        out = bytes([(mod << 6) | (reg << 3) | base_low]) + disp
    x = (index >> 3) & 1 if index is not None else 0
    b = (base >> 3) & 1 if base is not None else 0
    return out, x, b


def encoded_memory(mem: Mem, *, require_sib: bool = False) -> Mem:
    """``mem`` as the bytes encode_memory writes for it read back (decode_modrm's operand): with the
    displacement size those bytes carry, no operand size (AMX text shows none), and ``riz`` only where the
    SIB byte has no index and objdump shows it.  The assembler builds AMX instructions from this, so they
    name what their bytes say without decoding them (tests hold the two readings equal)."""
    if mem.base == "rip":
        return Mem(base="rip", disp=mem.disp, show_size=False, disp_size=4)
    base = GPR64.index(mem.base) if mem.base else None
    index = mem.index if mem.index != "riz" else None
    need_sib = require_sib or mem.index is not None or base is None or (base & 7) == 4
    if base is None:
        disp_size = 4
    elif mem.disp == 0 and (base & 7) != 0b101:
        disp_size = 0
    else:
        disp_size = 1 if -128 <= mem.disp <= 127 else 4
    if need_sib and index is None and not ((base is None or (base & 7) == 4) and mem.scale == 1):
        index = "riz"  # decode_modrm's rule: a SIB without index shows as riz unless an address needs it
    return Mem(base=mem.base, index=index, scale=mem.scale, disp=mem.disp, show_size=False, disp_size=disp_size)


@dataclass(slots=True)
class DecodedModRM:
    mod: int
    reg: int  # 0..7, before VEX.R
    rm: int  # 0..7, before VEX.B
    has_sib: bool
    mem: Mem | None  # for mod != 11
    length: int  # bytes consumed from the ModRM byte on


_DISP_SIZES = (0, 1, 4)  # displacement bytes for ModRM.mod 00, 01, 10


def decode_modrm(code: bytes, pos: int, rex_x: int, rex_b: int, *, show_size: bool = True) -> DecodedModRM | None:
    """Decode a ModRM byte (and SIB/displacement) at ``pos``; None if the bytes run out.

    ``show_size`` goes to the memory operand (False for AMX operands, whose text has no size)."""
    if pos >= len(code):
        return None
    modrm = code[pos]
    mod, reg, rm = modrm >> 6, (modrm >> 3) & 7, modrm & 7
    if mod == 0b11:
        return DecodedModRM(mod, reg, rm, False, None, 1)
    cursor = pos + 1
    base: str | None
    index: str | None = None
    scale = 1
    has_sib = rm == 0b100
    if has_sib:
        if cursor >= len(code):
            return None
        sib = code[cursor]
        cursor += 1
        scale = 1 << (sib >> 6)
        index_no = ((sib >> 3) & 7) | (rex_x << 3)
        base_low = sib & 7
        # Index 100 means no index.  objdump calls it "riz" (so the SIB byte stays
        # visible) except where a SIB is the only way to write the address:
        # an rsp/r12 base, or an absolute address with no base.
        no_base = base_low == 0b101 and mod == 0b00
        if index_no == 4:
            # ... and where the scale is 1: a scale of 2, 4 or 8 on no index is shown (and
            # assembled) as riz*2 etc., so that the text keeps the SIB byte's bits.
            index = None if (base_low == 0b100 or no_base) and scale == 1 else "riz"
        else:
            index = GPR64[index_no]
        if no_base:
            base = None
            disp_size = 4
        else:
            base = GPR64[base_low | (rex_b << 3)]
            disp_size = _DISP_SIZES[mod]
    else:
        if rm == 0b101 and mod == 0b00:
            return DecodedModRM(mod, reg, rm, False, Mem(base="rip", disp=0), -1)  # RIP-relative: not simulated
        base = GPR64[rm | (rex_b << 3)]
        disp_size = _DISP_SIZES[mod]
    if cursor + disp_size > len(code):
        return None
    disp = int.from_bytes(code[cursor : cursor + disp_size], "little", signed=True) if disp_size else 0
    cursor += disp_size
    mem = Mem(base=base, index=index, scale=scale, disp=disp, show_size=show_size, disp_size=disp_size)
    return DecodedModRM(mod, reg, rm, has_sib, mem, cursor - pos)


def vex3(R: int, X: int, B: int, map_: int, W: int, vvvv: int, L: int, pp: int) -> bytes:
    """The three-byte VEX prefix; R, X, B and vvvv are given un-inverted."""
    byte1 = ((~R & 1) << 7) | ((~X & 1) << 6) | ((~B & 1) << 5) | map_
    byte2 = (W << 7) | ((~vvvv & 0xF) << 3) | (L << 2) | pp
    return bytes([0xC4, byte1, byte2])


@dataclass(frozen=True)
class VexFields:
    """A decoded three-byte VEX prefix, with R, X, B and vvvv un-inverted."""

    R: int
    X: int
    B: int
    map: int
    W: int
    vvvv: int
    L: int
    pp: int

    @classmethod
    def parse(cls, byte1: int, byte2: int) -> "VexFields":
        return _vex_fields(byte1, byte2)

    @classmethod
    def read(cls, byte1: int, byte2: int) -> "VexFields":
        return cls(
            R=(~byte1 >> 7) & 1,
            X=(~byte1 >> 6) & 1,
            B=(~byte1 >> 5) & 1,
            map=byte1 & 0x1F,
            W=byte2 >> 7,
            vvvv=(~byte2 >> 3) & 0xF,
            L=(byte2 >> 2) & 1,
            pp=byte2 & 3,
        )


@functools.lru_cache(maxsize=4096)  # frozen, so one per byte pair can be shared; decoding a kernel repeats a few
def _vex_fields(byte1: int, byte2: int) -> VexFields:
    return VexFields.read(byte1, byte2)
