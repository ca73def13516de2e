"""Random AMX test cases for the fuzzer (``amx_cases()``, a hypothesis strategy).

A case configures tiles from random valid and invalid 64-byte configurations and
runs TILEZERO, TILELOADD(T1), TILESTORED (strides 0, negative, odd), the integer
TDPs and TDPBF16PS (matching and mismatching shapes, repeated tile numbers as raw
bytes), TILERELEASE and STTILECFG, on data full of the values worth testing: int8
0x80/0xff/0x7f/0x00, int32 accumulators next to the wrap, bf16 NaN payloads,
infinities, denormals and products next to the FTZ boundary 2^-126, fp32
accumulators next to it.  AMX cases run one by one: a fault ends a program, so
they cannot share one as the scalar cases do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from ..core.trace import Init
from . import amx
from .kernels import tile_config
from .operands import Reg

MASK64 = (1 << 64) - 1

# ---------------------------------------------------------------------------
# Memory layout
# ---------------------------------------------------------------------------

AMX_CFG = 0x20000000  # 4 KiB: up to four 64-byte configurations, rcx points at the first
AMX_BUF = 0x20100000  # 64 KiB of tile data, rdi points at its middle
AMX_DST = 0x20200000  # 64 KiB for TILESTORED and STTILECFG, rdx points at its middle
AMX_SPAN = 0x10000
AMX_ZONE = 0x400  # the buffer is 64 zones of 16 rows x 64 bytes, each of one kind of data

# ---------------------------------------------------------------------------
# AMX cases
# ---------------------------------------------------------------------------

TDP_FORMS = ("tdpbssd", "tdpbsud", "tdpbusd", "tdpbuud", "tdpbf16ps")
INT_TDP_FORMS = TDP_FORMS[:4]

# bf16 values (bit patterns) worth generating
BF16_SPECIAL = (0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7FA5, 0xFFC1, 0x7FFF, 0x0001, 0x8001, 0x0040, 0x807F,
                0x0080, 0x8080, 0x0081, 0x2000, 0x1FFF, 0x2001, 0xA000, 0x7F7F, 0xFF7F, 0x7180, 0x0000, 0x8000,
                0x3F80, 0xBF80, 0x0E00, 0x6080, 0x1F80, 0x20FF)
# fp32 accumulators worth generating
FP32_SPECIAL = (0x00800000, 0x80800000, 0x007FFFFF, 0x807FFFFF, 0x00400000, 0x80000001, 0x00000000, 0x80000000,
                0x7F800000, 0xFF800000, 0x7FA00001, 0xFFA00001, 0x7FC00123, 0x7F7FFFFF, 0xFF7FFFFF, 0x00C00000,
                0x3F800000, 0xBF800000, 0x00800001, 0x01000000, 0x4B800000, 0x33800000)
INT32_SPECIAL = (0x7FFFFFFF, 0x80000000, 0x7FFFFFF0, 0x8000000F, 0xFFFFFFFF, 0, 1, 0x7FFC0000, 0x80040000)
INT8_SPECIAL = (0x80, 0xFF, 0x7F, 0x00, 0x01, 0x81, 0xFE)
STRIDES = (64, 0, -64, 128, 4, 1, -1, 65, 256, -256, 1024, -1024, 32, 60, -4)
ZONE_KINDS = ("int8", "int32", "bf16", "fp32", "bf16-tiny", "fp32-tiny", "bf16-special", "random")


def _zones(kind: str, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` zones of one kind of data, as (count, AMX_ZONE) uint8 (drawn together: a program's
    buffer costs eight draws of each kind rather than 64, the fuzzer's simulator side draws one per case)."""
    n8, n16, n32 = count * AMX_ZONE, count * AMX_ZONE // 2, count * AMX_ZONE // 4
    if kind == "int8":
        edge = rng.choice(np.array(INT8_SPECIAL, dtype=np.uint8), n8)
        rand = rng.integers(0, 256, n8, dtype=np.uint8)
        out = np.where(rng.random(n8) < 0.6, edge, rand).astype(np.uint8)
    elif kind == "int32":
        edge = rng.choice(np.array(INT32_SPECIAL, dtype=np.uint32), n32)
        near = (np.uint32(0x7FFFFFFF) - rng.integers(0, 300000, n32).astype(np.uint32)).astype(np.uint32)
        rand = rng.integers(0, 1 << 32, n32, dtype=np.uint64).astype(np.uint32)
        pick = rng.random(n32)
        out = np.where(pick < 0.4, edge, np.where(pick < 0.7, near, rand)).astype("<u4")
    elif kind.startswith("bf16"):
        sign = rng.integers(0, 2, n16).astype(np.uint16) << 15
        if kind == "bf16-tiny":  # products near 2^-126: exponents near 2^-63, and denormals
            exponent = rng.integers(127 - 66, 127 - 60, n16).astype(np.uint16)
        else:
            exponent = rng.integers(127 - 6, 127 + 6, n16).astype(np.uint16)
        normal = sign | (exponent << 7) | rng.integers(0, 128, n16).astype(np.uint16)
        special = rng.choice(np.array(BF16_SPECIAL, dtype=np.uint16), n16)
        share = 0.6 if kind == "bf16-special" else 0.08
        out = np.where(rng.random(n16) < share, special, normal).astype("<u2")
    elif kind.startswith("fp32"):
        sign = rng.integers(0, 2, n32).astype(np.uint32) << 31
        if kind == "fp32-tiny":
            exponent = rng.integers(0, 4, n32).astype(np.uint32)
        else:
            exponent = rng.integers(127 - 8, 127 + 8, n32).astype(np.uint32)
        normal = sign | (exponent << 23) | rng.integers(0, 1 << 23, n32).astype(np.uint32)
        special = rng.choice(np.array(FP32_SPECIAL, dtype=np.uint32), n32)
        out = np.where(rng.random(n32) < 0.3, special, normal).astype("<u4")
    else:
        out = rng.integers(0, 256, n8, dtype=np.uint8)
    return out.view(np.uint8).reshape(count, AMX_ZONE)


