"""Operands of the SVE and SME2 forms clang's ACLE intrinsics lower to (forms/sve_*.py): predicates as counters
(``pn8.b``, ``pn8/z``), the ``vlx2``/``vlx4`` of a counter WHILE, strided register lists (``{z0.b, z4.b, z8.b,
z12.b}``), any of p0-p15 governing (``p9/z``, SEL's ``p9``), DUP's shifted immediate, an indexed element of any
Z register (``z3.s[2]``), a V register standing for element 0 (``s7``), PSEL's ``p0.s[w12, 0]``, ZT0 and the
index of a LUTI (``z1[0]``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .common import REGISTER_NUMBER, OperandError, _shape, parse_int
from .scalar import GReg
from .vector import _zreg, parse_list


@dataclass(frozen=True)
class PNReg:
    """``PNd.T``: a predicate-as-counter register pn8-pn15 (field holds n - 8, 3 bits), or pn0-pn15 (``bits`` 4)."""

    suffix: str
    field: str
    bits: int = 3
    kind = "p"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"pn({REGISTER_NUMBER})\.([bhsdq])", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not a predicate-as-counter register (pn8.b ... pn15.d)")
        if m.group(2) != self.suffix:
            raise _shape(f"{text.strip()} is .{m.group(2)}, not this form's .{self.suffix}")
        n, low = int(m.group(1)), 8 if self.bits == 3 else 0
        if not low <= n <= 15:
            raise OperandError(f"the counter register must be one of pn{low}-pn15 here, not pn{n}")
        return {self.field: n - low}

    def text(self, fields: dict) -> str:
        return f"pn{fields[self.field] + (8 if self.bits == 3 else 0)}.{self.suffix}"

    def value(self, fields: dict) -> int:
        return fields[self.field] + (8 if self.bits == 3 else 0)


@dataclass(frozen=True)
class PNGoverning:
    """``PNg/Z`` (a load's) or ``PNg`` (a store's): pn8-pn15, the field holding n - 8."""

    zeroing: bool
    field: str = "PNg"
    kind = "p_governing"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"pn({REGISTER_NUMBER})[ \t]*(?:/[ \t]*([a-z]))?", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not a predicate-as-counter (pn8 ... pn15)")
        if self.zeroing and m.group(2) != "z":
            raise OperandError(f"a load's predicate zeroes: pn{m.group(1)}/z, not {text.strip()}")
        if not self.zeroing and m.group(2) is not None:
            raise OperandError(f"a store's predicate is pn{m.group(1)}, without /{m.group(2)}")
        if not 8 <= int(m.group(1)) <= 15:
            raise OperandError(f"the counter must be one of pn8-pn15, not pn{m.group(1)}")
        return {self.field: int(m.group(1)) - 8}

    def text(self, fields: dict) -> str:
        return f"pn{fields[self.field] + 8}" + ("/z" if self.zeroing else "")

    def value(self, fields: dict) -> int:
        return fields[self.field] + 8


@dataclass(frozen=True)
class VectorCount:
    """``vlx2`` or ``vlx4`` (field vl: 0 or 1): how many vectors a counter WHILE or CNTP covers."""

    field: str = "vl"
    kind = "imm"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"vlx([0-9]+)", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not vlx2 or vlx4")
        if m.group(1) not in ("2", "4"):
            raise OperandError(f"the vector count is vlx2 or vlx4, not {text.strip()}")
        return {self.field: 0 if m.group(1) == "2" else 1}

    def text(self, fields: dict) -> str:
        return f"vlx{2 << fields[self.field]}"

    def value(self, fields: dict) -> int:
        return 2 << fields[self.field]


@dataclass(frozen=True)
class StridedList:
    """``{z0.b, z8.b}`` or ``{z0.b, z4.b, z8.b, z12.b}``: nreg registers 16 / nreg apart, the first one of
    z0-z(16/nreg - 1) or z16-z(16 + 16/nreg - 1); fields T (which half) and Zt (the rest)."""

    suffix: str
    nreg: int
    kind = "z_list"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\{(.*)\}", text.strip())
        if not m:
            raise _shape(f"'{text.strip()}' is not a register list {{...}}")
        body = m.group(1)
        if "-" in body:
            raise _shape(f"{text.strip()} is consecutive registers, not a strided list")
        regs = [_zreg(name) for name in body.split(",")]
        if len(regs) != self.nreg:
            raise _shape(f"{text.strip()} is {len(regs)} registers, not this form's {self.nreg}")
        if len({t for _, t in regs}) > 1 or regs[0][1] != self.suffix:
            raise _shape(f"{text.strip()} does not hold this form's .{self.suffix} elements")
        stride = 16 // self.nreg
        first = regs[0][0]
        if all(b == a + 1 for (a, _), (b, _) in zip(regs, regs[1:])):
            raise _shape(f"{text.strip()} is consecutive registers, not a strided list")
        if first % 16 >= stride or any(n != first + i * stride for i, (n, _) in enumerate(regs)):
            raise OperandError(f"a strided list of {self.nreg} here is {{zN, zN+{stride}, ...}} with N one of "
                               f"0-{stride - 1} or 16-{16 + stride - 1}: not {text.strip()}")
        return {"T": first // 16, "Zt": first % 16}

    def first(self, fields: dict) -> int:
        return fields["T"] * 16 + fields["Zt"]

    def text(self, fields: dict) -> str:
        first, stride = self.first(fields), 16 // self.nreg
        return "{ " + ", ".join(f"z{first + i * stride}.{self.suffix}" for i in range(self.nreg)) + " }"

    def value(self, fields: dict) -> tuple[int, ...]:
        first, stride = self.first(fields), 16 // self.nreg
        return tuple(first + i * stride for i in range(self.nreg))


@dataclass(frozen=True)
class ConsecutiveList:
    """``{z0.b - z3.b}``: nreg consecutive registers from a multiple of nreg; its value is the tuple of
    register numbers (as StridedList's), so that one semantics serves both."""

    suffix: str
    nreg: int
    field: str = "Zt"
    kind = "z_list"

    def parse(self, text: str) -> dict:
        regs = parse_list(text)
        if regs[0][1] != self.suffix:
            raise _shape(f"{text.strip()} holds .{regs[0][1]} elements, not this form's .{self.suffix}")
        if len(regs) != self.nreg:
            raise _shape(f"{text.strip()} is {len(regs)} registers, not this form's {self.nreg}")
        if regs[0][0] % self.nreg:
            raise OperandError(f"a list of {self.nreg} registers here must start at a multiple of {self.nreg} "
                               f"(z0, z{self.nreg}, ...), not z{regs[0][0]}")
        return {self.field: regs[0][0] // self.nreg}

    def text(self, fields: dict) -> str:
        first = fields[self.field] * self.nreg
        names = [f"z{first + i}.{self.suffix}" for i in range(self.nreg)]
        return f"{{ {names[0]} - {names[-1]} }}" if self.nreg > 2 else "{ " + ", ".join(names) + " }"

    def value(self, fields: dict) -> tuple[int, ...]:
        first = fields[self.field] * self.nreg
        return tuple(first + i for i in range(self.nreg))


@dataclass(frozen=True)
class AnyGoverning:
    """``Pg/Z`` (``zeroing``), ``Pg/M`` (``merging``) or bare ``Pg``: any of p0-p15 (4-bit field)."""

    field: str = "Pg"
    qualifier: str = ""  # "z", "m" or ""
    kind = "p_governing"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"p({REGISTER_NUMBER})[ \t]*(?:/[ \t]*([a-z]))?", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not a governing predicate (p0-p15)")
        if (m.group(2) or "") != self.qualifier:
            want = f"p{m.group(1)}/{self.qualifier}" if self.qualifier else f"p{m.group(1)}"
            raise _shape(f"this predicate is written {want}, not {text.strip()}")
        if int(m.group(1)) > 15:
            raise OperandError(f"there are 16 predicate registers (p0-p15), not p{m.group(1)}")
        return {self.field: int(m.group(1))}

    def text(self, fields: dict) -> str:
        return f"p{fields[self.field]}" + (f"/{self.qualifier}" if self.qualifier else "")

    def value(self, fields: dict) -> int:
        return fields[self.field]


@dataclass(frozen=True)
class DupImm:
    """``#imm{, LSL #8}`` of DUP (immediate): imm8 signed and sh, the value printed as llvm prints it (the
    shifted value, as an element of the form's size; ``#0, lsl #8`` where the shifted value is zero)."""

    esize: int
    kind = "imm"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"(.*?)(?:,[ \t]*lsl[ \t]*(#?[ \t]*[0-9a-fx]+))?", text.strip().lower())
        value = parse_int(m.group(1))
        if value is None:
            raise _shape(f"'{text.strip()[:40]}' is not an immediate")
        if m.group(2) is not None:
            if parse_int(m.group(2), hash="required") != 8 or self.esize == 8:
                raise OperandError(f"the shift is lsl #8 (not on .b elements), not {m.group(2)}")
            if not -128 <= value <= 255:
                raise OperandError(f"the immediate must be -128..255 before lsl #8, not {value}")
            return {"imm8": value & 0xFF, "sh": 1}
        if not -(1 << (self.esize - 1)) <= value < (1 << self.esize):
            raise OperandError(f"{value} does not fit a {self.esize}-bit element")
        element = value & ((1 << self.esize) - 1)
        signed = element - (1 << self.esize) if element >> (self.esize - 1) else element
        if -128 <= signed <= 127:
            return {"imm8": signed & 0xFF, "sh": 0}
        if self.esize > 8 and signed % 256 == 0 and -128 <= signed // 256 <= 127:
            return {"imm8": (signed // 256) & 0xFF, "sh": 1}
        raise OperandError(f"#{value} is no signed 8-bit immediate, optionally shifted by 8")

    def text(self, fields: dict) -> str:
        if fields["imm8"] == 0 and fields["sh"]:
            return "#0, lsl #8"
        return f"#{self.value(fields)}"

    def value(self, fields: dict) -> int:
        imm = fields["imm8"] - 256 if fields["imm8"] >> 7 else fields["imm8"]
        return imm << (8 * fields["sh"])


@dataclass(frozen=True)
class SImmField:
    """``#imm``: a signed field of ``bits`` (INDEX's -16..15)."""

    field: str
    bits: int = 5
    kind = "imm"

    def parse(self, text: str) -> dict:
        value = parse_int(text)
        if value is None:
            raise _shape(f"'{text.strip()[:40]}' is not an immediate")
        low, high = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        if not low <= value <= high:
            raise OperandError(f"the immediate must be in {low} to {high}, not {value}")
        return {self.field: value & ((1 << self.bits) - 1)}

    def text(self, fields: dict) -> str:
        return f"#{self.value(fields)}"

    def value(self, fields: dict) -> int:
        raw = fields[self.field]
        return raw - (1 << self.bits) if raw >> (self.bits - 1) else raw


@dataclass(frozen=True)
class ElementIndexed:
    """``Zn.T[imm]`` of DUP (indexed): any Z register, the index split between imm2 and the low bits tsh."""

    suffix: str
    low_bits: int  # the bits of the index in tsh (the rest in imm2)
    kind = "z_indexed"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"(.*?)\[([^\]]+)\]", text.strip())
        if not m or text.strip().startswith("{"):
            raise _shape(f"'{text.strip()}' is not an indexed register Zn.T[i]")
        n, t = _zreg(m.group(1))
        if t != self.suffix:
            raise _shape(f"{text.strip()} is .{t}, not this form's .{self.suffix}")
        i = parse_int(m.group(2), hash="forbidden")
        limit = (1 << (self.low_bits + 2)) - 1
        if i is None or not 0 <= i <= limit:
            raise OperandError(f"the index must be 0-{limit} here, not {m.group(2).strip()}")
        fields = {"Zn": n, "imm2": i >> self.low_bits}
        if self.low_bits:
            fields["tsh"] = i & ((1 << self.low_bits) - 1)
        return fields

    def index(self, fields: dict) -> int:
        return (fields["imm2"] << self.low_bits) | fields.get("tsh", 0)

    def text(self, fields: dict) -> str:
        return f"z{fields['Zn']}.{self.suffix}[{self.index(fields)}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["Zn"], self.index(fields)


@dataclass(frozen=True)
class ElementZero:
    """``Vn`` (``b7``, ``s7``, ``q1``) standing for element 0 of Zn: DUP (indexed)'s MOV alias."""

    suffix: str
    low_bits: int
    kind = "z_indexed"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"([bhsdq])({REGISTER_NUMBER})", text.strip().lower())
        if not m or m.group(1) != self.suffix:
            raise _shape(f"'{text.strip()[:40]}' is not a {self.suffix.upper()} register")
        if int(m.group(2)) > 31:
            raise OperandError(f"there are 32 {self.suffix.upper()} registers, not {text.strip()}")
        fields = {"Zn": int(m.group(2)), "imm2": 0}
        if self.low_bits:
            fields["tsh"] = 0
        return fields

    def text(self, fields: dict) -> str:
        return f"{self.suffix}{fields['Zn']}"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["Zn"], 0


@dataclass(frozen=True)
class PselIndex:
    """``Pm.T[Wv, imm]`` of PSEL: a predicate p0-p15, a select register w12-w15 (field Rv) and an immediate
    (``fields``: the encoding fields that hold it, most significant first, with their widths)."""

    suffix: str
    imm_fields: tuple  # ((name, width), ...)
    kind = "p_indexed"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"p({REGISTER_NUMBER})\.([bhsd])[ \t]*\[[ \t]*w({REGISTER_NUMBER})[ \t]*,([^\]]*)\]",
                         text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not Pm.T[Wv, imm]")
        if m.group(2) != self.suffix:
            raise _shape(f"{text.strip()} is .{m.group(2)}, not this form's .{self.suffix}")
        if int(m.group(1)) > 15:
            raise OperandError(f"there are 16 predicate registers (p0-p15), not p{m.group(1)}")
        if not 12 <= int(m.group(3)) <= 15:
            raise OperandError(f"the select register is one of w12-w15, not w{m.group(3)}")
        imm = parse_int(m.group(4), hash="forbidden")
        limit = (1 << sum(w for _, w in self.imm_fields)) - 1
        if imm is None or not 0 <= imm <= limit:
            raise OperandError(f"the index must be 0-{limit} here, not {m.group(4).strip()}")
        fields = {"Pm": int(m.group(1)), "Rv": int(m.group(3)) - 12}
        shift = sum(w for _, w in self.imm_fields)
        for name, width in self.imm_fields:
            shift -= width
            fields[name] = (imm >> shift) & ((1 << width) - 1)
        return fields

    def imm(self, fields: dict) -> int:
        value = 0
        for name, width in self.imm_fields:
            value = (value << width) | fields[name]
        return value

    def text(self, fields: dict) -> str:
        return f"p{fields['Pm']}.{self.suffix}[w{fields['Rv'] + 12}, {self.imm(fields)}]"

    def value(self, fields: dict) -> tuple[int, int, int]:
        return fields["Pm"], fields["Rv"] + 12, self.imm(fields)


@dataclass(frozen=True)
class ZT0:
    """``zt0`` (or ``{ zt0 }`` where ``braces``): SME2's lookup-table register; no field."""

    braces: bool = False
    kind = "zt0"

    def parse(self, text: str) -> dict:
        written = text.strip().lower()
        if self.braces:  # blanks inside the braces, never inside the name: clang refuses "z t0"
            written = re.sub(r"^\{[ \t]*(\S+)[ \t]*\}$", r"{\1}", written)
        if written != ("{zt0}" if self.braces else "zt0"):
            raise _shape(f"'{text.strip()[:40]}' is not {'{ zt0 }' if self.braces else 'zt0'}")
        return {}

    def text(self, fields: dict) -> str:
        return "{ zt0 }" if self.braces else "zt0"

    def value(self, fields: dict) -> None:
        return None


@dataclass(frozen=True)
class LutIndex:
    """``Zn[imm]`` of LUTI2/LUTI4: the index vector (no element size) and which segment of it (field i)."""

    field: str
    index_field: str
    index_bits: int
    kind = "z_indexed"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"z({REGISTER_NUMBER})[ \t]*\[([^\]]+)\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not Zn[index]")
        if int(m.group(1)) > 31:
            raise OperandError(f"there are 32 Z registers, not z{m.group(1)}")
        i = parse_int(m.group(2), hash="forbidden")
        limit = (1 << self.index_bits) - 1
        if i is None or not 0 <= i <= limit:
            raise OperandError(f"the index must be 0-{limit} here, not {m.group(2).strip()}")
        return {self.field: int(m.group(1)), self.index_field: i}

    def text(self, fields: dict) -> str:
        return f"z{fields[self.field]}[{fields[self.index_field]}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields[self.field], fields[self.index_field]


