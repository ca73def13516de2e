"""The silicon fuzzer's SSE/AVX/AVX-512 arithmetic, conversions, shuffles and opmask logic (issue 27): the
forms compilers emit around AMX kernels beyond the moves fuzz/scalar.py's vector and avx512 kinds draw.

scalar.py's vector and avx512 kinds hand some of their draws here: ``render_simd`` turns a drawn spec into the
lines of one form on the case's vector registers (its pool) and its slot, drawn among the forms this host's CPU
runs (``simd_forms``: SSE4.1, AVX2, FMA, and AVX-512 F/BW/DQ/VL (+VBMI) for the EVEX ones).  Sources are
loaded from the slot first, now and then, so that the forms have data; a mask is loaded from the slot before it
is used; k registers are stored back to the slot (they are not observed).  Forms that need an aligned memory
operand stay register to register (the slot's addresses are not aligned).

This module imports nothing of scalar.py (it would make an import circle): the builder ``b`` (its memory,
src, dest, note and vectors_written) and the memory operand maker come as arguments.
"""

from __future__ import annotations

from typing import Callable

MASK64 = (1 << 64) - 1
PREFIX = {128: "xmm", 256: "ymm", 512: "zmm"}
AVX512 = frozenset({"avx512f", "avx512bw", "avx512dq", "avx512vl"})

# (mnemonic, pattern, widths, host flags needed).  Patterns: see render_simd.  EVEX-capable patterns take
# masks and xmm16-31 where the host has AVX512 (and 512 bits only there).
_SCALAR_FP = [(m, "L2s", (128,), {"sse"}) for m in ("addss", "subss", "mulss", "divss", "maxss", "minss")]
_SCALAR_FP += [(m, "S3", (128,), {"avx"}) for m in ("vaddss", "vsubss", "vmulss", "vdivss", "vmaxss", "vminss")]
_SCALAR_FP += [("movss", "movss", (128,), {"sse"}), ("vmovss", "vmovss", (128,), {"avx"}),
               ("cvtsi2ss", "cvtsi", (128,), {"sse"}), ("vcvtsi2ss", "vcvtsi", (128,), {"avx"}),
               ("cvttss2si", "tosi", (128,), {"sse"}), ("cvtss2si", "tosi", (128,), {"sse"}),
               ("vcvttss2si", "tosi", (128,), {"avx"}), ("vcvtss2si", "tosi", (128,), {"avx"}),
               ("ucomiss", "cmp", (128,), {"sse"}), ("comiss", "cmp", (128,), {"sse"}),
               ("vucomiss", "cmp", (128,), {"avx"}), ("vcomiss", "cmp", (128,), {"avx"}),
               ("vfmadd132ss", "S3", (128,), {"fma"}), ("vfmadd213ss", "S3", (128,), {"fma"}),
               ("vfmadd231ss", "S3", (128,), {"fma"}), ("roundss", "L2si", (128,), {"sse4_1"}),
               ("vroundss", "S3i-vex", (128,), {"avx"}), ("vrndscaless", "S3i", (128,), AVX512)]
_PACKED_FP = [(m, "L2", (128,), {"sse"}) for m in ("addps", "subps", "mulps", "divps", "maxps", "minps", "andps",
                                                    "orps", "xorps", "andnps", "cvtdq2ps", "cvttps2dq", "cvtps2dq",
                                                    "unpcklps", "unpckhps", "unpcklpd", "unpckhpd", "movhlps",
                                                    "movlhps")]
_PACKED_FP += [("haddps", "L2", (128,), {"pni"}), ("roundps", "L2i", (128,), {"sse4_1"}),  # SSE3 is "pni" here
               ("shufps", "L2i", (128,), {"sse"}), ("movlps", "movlps", (128,), {"sse"}),
               ("movhps", "movlps", (128,), {"sse"})]
_PACKED_FP += [(m, "V3", (128, 256, 512), {"avx"}) for m in ("vsubps", "vdivps", "vmaxps", "vminps", "vandps", "vorps",
                                                             "vandnps", "vunpcklps", "vunpckhps", "vunpcklpd",
                                                             "vunpckhpd")]