def amx_buffer(data_seed: int) -> bytes:
    """The 64 KiB tile-data buffer: zone z holds ZONE_KINDS[z % 8] data."""
    rng = np.random.default_rng(data_seed)
    per_kind = AMX_SPAN // AMX_ZONE // len(ZONE_KINDS)
    zones = np.stack([_zones(kind, rng, per_kind) for kind in ZONE_KINDS], axis=1)  # [z // 8][z % 8]
    return zones.tobytes()


def zone_disp(zone: int) -> int:
    """Displacement from rdi (the middle of the buffer) to a zone."""
    return zone * AMX_ZONE - AMX_SPAN // 2


@dataclass(frozen=True)
class AmxCase:
    lines: tuple[str, ...]
    regs: tuple[tuple[str, int], ...]
    configs: bytes  # the configuration page
    data_seed: int
    dest_fill: int  # the byte the destination region starts as

    def standalone(self) -> tuple[str, Init]:
        memory = [(AMX_CFG, self.configs, True), (AMX_BUF, amx_buffer(self.data_seed), True),
                  (AMX_DST, bytes([self.dest_fill]) * AMX_SPAN, True)]
        return "\n".join(self.lines), Init(dict(self.regs), memory)

    @property
    def size(self) -> int:
        return len(self.lines)

    def truncated(self, index: int) -> "AmxCase":
        """The case ending (RET) right after instruction ``index``."""
        return AmxCase(self.lines[: index + 1] + ("ret",), self.regs, self.configs, self.data_seed, self.dest_fill)


_M_K_N = st.sampled_from((16, 16, 16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))