@dataclass(frozen=True)
class IndexAddress:
    """``[<Xn|SP>, <Xm>{, LSL #<shift>}]`` of the multi-vector loads and stores: Xm may be XZR (printed so)."""

    shift: int
    kind = "mem_index"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[[ \t]*([a-z0-9_]+)[ \t]*,[ \t]*([a-z0-9_]+)[ \t]*(?:,[ \t]*lsl(?:[ \t]+|(?=#))([^\]]+))?\]",
                         text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a memory operand [Xn, Xm{{, lsl #{self.shift}}}]")
        base, index, shift = m.groups()
        fields = {**GReg("Rn", sp=True).parse(base), **GReg("Rm").parse(index)}
        if (parse_int(shift, signed=False) if shift is not None else 0) != self.shift:
            want = f"lsl #{self.shift}" if self.shift else "no shift"
            raise OperandError(f"the index here is scaled by the element size: {want}, not "
                               f"{'lsl #' + shift if shift is not None else 'no shift'}")
        return fields

    def text(self, fields: dict) -> str:
        shift = f", lsl #{self.shift}" if self.shift else ""
        return f"[{GReg('Rn', sp=True).text(fields)}, {GReg('Rm').text(fields)}{shift}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["Rn"], fields["Rm"]


@dataclass(frozen=True)
class MultiVlAddress:
    """``[<Xn|SP>{, #<imm>, MUL VL}]`` of the multi-vector loads and stores: imm a multiple of nreg in
    -8 * nreg .. 7 * nreg (field imm4 = imm / nreg); its value is (n, imm in vectors)."""

    nreg: int
    kind = "mem_vl"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[[ \t]*([a-z0-9_]+)[ \t]*(?:,(.+?),[ \t]*mul[ \t]+vl[ \t]*)?\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a memory operand [Xn{{, #imm, mul vl}}]")
        base = GReg("Rn", sp=True).parse(m.group(1))
        offset = parse_int(m.group(2)) if m.group(2) is not None else 0
        if offset is None or offset % self.nreg or not -8 * self.nreg <= offset <= 7 * self.nreg:
            raise OperandError(f"the offset must be a multiple of {self.nreg} in #{-8 * self.nreg} to "
                               f"#{7 * self.nreg}, mul vl, not {(m.group(2) or '').strip()[:40]}")
        return {**base, "imm4": (offset // self.nreg) & 0xF}

    def value(self, fields: dict) -> tuple[int, int]:
        raw = fields["imm4"] - 16 if fields["imm4"] >> 3 else fields["imm4"]
        return fields["Rn"], raw * self.nreg

    def text(self, fields: dict) -> str:
        n, offset = self.value(fields)
        base = GReg("Rn", sp=True).text(fields)
        return f"[{base}, #{offset}, mul vl]" if offset else f"[{base}]"


_TILE_BITS = {"b": 0, "h": 1, "s": 2, "d": 3}


@dataclass(frozen=True)
class ZaSliceRange:
    """``ZA<t><H|V>.<T>[<Ws>, <o1>:<o2>]``: nreg consecutive slices of a tile (SME2 MOVA), fields V, Rs (w12-w15)
    and ``width`` bits of ZAo holding the tile number above the first offset divided by nreg."""

    suffix: str
    nreg: int
    width: int
    source: bool = False  # clang takes #o1 in a source range (mova {..}, za0h.s[w12, #0:1]), not in a destination
    kind = "za_slice"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"za({REGISTER_NUMBER})([hv])\.([bhsdq])[ \t]*\[[ \t]*([a-z0-9_]+)[ \t]*,([^:\]]+):([^\]]+)\]",
                         text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a range of ZA tile slices (za0h.s[w12, 0:3])")
        tile, direction, suffix, reg, first, last = m.groups()
        if suffix != self.suffix:
            raise _shape(f"{text.strip()} is a .{suffix} slice, not this form's .{self.suffix}")
        tile_bits = _TILE_BITS[suffix]
        if int(tile) >= 1 << tile_bits:
            raise OperandError(f"the .{suffix} tiles are za0-za{(1 << tile_bits) - 1}, not za{tile}")
        wm = re.fullmatch(rf"w({REGISTER_NUMBER})", reg)
        if not wm or not 12 <= int(wm.group(1)) <= 15:
            raise OperandError(f"the slice index register must be one of w12-w15, not {reg}")
        if first.strip(" \t#").startswith("-"):  # clang reads no sign there (-0:1 is not a range to it)
            raise OperandError(f"the first slice offset is written without a sign, not {first.strip()}")
        lo = parse_int(first, hash="optional" if self.source else "forbidden")
        hi = parse_int(last, hash="forbidden")
        offset_bits = self.width - tile_bits
        if lo is None or hi is None or lo % self.nreg or hi != lo + self.nreg - 1 \
                or not 0 <= lo // self.nreg < (1 << offset_bits):
            raise OperandError(f"the slices must be o:o+{self.nreg - 1} with o a multiple of {self.nreg} up to "
                               f"{((1 << offset_bits) - 1) * self.nreg}, not {first.strip()}:{last.strip()}")
        return {"V": int(direction == "v"), "Rs": int(wm.group(1)) - 12,
                "ZAo": (int(tile) << offset_bits) | (lo // self.nreg)}

    def value(self, fields: dict) -> tuple[int, bool, int, int]:
        """(tile, vertical, Ws's register number, first offset)"""
        offset_bits = self.width - _TILE_BITS[self.suffix]
        raw = fields["ZAo"]
        return raw >> offset_bits, bool(fields["V"]), 12 + fields["Rs"], (raw & ((1 << offset_bits) - 1)) * self.nreg

    def text(self, fields: dict) -> str:
        tile, vertical, s, offset = self.value(fields)
        return f"za{tile}{'hv'[vertical]}.{self.suffix}[w{s}, {offset}:{offset + self.nreg - 1}]"