_PACKED_FP += [("vhaddps", "V3-vex", (128, 256), {"avx"}), ("vcvttps2dq", "V2", (128, 256, 512), {"avx"}),
               ("vcvtps2dq", "V2", (128, 256, 512), {"avx"}), ("vfmadd132ps", "V3", (128, 256, 512), {"fma"}),
               ("vfmadd213ps", "V3", (128, 256, 512), {"fma"}), ("vroundps", "V2i-vex", (128, 256), {"avx"}),
               ("vrndscaleps", "V2i", (128, 256, 512), AVX512), ("vshufps", "V3i", (128, 256, 512), {"avx"}),
               ("vinsertf128", "ins-vex", (256,), {"avx"}), ("vinserti128", "ins-vex", (256,), {"avx2"}),
               ("vinserti32x4", "ins", (256, 512), AVX512), ("vinserti64x4", "ins", (512,), AVX512),
               ("vextractf128", "ext-vex", (256,), {"avx"}), ("vextractf32x4", "ext", (256, 512), AVX512),
               ("vextracti64x2", "ext", (256, 512), AVX512), ("vblendvps", "blendv", (128, 256), {"avx"}),
               ("vpblendvb", "blendv", (128, 256), {"avx2"}), ("vblendmps", "V3", (128, 256, 512), AVX512),
               ("vpblendmb", "V3", (128, 256, 512), AVX512), ("vpblendmd", "V3", (128, 256, 512), AVX512)]
_LEGACY_INTEGER = ("paddb", "paddw", "paddd", "paddq", "psubb", "psubw", "psubd", "psubq", "pand", "por", "pandn",
                   "pmullw", "pmaddwd", "pminub", "pmaxub", "pavgb", "pcmpeqb", "pcmpeqw", "pcmpeqd", "pcmpgtb",
                   "pcmpgtw", "pcmpgtd", "punpcklbw", "punpckhbw", "punpcklwd", "punpckhwd", "punpckldq",
                   "punpckhdq", "punpcklqdq", "punpckhqdq", "packsswb", "packssdw", "packuswb")
_INTEGER = [(m, "L2", (128,), {"sse2"}) for m in _LEGACY_INTEGER]
_INTEGER += [(m, "L2", (128,), {"sse4_1"}) for m in ("pmulld", "pminsd", "pmaxsd", "packusdw")]
_INTEGER += [(m, "L2", (128,), {"ssse3"}) for m in ("phaddd", "pshufb")]
_INTEGER += [(m, "Lsh", (128,), {"sse2"}) for m in ("psllw", "pslld", "psllq", "psrlw", "psrld", "psrlq", "psraw",
                                                    "psrad")]
_INTEGER += [("pslldq", "Lbsh", (128,), {"sse2"}), ("psrldq", "Lbsh", (128,), {"sse2"}),
             ("pshufd", "L2i", (128,), {"sse2"})]
_INTEGER += [(m, "V3", (128, 256, 512), {"avx2"}) for m in (
    "vpaddb", "vpaddw", "vpaddq", "vpsubb", "vpsubw", "vpsubq", "vpmullw", "vpminsd", "vpmaxsd", "vpminub", "vpmaxub",
    "vpavgb", "vpunpcklbw", "vpunpckhbw", "vpunpckldq", "vpunpckhdq", "vpunpcklqdq", "vpunpckhqdq", "vpacksswb",
    "vpackssdw", "vpackuswb", "vpackusdw")]
_INTEGER += [(m, "V3-vex", (128, 256), {"avx2"}) for m in ("vpandn", "vphaddd")]
_INTEGER += [(m, "pcmp", (128, 256, 512), {"avx2"}) for m in ("vpcmpeqb", "vpcmpeqw", "vpcmpeqd", "vpcmpgtb",
                                                              "vpcmpgtw", "vpcmpgtd")]