@st.composite
def _tdp_config(draw):
    """A palette-1 configuration with consistent C/A/B shapes; roles maps tile -> 'C', 'A' or 'B'."""
    m, k, n = draw(_M_K_N), draw(_M_K_N), draw(_M_K_N)
    order = draw(st.permutations(range(8)))
    roles = {order[0]: "C", order[1]: "C", order[2]: "A", order[3]: "A", order[4]: "A", order[5]: "B",
             order[6]: "B", order[7]: "B"}
    shapes = {t: {"C": (m, 4 * n), "A": (m, 4 * k), "B": (k, 4 * n)}[r] for t, r in roles.items()}
    mismatch = draw(st.sampled_from((None,) * 12 + ("C.colsb", "A.colsb", "C.rows", "B.rows")))
    if mismatch:  # one dimension that no longer agrees: every TDP over it is #UD
        role, what = mismatch.split(".")
        for t, r in roles.items():
            if r == role:
                rows, colsb = shapes[t]
                shapes[t] = (rows, max(4, (colsb + 4) % 68)) if what == "colsb" else (rows % 16 + 1, colsb)
    start_row = draw(st.sampled_from((0,) * 6 + (1, 5, 15, 200)))
    return tile_config(shapes, start_row), roles, (m, k, n)


@st.composite
def _random_config(draw):
    """Any 64-byte configuration: valid, beyond the limits, colsb % 4 != 0, reserved bytes, palettes 0/1/2."""
    palette = draw(st.sampled_from((1, 1, 1, 0, 2, 255)))
    shapes = {}
    for t in range(8):
        rows = draw(st.sampled_from((0, 16, 1, 8, 17, 255)) | st.integers(0, 16))
        colsb = draw(st.sampled_from((0, 64, 4, 6, 1, 65, 68, 0x100)) | st.integers(0, 64))
        shapes[t] = (rows, colsb)
    if draw(st.booleans()):  # mostly keep rows and colsb zero together
        shapes = {t: (r, c) if r and c else (0, 0) for t, (r, c) in shapes.items()}
    image = bytearray(tile_config(shapes, draw(st.sampled_from((0, 0, 3, 200))), palette=palette))
    reserved = draw(st.sampled_from((None,) * 8 + (2, 15, 32, 47, 56, 63)))
    if reserved is not None:
        image[reserved] = 1
    return bytes(image)


def _sib(base: str, stride_reg: str | None, scale: int, disp: int) -> str:
    inner = base + (f"+{stride_reg}*{scale}" if stride_reg else "+riz*1")
    return f"[{inner}{'+' if disp >= 0 else '-'}{abs(disp):#x}]"


def _tdp_text(form: str, c: int, a: int, b: int) -> str:
    if len({c, a, b}) == 3:
        return f"{form} tmm{c}, tmm{a}, tmm{b}"
    code = amx.FORMS.of_mnemonic(form)[0].encode((Reg(f"tmm{c}"), Reg(f"tmm{a}"), Reg(f"tmm{b}")))
    return ".byte " + ",".join(f"{x:#04x}" for x in code)  # gas refuses repeated tiles


STRIDE_REGS = ("rsi", "r8", "r9", "r10")


