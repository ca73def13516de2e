"""Random AMX test cases for the fuzzer: ``amx_cases()``, a hypothesis strategy, and
``AmxCaseDrawer`` / ``draw_amx_cases()``, the same kind of cases drawn with numpy (about 0.1 ms
a case against hypothesis's 15-30 ms).

A case configures tiles from random valid and invalid 64-byte configurations and
runs TILEZERO, TILELOADD(T1), TILESTORED (strides 0, negative, odd), the integer
TDPs and TDPBF16PS (matching and mismatching shapes, repeated tile numbers as raw
bytes), TILERELEASE and STTILECFG, on data full of the values worth testing: int8
0x80/0xff/0x7f/0x00, int32 accumulators next to the wrap, bf16 NaN payloads,
infinities, denormals and products next to the FTZ boundary 2^-126, fp32
accumulators next to it.  AMX cases run one by one: a fault ends a program, so
they cannot share one as the scalar cases do.

For a model with AMX-FP16, ``AmxCaseDrawer(seed, fp16=True)`` also draws fp16 cases
(three in eight): their buffer holds fp16 data where the others hold bf16 (denormals,
infinities and NaNs, magnitudes up to 2^15, pairs of elements that cancel, see _zones),
and their heavy part is mostly TDPFP16PS.  Without the option the cases are exactly
those drawn before it existed.

The two generators
    ``amx_cases`` is what ``isasim fuzz`` draws: hypothesis can shrink its cases (drop
    instructions, simplify configurations and strides), which a divergence needs.  Drawing
    one costs hypothesis about 15-30 ms, far more than running it on the simulator.

    ``AmxCaseDrawer(seed)`` draws the same programs without hypothesis, for where the
    drawing must not dominate (the simulator side of the fuzzer in benchmarks/amx_targets.py):
    the same heavy/light split, C/A/B configurations with the same shape mismatches and start
    rows, the same random configurations (palettes 0/1/2/255, shapes beyond the limits, colsb
    % 4 != 0, reserved bytes), strides, zones, instruction mix (every TDP form and TDPFP16PS,
    repeated tiles as .byte, TILERELEASE, STTILECFG, LDTILECFG of a later configuration, the
    load that page-faults at row 8), every choice from the same tuples as the strategy.  What
    differs is the weighting: hypothesis leans towards small values and boundaries and repeats
    itself; the drawer draws uniformly, except the instruction list of a light case, whose length
    leans to short ones as hypothesis's lists do (a geometric number of instructions past the first,
    of the same mean).  Its randomness is numpy's, drawn 4096
    uniforms at a time, so the cases are a pure function of the seed: the same seed draws the
    same cases, and the first k of n are the first k cases.  Each case's data seed comes from a
    pool of ``DATA_POOL`` seeds (drawn from the seed), so that the 64 KiB data buffers, which
    take about 1 ms each to make, are made once per pool (``amx_buffer`` remembers the last
    ``DATA_POOL``); cases of one pool still load different data through zones, offsets and
    strides.  Its cases are plain ``AmxCase`` values: program text, initial state, truncation
    and traces work as for the strategy's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
import struct

import numpy as np
from hypothesis import strategies as st

from ...core.trace import Init
from ..forms import amx
from ..operands import Reg
from ..state import TILECFG_BYTES, TILECFG_PALETTE, TILECFG_START_ROW, colsb_bytes, rows_byte, tile_config

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
# The buffer of an fp16 case (AmxCase.fp16): fp16 data where the others have bf16, so zone z is of the same
# role in both and the drawer's zone choices need not change
FP16_ZONE_KINDS = tuple(kind.replace("bf16", "fp16") for kind in ZONE_KINDS)
# fp16 values (bit patterns) worth generating: the denormals at both ends, the smallest normal, the largest
# finite values, powers of two, one and next to it; and, apart, infinities and quiet and signalling NaNs with
# payloads.  Those are drawn far more rarely: one NaN among the 32 inputs of an output makes it NaN, and a
# chain of TDPs keeps it, so at the finite values' rate most outputs would be NaN and compare nothing else.
FP16_SPECIAL = (0x0001, 0x8001, 0x03FF, 0x83FF, 0x0200, 0x0400, 0x8400, 0x0401, 0x7BFF, 0xFBFF, 0x7800, 0xF800,
                0x0000, 0x8000, 0x3C00, 0xBC00, 0x3C01, 0x3BFF, 0x1400, 0x6000, 0x5BFF, 0x0010)
FP16_NONFINITE = (0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7D55, 0xFE01, 0x7FFF)

# The choices both generators draw from
_OPS = ("tilezero", "tileloadd", "tileloaddt1", "tilestored", "tdp", "tdp", "tdp", "tilerelease", "sttilecfg",
        "ldtilecfg", "pagefault")
_ROWS, _COLSB = (0, 16, 1, 8, 17, 255), (0, 64, 4, 6, 1, 65, 68, 0x100)
_MISMATCHES = (None,) * 12 + ("C.colsb", "A.colsb", "C.rows", "B.rows")
_DISPS = (0, 64, -64, 1, -0x400, 0x3C0)
_ZONES_PER_KIND = AMX_SPAN // AMX_ZONE // len(ZONE_KINDS)
_M_K_N_VALUES = (16, 16, 16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
_INT_ZONES = ("int8", "random")
_BF16_ZONES = ("bf16", "bf16-tiny", "bf16-special")
_FP16_ZONES = ("fp16", "fp16-tiny", "fp16-special")
_FLAVOUR_ZONES = {"bf16": {"A": _BF16_ZONES, "B": _BF16_ZONES, "C": ("fp32", "fp32-tiny")},
                  "int": {"A": _INT_ZONES, "B": _INT_ZONES, "C": ("int32",)},
                  "fp16": {"A": _FP16_ZONES, "B": _FP16_ZONES, "C": ("fp32", "fp32-tiny")}}
_FLAVOURS = ("bf16", "bf16", "bf16", "int", "int")
# A drawer for a model with AMX-FP16 draws fp16 cases besides (AmxCaseDrawer(fp16=True)): TDPFP16PS is
# otherwise one TDP in six of the light cases only, some 500 elements in 400 cases
_FLAVOURS_FP16 = _FLAVOURS + ("fp16",) * 3
_HEAVY_FORMS = {"bf16": ("tdpbf16ps",) * 8 + INT_TDP_FORMS, "int": INT_TDP_FORMS + ("tdpbf16ps",),
                "fp16": ("tdpfp16ps",) * 8 + INT_TDP_FORMS + ("tdpbf16ps",)}


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
    elif kind.startswith("fp16"):
        sign = rng.integers(0, 2, n16).astype(np.uint16) << 15
        if kind == "fp16-tiny":  # denormals (exponent field 0) and the smallest normals
            exponent = rng.integers(0, 3, n16).astype(np.uint16)
        else:  # around one, and a share of large magnitudes (2^10 to 2^15: products up to 2^31)
            exponent = np.where(rng.random(n16) < 0.85, rng.integers(15 - 6, 15 + 7, n16),
                                rng.integers(25, 31, n16)).astype(np.uint16)
        normal = sign | (exponent << 10) | rng.integers(0, 1024, n16).astype(np.uint16)
        special = rng.choice(np.array(FP16_SPECIAL, dtype=np.uint16), n16)
        nonfinite = rng.choice(np.array(FP16_NONFINITE, dtype=np.uint16), n16)
        share, rare = (0.4, 0.01) if kind == "fp16-special" else (0.05, 0.001)
        pick = rng.random(n16)
        out = np.where(pick < rare, nonfinite, np.where(pick < rare + share, special, normal)).astype("<u2")
        # Cancellation: TDPFP16PS adds the products of a pair of elements, so a pair whose second element is
        # the first negated (exactly or one ulp off) meets, in a B pair of equal elements, products that
        # cancel to zero or to a few ulps
        pairs = out.reshape(-1, 2)
        pick = rng.random(len(pairs))
        negated = pairs[:, 0] ^ np.uint16(0x8000)
        pairs[:, 1] = np.where(pick < 0.15, negated, np.where(pick < 0.22, negated ^ np.uint16(1),
                               np.where(pick < 0.37, pairs[:, 0], pairs[:, 1])))
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


DATA_POOL = 64  # data seeds per AmxCaseDrawer, and the buffers amx_buffer remembers (64 KiB each)


@lru_cache(maxsize=2 * DATA_POOL)  # a pool's buffers of both kinds
def amx_buffer(data_seed: int, fp16: bool = False) -> bytes:
    """The 64 KiB tile-data buffer: zone z holds ZONE_KINDS[z % 8] data, or FP16_ZONE_KINDS[z % 8] for an
    fp16 case (bytes: a remembered buffer is shared)."""
    rng = np.random.default_rng(data_seed)
    kinds = FP16_ZONE_KINDS if fp16 else ZONE_KINDS
    per_kind = AMX_SPAN // AMX_ZONE // len(kinds)
    zones = np.stack([_zones(kind, rng, per_kind) for kind in kinds], axis=1)  # [z // 8][z % 8]
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
    fp16: bool = False  # its buffer holds fp16 data where others hold bf16 (FP16_ZONE_KINDS)

    def standalone(self) -> tuple[str, Init]:
        memory = [(AMX_CFG, self.configs, True), (AMX_BUF, amx_buffer(self.data_seed, self.fp16), True),
                  (AMX_DST, bytes([self.dest_fill]) * AMX_SPAN, True)]
        return "\n".join(self.lines), Init(dict(self.regs), memory)

    @property
    def size(self) -> int:
        return len(self.lines)

    def truncated(self, index: int) -> "AmxCase":
        """The case ending (RET) right after instruction ``index``."""
        return AmxCase(self.lines[: index + 1] + ("ret",), self.regs, self.configs, self.data_seed, self.dest_fill,
                       self.fp16)


_M_K_N = st.sampled_from(_M_K_N_VALUES)


@st.composite
def _tdp_config(draw):
    """A palette-1 configuration with consistent C/A/B shapes; roles maps tile -> 'C', 'A' or 'B'."""
    m, k, n = draw(_M_K_N), draw(_M_K_N), draw(_M_K_N)
    order = draw(st.permutations(range(8)))
    roles = {order[0]: "C", order[1]: "C", order[2]: "A", order[3]: "A", order[4]: "A", order[5]: "B",
             order[6]: "B", order[7]: "B"}
    shapes = {t: {"C": (m, 4 * n), "A": (m, 4 * k), "B": (k, 4 * n)}[r] for t, r in roles.items()}
    mismatch = draw(st.sampled_from(_MISMATCHES))
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
        rows = draw(st.sampled_from(_ROWS) | st.integers(0, 16))
        colsb = draw(st.sampled_from(_COLSB) | st.integers(0, 64))
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


@lru_cache(maxsize=None)  # at most 6 forms x 512 tile triples
def _fixed_statement(op: str, t: int, configs: int) -> str:
    """The statements whose operands follow from the tile number ``t`` alone, as the hypothesis strategy and
    the numpy drawer both write them: TILERELEASE, STTILECFG to a slot of the destination buffer, LDTILECFG of
    one of the ``configs`` configurations, and (any other op) the faulting load."""
    if op == "tilerelease":
        return "tilerelease"
    if op == "sttilecfg":
        return f"sttilecfg [rdx{'+' if t % 2 else '-'}{0x40 * (t + 1):#x}]"
    if op == "ldtilecfg":
        return f"ldtilecfg [rcx+{0x40 * (t % configs):#x}]"
    # rows 8..15 of a 64-byte stride land past the end of the buffer: #PF on row 8
    return f"tileloadd tmm{t}, {_sib('rdi', 'rsi', 1, AMX_SPAN // 2 - 512)}"


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
    ops = draw(st.lists(st.sampled_from(_OPS), min_size=0 if heavy else 1, max_size=max_ops if not heavy else 4))
    for op in ops:
        t = draw(st.integers(0, 7))
        if op == "tilezero":
            lines.append(f"tilezero tmm{t}")
        elif op in ("tileloadd", "tileloaddt1", "tilestored"):
            reg = draw(st.sampled_from((None,) + STRIDE_REGS))
            scale = draw(st.sampled_from((1, 2, 4, 8)))
            if reg and abs(strides[reg] * scale) > 1024:
                scale = 1
            disp = draw(st.sampled_from(_DISPS) | st.integers(-0x100, 0x100))
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
        else:
            lines.append(_fixed_statement(op, t, len(configs)))
    lines.append("ret")
    regs = {"rcx": AMX_CFG, "rdi": AMX_BUF + AMX_SPAN // 2, "rdx": AMX_DST + AMX_SPAN // 2}
    regs.update({r: s & MASK64 for r, s in strides.items()})
    page = b"".join(configs).ljust(0x1000, b"\0")
    return AmxCase(tuple(lines), tuple(regs.items()), page, data_seed, draw(st.sampled_from((0, 0xCC))))


def amx_programs():
    """(program text, Init) pairs of random AMX cases."""
    return amx_cases().map(lambda case: case.standalone())


# ---------------------------------------------------------------------------
# The same cases without hypothesis
# ---------------------------------------------------------------------------


class _Uniforms:
    """numpy's uniforms in [0, 1), drawn a chunk at a time and handed out one by one (a Python float from a
    list costs far less than a call into the Generator per choice).  The chunks are always CHUNK long, so
    the sequence depends on the seed alone, not on how many cases are asked for at a time."""

    CHUNK = 4096

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self._next = chain.from_iterable(self._chunks()).__next__  # the chunks one after the other, in C

    def _chunks(self):
        while True:
            yield self.rng.random(self.CHUNK).tolist()

    def below(self, n: int) -> int:
        return int(self._next() * n)

    def pick(self, choices):
        return choices[int(self._next() * len(choices))]

    def between(self, low: int, high: int) -> int:
        """An integer in [low, high], both included."""
        return low + int(self._next() * (high - low + 1))

    def short_length(self, low: int, high: int) -> int:
        """A list length in [low, high] leaning to short ones as hypothesis's lists do: low plus a geometric
        number of extra elements, as many on average as hypothesis's lists hold beyond low, capped at high."""
        mean_extra = min(max(low * 2, low + 5), (low + high) / 2) - low  # hypothesis's average list size
        go_on = mean_extra / (mean_extra + 1)
        length = low
        while length < high and self._next() < go_on:
            length += 1
        return length

    def coin(self) -> bool:
        return self._next() < 0.5

    def permutation(self, n: int) -> list[int]:
        order = list(range(n))
        for i in range(n - 1, 0, -1):  # Fisher-Yates
            j = int(self._next() * (i + 1))
            order[i], order[j] = order[j], order[i]
        return order