_INTEGER += [(m, "Vsh", (128, 256, 512), {"avx2"}) for m in ("vpsllw", "vpsllq", "vpsrlw", "vpsrlq", "vpsraw")]
_INTEGER += [(m, "Vbsh", (128, 256, 512), {"avx2"}) for m in ("vpslldq", "vpsrldq")]
_INTEGER += [("vpermq", "V2i-permq", (256, 512), {"avx2"}), ("vpermt2d", "V3", (128, 256, 512), AVX512),
             ("vpermt2b", "V3", (128, 256, 512), AVX512 | {"avx512vbmi"}),
             ("vpermi2b", "V3", (128, 256, 512), AVX512 | {"avx512vbmi"}),
             ("vpermi2w", "V3", (128, 256, 512), AVX512), ("valignd", "V3i", (128, 256, 512), AVX512),
             ("valignq", "V3i", (128, 256, 512), AVX512), ("vshufi64x2", "V3i", (256, 512), AVX512),
             ("vshufi32x4", "V3i", (256, 512), AVX512)]
_INTEGER += [(m, "down", (128, 256, 512), AVX512) for m in ("vpmovdb", "vpmovsdb", "vpmovusdb", "vpmovdw", "vpmovsdw",
                                                            "vpmovusdw", "vpmovqd", "vpmovwb", "vpmovswb",
                                                            "vpmovuswb")]
_INTEGER += [("vpmovsxbq", "widen8", (128, 256, 512), {"avx2"}), ("vpmovzxbq", "widen8", (128, 256, 512), {"avx2"})]
_INTEGER += [(m, "V3", (128, 256, 512), AVX512 | {"avx512_vnni"}) for m in ("vpdpbusds", "vpdpwssd", "vpdpwssds")]
_INTEGER += [(f"{{vex}} {m}", "V3-vex", (128, 256), {"avx_vnni"}) for m in ("vpdpbusd", "vpdpbusds", "vpdpwssd",
                                                                             "vpdpwssds")]
_INTEGER += [("vcvtph2ps", "ph2ps", (128, 256, 512), {"f16c"}), ("vcvtps2ph", "down", (128, 256, 512), {"f16c"})]
# issue 27, round 2: dword-pair and qword multiplies, word shuffles and blends, word inserts/extracts, byte/word
# permutes, vector <-> opmask, the qword down-conversions, double moves
_INTEGER += [("pmuludq", "L2", (128,), {"sse2"}), ("pmuldq", "L2", (128,), {"sse4_1"}),
             ("pshuflw", "L2i", (128,), {"sse2"}), ("pshufhw", "L2i", (128,), {"sse2"}),
             ("pblendw", "L2i", (128,), {"sse4_1"}), ("movapd", "L2", (128,), {"sse2"}),
             ("movupd", "L2", (128,), {"sse2"}), ("movsd", "movsd", (128,), {"sse2"}),
             ("vmovsd", "vmovsd", (128,), {"avx"}), ("pinsrw", "pinsrw", (128,), {"sse2"}),
             ("vpinsrw", "pinsrw", (128,), {"avx"}), ("pextrw", "pextrw", (128,), {"sse4_1"}),
             ("vpextrw", "pextrw", (128,), {"avx"})]
_INTEGER += [(m, "V3", (128, 256, 512), {"avx2"}) for m in ("vpmuludq", "vpmuldq")]
_INTEGER += [("vpmullq", "V3", (128, 256, 512), AVX512), ("vpermw", "V3", (128, 256, 512), AVX512),
             ("vpermb", "V3", (128, 256, 512), AVX512 | {"avx512vbmi"}),
             ("vpshuflw", "V2i", (128, 256, 512), {"avx2"}), ("vpshufhw", "V2i", (128, 256, 512), {"avx2"}),
             ("vpblendw", "V3i-vex", (128, 256), {"avx2"}), ("vpblendd", "V3i-vex", (128, 256), {"avx2"})]
_INTEGER += [("pminsw", "L2", (128,), {"sse2"}), ("pmaxsw", "L2", (128,), {"sse2"})]
_INTEGER += [(m, "L2", (128,), {"sse4_1"}) for m in ("pminsb", "pmaxsb", "pminuw", "pmaxuw", "pminud", "pmaxud")]
_INTEGER += [(m, "V3", (128, 256, 512), {"avx2"}) for m in ("vpminsb", "vpmaxsb", "vpminsw", "vpmaxsw", "vpminuw",
                                                            "vpmaxuw", "vpminud", "vpmaxud")]