@st.composite
def amx_cases(draw, max_ops: int = 24):
    """A random AMX test case (see the module docstring)."""
    heavy = draw(st.sampled_from((True, True, False)))
    cfg0, roles, (m, k, n) = draw(_tdp_config())
    configs = [cfg0] + draw(st.lists(st.one_of(_random_config(), _tdp_config().map(lambda c: c[0])),
                                     min_size=0, max_size=3))
    strides = {"rsi": 64}
    for reg in STRIDE_REGS[1:]:
        strides[reg] = draw(st.sampled_from(STRIDES) | st.integers(-1024, 1024))
    flavour = draw(st.sampled_from(("bf16", "bf16", "bf16", "int", "int")))
    data_seed = draw(st.integers(0, 1 << 32))
    lines = ["ldtilecfg [rcx]"]
    zones = {"A": ("bf16", "bf16-tiny", "bf16-special") if flavour == "bf16" else ("int8", "random"),
             "B": ("bf16", "bf16-tiny", "bf16-special") if flavour == "bf16" else ("int8", "random"),
             "C": ("fp32", "fp32-tiny") if flavour == "bf16" else ("int32",)}

    def zone_of(kind_name: str, choice: int) -> int:
        kind_index = ZONE_KINDS.index(kind_name)
        return kind_index + len(ZONE_KINDS) * (choice % (AMX_SPAN // AMX_ZONE // len(ZONE_KINDS)))

    if heavy:  # load every tile from data of its role, many TDPs, store the results
        for t in range(8):
            kinds = zones[roles[t]]
            zone = zone_of(kinds[draw(st.integers(0, len(kinds) - 1))], draw(st.integers(0, 7)))
            lines.append(f"tileloadd tmm{t}, {_sib('rdi', 'rsi', 1, zone_disp(zone))}")
        cs = [t for t in range(8) if roles[t] == "C"]
        as_ = [t for t in range(8) if roles[t] == "A"]
        bs = [t for t in range(8) if roles[t] == "B"]
        forms = ("tdpbf16ps",) * 8 + INT_TDP_FORMS if flavour == "bf16" else INT_TDP_FORMS + ("tdpbf16ps",)
        for _ in range(draw(st.integers(1, 32))):
            form = draw(st.sampled_from(forms))
            lines.append(_tdp_text(form, draw(st.sampled_from(cs)), draw(st.sampled_from(as_)),
                                   draw(st.sampled_from(bs))))
        for i, t in enumerate(cs):
            lines.append(f"tilestored {_sib('rdx', 'rsi', 1, -0x800 + 0x400 * i)}, tmm{t}")
    ops = draw(st.lists(st.sampled_from(("tilezero", "tileloadd", "tileloaddt1", "tilestored", "tdp", "tdp", "tdp",
                                         "tilerelease", "sttilecfg", "ldtilecfg", "pagefault")),
                        min_size=0 if heavy else 1, max_size=max_ops if not heavy else 4))
    for op in ops:
        t = draw(st.integers(0, 7))
        if op == "tilezero":
            lines.append(f"tilezero tmm{t}")
        elif op in ("tileloadd", "tileloaddt1", "tilestored"):
            reg = draw(st.sampled_from((None,) + STRIDE_REGS))
            scale = draw(st.sampled_from((1, 2, 4, 8)))
            if reg and abs(strides[reg] * scale) > 1024:
                scale = 1
            disp = draw(st.sampled_from((0, 64, -64, 1, -0x400, 0x3C0)) | st.integers(-0x100, 0x100))
            if op == "tilestored":
                lines.append(f"tilestored {_sib('rdx', reg, scale, disp)}, tmm{t}")
            else:
                zone = draw(st.integers(0, AMX_SPAN // AMX_ZONE - 1))
                disp = max(-0x4400, min(0x43C0, zone_disp(zone) + disp))
                lines.append(f"{op} tmm{t}, {_sib('rdi', reg, scale, disp)}")
        elif op == "tdp":
            form = draw(st.sampled_from(TDP_FORMS + ("tdpfp16ps",)))
            if draw(st.booleans()):
                cs = [x for x in range(8) if roles[x] == "C"]
                c, a, b = (draw(st.sampled_from(cs)), draw(st.sampled_from([x for x in range(8) if roles[x] == "A"])),
                           draw(st.sampled_from([x for x in range(8) if roles[x] == "B"])))
            else:
                c, a, b = draw(st.integers(0, 7)), draw(st.integers(0, 7)), draw(st.integers(0, 7))
            lines.append(_tdp_text(form, c, a, b))
        elif op == "tilerelease":
            lines.append("tilerelease")
        elif op == "sttilecfg":
            lines.append(f"sttilecfg [rdx{'+' if t % 2 else '-'}{0x40 * (t + 1):#x}]")
        elif op == "ldtilecfg":
            lines.append(f"ldtilecfg [rcx+{0x40 * (t % len(configs)):#x}]")
        else:  # rows 8..15 of a 64-byte stride land past the end of the buffer: #PF on row 8
            lines.append(f"tileloadd tmm{t}, {_sib('rdi', 'rsi', 1, AMX_SPAN // 2 - 512)}")
    lines.append("ret")
    regs = {"rcx": AMX_CFG, "rdi": AMX_BUF + AMX_SPAN // 2, "rdx": AMX_DST + AMX_SPAN // 2}
    regs.update({r: s & MASK64 for r, s in strides.items()})
    page = b"".join(configs).ljust(0x1000, b"\0")
    return AmxCase(tuple(lines), tuple(regs.items()), page, data_seed, draw(st.sampled_from((0, 0xCC))))


def amx_programs():
    """(program text, Init) pairs of random AMX cases."""
    return amx_cases().map(lambda case: case.standalone())