# The configuration's fields in state's layout (palette, start_row, colsb[0..7] as 16-bit words, rows[0..7],
# reserved bytes between) as one struct: packing a drawn configuration is then one call
_CONFIG_LAYOUT = struct.Struct(f"<BB{colsb_bytes(0).start - TILECFG_START_ROW - 1}x8H"
                               f"{rows_byte(0) - colsb_bytes(7).stop}x8B{TILECFG_BYTES - rows_byte(7) - 1}x")
assert (TILECFG_PALETTE, TILECFG_START_ROW, _CONFIG_LAYOUT.size) == (0, 1, TILECFG_BYTES)
assert all(colsb_bytes(t).start == colsb_bytes(0).start + 2 * t and rows_byte(t) == rows_byte(0) + t for t in range(8))


def _config_image(shapes, start_row: int, palette: int = 1) -> bytes:
    """tile_config's 64 bytes for shapes, (rows, colsb) of tiles 0..7 in order (tile_config's generic
    packing is a good part of drawing a case)."""
    return _CONFIG_LAYOUT.pack(palette, start_row, *[c for _, c in shapes], *[r for r, _ in shapes])


class AmxCaseDrawer:
    """AMX cases drawn with numpy rather than hypothesis (see the module docstring): ``draw(n)`` gives
    the next n cases of ``seed``; two drawers of one seed draw the same cases.  ``fp16``: draw fp16 cases
    too (three flavours in eight: fp16 data, mostly TDPFP16PS), for a model with AMX-FP16; the strategy
    has no such option."""

    def __init__(self, seed: int, max_ops: int = 24, fp16: bool = False):
        self.u = _Uniforms(seed)
        self.max_ops = max_ops
        self.flavours = _FLAVOURS_FP16 if fp16 else _FLAVOURS  # one uniform either way: the same cases follow
        base = int(self.u.rng.integers(0, (1 << 32) - DATA_POOL + 1))  # the pool: DATA_POOL consecutive seeds
        self.data_seeds = range(base, base + DATA_POOL)

    def draw(self, n: int) -> list[AmxCase]:
        return [self.case() for _ in range(n)]

    def _tdp_config(self) -> tuple[bytes, dict[int, str]]:
        """As the strategy's _tdp_config: consistent C/A/B shapes, or one dimension that disagrees."""
        u = self.u
        m, k, n = u.pick(_M_K_N_VALUES), u.pick(_M_K_N_VALUES), u.pick(_M_K_N_VALUES)
        order = u.permutation(8)
        roles = {order[i]: role for i, role in enumerate("CCAAABBB")}
        sizes = {"C": (m, 4 * n), "A": (m, 4 * k), "B": (k, 4 * n)}
        shapes = {t: sizes[r] for t, r in roles.items()}
        mismatch = u.pick(_MISMATCHES)
        if mismatch:
            role, what = mismatch.split(".")
            for t, r in roles.items():
                if r == role:
                    rows, colsb = shapes[t]
                    shapes[t] = (rows, max(4, (colsb + 4) % 68)) if what == "colsb" else (rows % 16 + 1, colsb)
        start_row = u.pick((0,) * 6 + (1, 5, 15, 200))
        return _config_image([shapes[t] for t in range(8)], start_row), roles

    def _random_config(self) -> bytes:
        """As the strategy's _random_config."""
        u = self.u
        palette = u.pick((1, 1, 1, 0, 2, 255))
        shapes = []
        for _ in range(8):
            rows = u.pick(_ROWS) if u.coin() else u.between(0, 16)
            colsb = u.pick(_COLSB) if u.coin() else u.between(0, 64)
            shapes.append((rows, colsb))
        if u.coin():
            shapes = [(r, c) if r and c else (0, 0) for r, c in shapes]
        image = bytearray(_config_image(shapes, u.pick((0, 0, 3, 200)), palette))
        reserved = u.pick((None,) * 8 + (2, 15, 32, 47, 56, 63))
        if reserved is not None:
            image[reserved] = 1
        return bytes(image)

    def case(self) -> AmxCase:
        """One case, choice for choice as amx_cases draws it."""
        u = self.u
        heavy = u.pick((True, True, False))
        cfg0, roles = self._tdp_config()
        configs = [cfg0]
        for _ in range(u.between(0, 3)):
            configs.append(self._random_config() if u.coin() else self._tdp_config()[0])
        strides = {"rsi": 64}
        for reg in STRIDE_REGS[1:]:
            strides[reg] = u.pick(STRIDES) if u.coin() else u.between(-1024, 1024)
        flavour = u.pick(self.flavours)
        data_seed = u.pick(self.data_seeds)
        zone_kinds = FP16_ZONE_KINDS if flavour == "fp16" else ZONE_KINDS
        by_role = {r: [t for t in range(8) if roles[t] == r] for r in "CAB"}
        lines = ["ldtilecfg [rcx]"]
        if heavy:
            kinds = _FLAVOUR_ZONES[flavour]
            for t in range(8):
                role_kinds = kinds[roles[t]]
                kind = role_kinds[u.below(len(role_kinds))]
                zone = zone_kinds.index(kind) + len(ZONE_KINDS) * (u.between(0, 7) % _ZONES_PER_KIND)
                lines.append(f"tileloadd tmm{t}, {_sib('rdi', 'rsi', 1, zone_disp(zone))}")
            forms = _HEAVY_FORMS[flavour]
            nxt, cs, as_, bs = u._next, by_role["C"], by_role["A"], by_role["B"]
            for _ in range(u.between(1, 32)):  # u.pick inlined: this loop is a good part of the drawing
                form = forms[int(nxt() * len(forms))]
                lines.append(_tdp_text(form, cs[int(nxt() * 2)], as_[int(nxt() * 3)], bs[int(nxt() * 3)]))
            for i, t in enumerate(by_role["C"]):
                lines.append(f"tilestored {_sib('rdx', 'rsi', 1, -0x800 + 0x400 * i)}, tmm{t}")
        ops = [u.pick(_OPS) for _ in range(u.between(0, 4) if heavy else u.short_length(1, self.max_ops))]
        for op in ops:
            t = u.below(8)
            if op == "tilezero":
                lines.append(f"tilezero tmm{t}")
            elif op in ("tileloadd", "tileloaddt1", "tilestored"):
                reg = u.pick((None,) + STRIDE_REGS)
                scale = u.pick((1, 2, 4, 8))
                if reg and abs(strides[reg] * scale) > 1024:
                    scale = 1
                disp = u.pick(_DISPS) if u.coin() else u.between(-0x100, 0x100)
                if op == "tilestored":
                    lines.append(f"tilestored {_sib('rdx', reg, scale, disp)}, tmm{t}")
                else:
                    zone = u.below(AMX_SPAN // AMX_ZONE)
                    disp = max(-0x4400, min(0x43C0, zone_disp(zone) + disp))
                    lines.append(f"{op} tmm{t}, {_sib('rdi', reg, scale, disp)}")
            elif op == "tdp":
                form = u.pick(TDP_FORMS + ("tdpfp16ps",))
                if u.coin():
                    c, a, b = u.pick(by_role["C"]), u.pick(by_role["A"]), u.pick(by_role["B"])
                else:
                    c, a, b = u.below(8), u.below(8), u.below(8)
                lines.append(_tdp_text(form, c, a, b))
            else:
                lines.append(_fixed_statement(op, t, len(configs)))
        lines.append("ret")
        regs = {"rcx": AMX_CFG, "rdi": AMX_BUF + AMX_SPAN // 2, "rdx": AMX_DST + AMX_SPAN // 2}
        regs.update({r: s & MASK64 for r, s in strides.items()})
        page = b"".join(configs).ljust(0x1000, b"\0")
        return AmxCase(tuple(lines), tuple(regs.items()), page, data_seed, u.pick((0, 0xCC)), flavour == "fp16")


def draw_amx_cases(n: int, seed: int, max_ops: int = 24, fp16: bool = False) -> list[AmxCase]:
    """The first n cases AmxCaseDrawer(seed) draws."""
    return AmxCaseDrawer(seed, max_ops, fp16).draw(n)