_INTEGER += [(m, "V3", (128, 256, 512), AVX512) for m in ("vpminsq", "vpmaxsq", "vpminuq", "vpmaxuq")]
_INTEGER += [("pmulhw", "L2", (128,), {"sse2"}), ("pmulhuw", "L2", (128,), {"sse2"}),
             ("vpmulhw", "V3", (128, 256, 512), {"avx2"}), ("vpmulhuw", "V3", (128, 256, 512), {"avx2"})]
_INTEGER += [(m, "L2", (128,), {"ssse3"}) for m in ("pabsb", "pabsw", "pabsd")]
_INTEGER += [(m, "V2", (128, 256, 512), {"avx2"}) for m in ("vpabsb", "vpabsw", "vpabsd")]
_INTEGER += [("vpabsq", "V2", (128, 256, 512), AVX512), ("vcvtusi2ss", "vcvtsi", (128,), AVX512)]
_INTEGER += [(f"vpmov{s}2m", "tomask", (128, 256, 512), AVX512) for s in "bwdq"]
_INTEGER += [(f"vpmovm2{s}", "frommask", (128, 256, 512), AVX512) for s in "bwdq"]
_INTEGER += [(m, "down", (128, 256, 512), AVX512) for m in ("vpmovqb", "vpmovsqb", "vpmovusqb", "vpmovqw", "vpmovsqw",
                                                            "vpmovusqw", "vpmovsqd", "vpmovusqd")]
# gathers (VEX where the host has AVX2, EVEX under a mask where it has AVX-512) and scatters through indices made
# small (shifted right until every element lands in the slot's 64 bytes)
_INTEGER += [(m, "gather", (128, 256, 512), {"avx2"}) for m in ("vpgatherdd", "vpgatherdq", "vpgatherqd", "vpgatherqq",
                                                               "vgatherdps", "vgatherdpd", "vgatherqps", "vgatherqpd")]
_INTEGER += [(m, "scatter", (128, 256, 512), AVX512) for m in ("vpscatterdd", "vpscatterdq", "vpscatterqd",
                                                               "vpscatterqq", "vscatterdps", "vscatterdpd",
                                                               "vscatterqps", "vscatterqpd")]
_COMPARES = [("cmpps", "fcmp", (128,), {"sse"}), ("cmpss", "fcmp", (128,), {"sse"}),
             ("vcmpps", "fcmp", (128, 256, 512), {"avx"}), ("vcmpss", "fcmp", (128,), {"avx"})]
_COMPARES += [(f"vpcmp{s}", "icmp", (128, 256, 512), AVX512) for s in ("b", "ub", "w", "uw", "d", "ud", "q", "uq")]
_OPMASK = [(f"{stem}{s}", "k3", (), AVX512) for stem in ("kand", "kandn", "kor", "kxnor", "kadd") for s in "bwdq"]
_OPMASK += [(f"knot{s}", "k2", (), AVX512) for s in "bwdq"]
_OPMASK += [(f"kshift{d}{s}", "kshift", (), AVX512) for d in "lr" for s in "bwdq"]
_OPMASK += [(f"ktest{s}", "ktest", (), AVX512) for s in "bwdq"]
_OPMASK += [(m, "k3", (), AVX512) for m in ("kunpckbw", "kunpckwd", "kunpckdq")]
TABLE = tuple(_SCALAR_FP + _PACKED_FP + _INTEGER + _COMPARES + _OPMASK)
FORMS = tuple(entry[0] for entry in TABLE)  # every form this module draws (on a host that has them all)
_DOWN_WIDTH = {"vpmovdb": 4, "vpmovsdb": 4, "vpmovusdb": 4, "vpmovwb": 2, "vpmovswb": 2, "vpmovuswb": 2,
               "vpmovqb": 8, "vpmovsqb": 8, "vpmovusqb": 8, "vpmovqw": 4, "vpmovsqw": 4, "vpmovusqw": 4}


def simd_forms(flags: frozenset[str]) -> tuple[str, ...]:
    """The forms of TABLE this host's CPU runs (its /proc/cpuinfo flags)."""
    return tuple(m for m, _pattern, _widths, needs in TABLE if needs <= flags)


def _broadcast_element(mnemonic: str) -> int:
    """The element size of the form's embedded broadcast (4 for m32bcst), 0 if it has none."""
    from ..forms.vector import FORMS as VECTOR_FORMS, ROWS

    forms = VECTOR_FORMS.of_mnemonic(mnemonic)
    return max((ROWS[code].element_bytes for code in forms[0].codes), default=0) if forms else 0


def _mix(x: int) -> int:
    """A 64-bit finaliser (splitmix64's): every input bit moves every output bit, so that each form comes up."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & MASK64
    x = (x ^ (x >> 27)) * 0x94D049BB133111EB & MASK64
    return x ^ (x >> 31)


def render_simd(b, spec: dict, flags: frozenset[str], pool: tuple[int, ...], memory: Callable[[int], str]
                ) -> tuple[list[str], str]:
    """(lines, mnemonic) of two drawn forms (300-odd forms share a run's draws: two a draw keep each one drawn
    in the CI run): ``b`` is the scalar builder (GPRs and vectors_written), ``pool`` the case's vector
    registers, ``memory(bits)`` an operand of that size in the slot; the mnemonic is the first form's."""
    choice = 0
    for field in ("imm", "disp", "base", "index", "cond", "alias", "r1", "r2", "dist", "bits"):  # every drawn number
        choice = _mix(choice ^ (spec[field] & MASK64))
    for part in spec["mem"]:
        choice = _mix(choice ^ (int(part) & MASK64))
    lines, mnemonic = _render_one(b, spec, flags, pool, memory, choice)
    more, _second = _render_one(b, spec, flags, pool, memory, _mix(choice ^ 0x5EC0_4D00_2702))
    return lines + more, mnemonic


def _render_one(b, spec: dict, flags: frozenset[str], pool: tuple[int, ...], memory: Callable[[int], str],
                choice: int) -> tuple[list[str], str]:
    """(lines, mnemonic) of the form ``choice`` (a mix of the spec's drawn numbers) draws."""
    available = [entry for entry in TABLE if entry[3] <= flags]
    mnemonic, pattern, widths, _needs = available[(choice >> 32) % len(available)]
    evex = AVX512 <= flags and not pattern.endswith("-vex") and not pattern.startswith(("L", "mov", "cvtsi", "tosi",
                                                                                        "blendv", "pinsrw", "pextrw"))
    evex = evex and mnemonic.startswith(("v", "k"))  # a legacy SSE form reaches xmm0-15 only
    widths = [w for w in widths if w < 512 or AVX512 <= flags] or [128]
    width = widths[(choice >> 4) % len(widths)]
    regs = [n for n in pool if n < 16 or evex]
    lines: list[str] = []
    k = f"k{1 + (choice >> 8) % 3}"
    masked = evex and bool(choice & 2) and pattern not in ("blendv", "Vbsh", "cmp", "tosi", "vcvtsi", "tomask",
                                                                 "frommask", "gather", "scatter")
    zeroing = bool(choice & 8)

    def reg(c: int, w: int = width) -> str:
        return f"{PREFIX[w]}{regs[c % len(regs)]}"

    def dest_of(text: str, *, store: bool = False) -> str:
        return f"{text}{{{k}}}" + ("{z}" if zeroing and not store else "") if masked else text

    def written(*names: str) -> None:
        b.vectors_written.update(int(n[3:]) for n in names)

    r1, r2, r3 = spec["r1"], spec["r2"], spec["r2"] // 3 + (choice >> 12)
    shape = (choice >> 16) % 3  # 0: registers, 1: memory source, 2: a store where the form has one
    imm = (choice >> 20) & 0xFF
    if masked:
        lines.append(f"kmovq {k}, {memory(64)}")
    if choice & 1 and not pattern.startswith("k"):  # sources from the slot first
        for c in (r2, r3):
            load = reg(c, 512 if AVX512 <= flags and evex else 128)
            lines.append(f"vmovdqu8 {load}, {memory(512)}" if load.startswith("zmm") else f"movdqu {load}, {memory(128)}")
            written(load)
    dest, src, second = reg(r1), reg(r2), reg(r3)
    if pattern in ("L2", "L2s", "L2i", "L2si"):
        operand = memory(32) if pattern in ("L2s", "L2si") and shape == 1 else second
        tail = f", {imm & 0xF:#x}" if pattern in ("L2i", "L2si") and mnemonic.startswith("round") else \
            f", {imm:#x}" if pattern.endswith("i") else ""
        lines.append(f"{mnemonic} {dest}, {operand}{tail}")
        written(dest)
    elif pattern in ("S3", "S3i", "S3i-vex"):
        operand = memory(32) if shape == 1 else second
        tail = f", {imm if pattern == 'S3i' else imm & 0xF:#x}" if pattern.startswith("S3i") else ""
        lines.append(f"{mnemonic} {dest_of(dest)}, {src}, {operand}{tail}")
        written(dest)
    elif pattern == "movss":
        lines.append([f"movss {dest}, {second}", f"movss {dest}, {memory(32)}", f"movss {memory(32)}, {src}"][shape])
        if shape < 2:
            written(dest)
    elif pattern == "vmovss":
        lines.append([f"vmovss {dest_of(dest)}, {src}, {second}", f"vmovss {dest_of(dest)}, {memory(32)}",
                      f"vmovss {dest_of(memory(32), store=True)}, {src}"][shape])
        if shape < 2:
            written(dest)
    elif pattern in ("cvtsi", "vcvtsi"):
        bits = 64 if choice & 16 else 32
        operand = memory(bits) if shape == 1 else b.src(bits, spec["r2"])
        if shape != 1:
            b.note(reads=[operand])
        lines.append(f"{mnemonic} {dest}, {operand}" if pattern == "cvtsi" else f"{mnemonic} {dest}, {src}, {operand}")
        written(dest)
    elif pattern == "tosi":
        gpr = b.dest(64 if choice & 16 else 32, spec["r1"])
        b.note(writes=[gpr])
        lines.append(f"{mnemonic} {gpr}, {memory(32) if shape == 1 else src}")
    elif pattern == "cmp":
        lines.append(f"{mnemonic} {src}, {memory(32) if shape == 1 else second}")
    elif pattern == "movlps":
        if shape == 2:
            lines.append(f"{mnemonic} {memory(64)}, {src}")
        else:
            lines.append(f"{mnemonic} {dest}, {memory(64)}")
            written(dest)
    elif pattern in ("Lsh", "Lbsh"):
        operand = second if pattern == "Lsh" and shape == 1 else f"{imm % 70 if pattern == 'Lsh' else imm % 20:#x}"
        lines.append(f"{mnemonic} {dest}, {operand}")
        written(dest)
    elif pattern == "movsd":
        lines.append([f"movsd {dest}, {second}", f"movsd {dest}, {memory(64)}", f"movsd {memory(64)}, {src}"][shape])
        if shape < 2:
            written(dest)
    elif pattern == "vmovsd":
        lines.append([f"vmovsd {dest_of(dest)}, {src}, {second}", f"vmovsd {dest_of(dest)}, {memory(64)}",
                      f"vmovsd {dest_of(memory(64), store=True)}, {src}"][shape])
        if shape < 2:
            written(dest)
    elif pattern == "pinsrw":  # a word from a GPR's low 16 bits or from memory
        operand = memory(16) if shape == 1 else b.src(32, spec["r2"])
        if shape != 1:
            b.note(reads=[operand])
        lines.append(f"pinsrw {dest}, {operand}, {imm:#x}" if mnemonic == "pinsrw" else
                     f"vpinsrw {dest}, {src}, {operand}, {imm:#x}")
        written(dest)
    elif pattern == "pextrw":  # to a GPR, zero-extended, or to a word of memory
        if shape == 2:
            lines.append(f"{mnemonic} {memory(16)}, {src}, {imm:#x}")
        else:
            gpr = b.dest(64 if choice & 16 else 32, spec["r1"])
            b.note(writes=[gpr])
            lines.append(f"{mnemonic} {gpr}, {src}, {imm:#x}")
    elif pattern == "tomask":  # each element's sign into a mask, stored to the slot
        target = f"k{1 + (choice >> 24) % 7}"
        lines += [f"{mnemonic} {target}, {src}", f"kmovq {memory(64)}, {target}"]
    elif pattern == "frommask":  # a mask from the slot into a vector
        source = f"k{1 + (choice >> 24) % 7}"
        lines += [f"kmovq {source}, {memory(64)}", f"{mnemonic} {dest}, {source}"]
        written(dest)
    elif pattern in ("gather", "scatter"):
        lines += _render_vsib(b, mnemonic, pattern, evex and (pattern == "scatter" or bool(choice & 4)), width, regs,
                              [n for n in pool if n < 16], choice, memory)
    elif pattern in ("V3", "V3-vex", "V3i", "V3i-vex"):
        operand = memory(width) if shape == 1 else second
        element = _broadcast_element(mnemonic) if evex and shape == 1 and choice & 64 else 0
        if element:  # an embedded broadcast: one element from the slot, repeated
            operand = memory(8 * element).replace(" PTR ", " BCST ")
        tail = f", {imm:#x}" if pattern.startswith("V3i") else ""
        lines.append(f"{mnemonic} {dest_of(dest)}, {src}, {operand}{tail}")
        written(dest)
    elif pattern in ("V2", "V2i", "V2i-vex", "V2i-permq"):
        operand = memory(width) if shape == 1 else src
        tail = "" if pattern == "V2" else f", {imm & 0xF:#x}" if mnemonic == "vroundps" else f", {imm:#x}"
        lines.append(f"{mnemonic} {dest_of(dest)}, {operand}{tail}")
        written(dest)
    elif pattern == "pcmp":
        operand = memory(width) if shape == 1 else second
        if evex and choice & 32:  # into a mask (EVEX), stored to the slot
            target = f"k{1 + (choice >> 24) % 7}"
            lines += [f"{mnemonic} {dest_of(target, store=True)}, {src}, {operand}", f"kmovq {memory(64)}, {target}"]
        else:  # into a vector (VEX: xmm0-15, at most 256 bits)
            w = min(width, 256)
            low = [n for n in pool if n < 16]
            dest, src = f"{PREFIX[w]}{low[r1 % len(low)]}", f"{PREFIX[w]}{low[r2 % len(low)]}"
            operand = memory(w) if shape == 1 else f"{PREFIX[w]}{low[r3 % len(low)]}"
            lines.append(f"{mnemonic} {dest}, {src}, {operand}")
            written(dest)
    elif pattern in ("fcmp", "icmp"):  # by a predicate: into a vector (SSE, VEX) or a mask stored to the slot
        scalar = mnemonic.endswith("ss")
        operand = memory(32 if scalar else width) if shape == 1 and (scalar or not mnemonic.startswith("cmp")) \
            else second
        if not mnemonic.startswith("v"):
            lines.append(f"{mnemonic} {dest}, {operand}, {imm % 8:#x}")
            written(dest)
        elif pattern == "icmp" or (evex and choice & 32):
            target = f"k{1 + (choice >> 24) % 7}"
            lines += [f"{mnemonic} {dest_of(target, store=True)}, {src}, {operand}, {imm:#x}",
                      f"kmovq {memory(64)}, {target}"]
        else:
            w = 128 if scalar else min(width, 256)
            low = [n for n in pool if n < 16]
            dest, src = f"{PREFIX[w]}{low[r1 % len(low)]}", f"{PREFIX[w]}{low[r2 % len(low)]}"
            operand = memory(32 if scalar else w) if shape == 1 else f"{PREFIX[w]}{low[r3 % len(low)]}"
            lines.append(f"{mnemonic} {dest}, {src}, {operand}, {imm:#x}")
            written(dest)
    elif pattern in ("Vsh", "Vbsh"):
        operand = f"{imm % 70 if pattern == 'Vsh' else imm % 20:#x}"
        if pattern == "Vsh" and shape == 1:
            operand = reg(r3, 128)
        source = memory(width) if pattern == "Vbsh" and shape == 1 and evex else src
        lines.append(f"{mnemonic} {dest_of(dest)}, {source}, {operand}")
        written(dest)
    elif pattern in ("ins", "ins-vex"):
        part = 256 if mnemonic == "vinserti64x4" else 128
        operand = memory(part) if shape == 1 else reg(r3, part)
        lines.append(f"{mnemonic} {dest_of(dest)}, {src}, {operand}, {imm & 3:#x}")
        written(dest)
    elif pattern in ("ext", "ext-vex"):
        target = memory(128) if shape == 2 else reg(r1, 128)
        lines.append(f"{mnemonic} {dest_of(target, store=shape == 2)}, {src}, {imm & 3:#x}")
        if shape != 2:
            written(target)
    elif pattern == "blendv":
        operand = memory(width) if shape == 1 else second
        lines.append(f"{mnemonic} {dest}, {src}, {operand}, {reg(r3 + 1)}")
        written(dest)
    elif pattern == "down":
        ratio = _DOWN_WIDTH.get(mnemonic, 2)
        narrow = width // ratio
        if shape == 2:
            target = dest_of(memory(narrow), store=True)
        else:
            target = dest_of(reg(r1, max(128, narrow)))
            written(target.split("{")[0])
        lines.append(f"{mnemonic} {target}, {src}" + (f", {imm & 7:#x}" if mnemonic == "vcvtps2ph" else ""))
    elif pattern == "ph2ps":  # half precision to single: the source half as wide
        operand = memory(width // 2) if shape == 1 else reg(r2, max(128, width // 2))
        lines.append(f"{mnemonic} {dest_of(dest)}, {operand}")
        written(dest)
    elif pattern == "widen8":
        operand = memory(width // 8) if shape == 1 else reg(r2, 128)
        lines.append(f"{mnemonic} {dest_of(dest)}, {operand}")
        written(dest)
    else:  # the opmask logic: sources from the slot, the result stored back
        k1, k2, k3 = (f"k{1 + (choice >> s) % 7}" for s in (20, 23, 26))
        lines += [f"kmovq {k2}, {memory(64)}", f"kmovq {k3}, QWORD PTR [{b.bases[0]}+{0x10 + (choice >> 29) % 0x40:#x}]"]
        if pattern == "ktest":
            lines.append(f"{mnemonic} {k2}, {k3}")
        else:
            operands = {"k3": f"{k1}, {k2}, {k3}", "k2": f"{k1}, {k2}", "kshift": f"{k1}, {k2}, {imm % 72:#x}"}[pattern]
            lines += [f"{mnemonic} {operands}", f"kmovq {memory(64)}, {k1}"]
    return lines, mnemonic


def _render_vsib(b, mnemonic: str, pattern: str, evex: bool, width: int, regs: list[int], low: list[int], choice: int,
                 memory: Callable[[int], str]) -> list[str]:
    """A gather or scatter through [base+index*scale+disp] in the slot: the index vector made from a pool register
    shifted right so that each element's offset stays within the slot's 64 bytes."""
    index_size = 64 if mnemonic.endswith(("qd", "qq", "qps", "qpd")) else 32
    size = 64 if mnemonic.endswith(("dq", "qq", "pd")) else 32
    count = (width if evex else min(width, 256)) // max(size, index_size)
    data, index = PREFIX[max(128, count * size)], PREFIX[max(128, count * index_size)]
    slots = 64 // (size // 8)
    shift = index_size - slots.bit_length() + 1
    pool = regs if evex else low
    d, i, m = (pool[(choice >> s) % len(pool)] for s in (36, 40, 44))
    if i == d:
        i = pool[(pool.index(d) + 1) % len(pool)]
    if m in (d, i):
        m = next(n for n in pool if n not in (d, i))
    address = memory(size)
    vsib = address[:-1] + f"+{index}{i}*{size // 8}]"
    shifter = "vpsrlq" if index_size == 64 else "vpsrld"
    lines = [f"{shifter} {index}{i}, {index}{m}, {shift:#x}"]
    b.vectors_written.add(i)
    k = f"k{1 + (choice >> 48) % 7}"
    if pattern == "scatter":
        return lines + [f"kmovq {k}, {memory(64)}", f"{mnemonic} {vsib}{{{k}}}, {data}{d}",
                        f"kmovq {memory(64)}, {k}"]
    b.vectors_written.add(d)
    if evex:
        return lines + [f"kmovq {k}, {memory(64)}", f"{mnemonic} {data}{d}{{{k}}}, {vsib}", f"kmovq {memory(64)}, {k}"]
    b.vectors_written.add(m)
    return lines + [f"{mnemonic} {data}{d}, {vsib}, {data}{m}"]
