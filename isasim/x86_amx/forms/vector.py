"""The SSE/AVX/AVX-512 forms around AMX kernels: one declaration per form (see semantics/vector*.py, a module per
family, for what they do): moves of every width and mask form, the zeroing idioms, broadcasts, GPR <-> xmm moves, the opmask
instructions, and the integer, BF16 and float arithmetic AMX code calls before and after the tiles.

Each form is its SDM syntax line, the iced-x86 ``Code`` rows it owns (the SDM's opcode table rows, whose
CPUID column says the features each needs: required_features), whether a memory operand must be aligned, and
its semantics function.  encoding/vector.py encodes and decodes them by those rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable, ClassVar

import iced_x86

from ...core.program import FormTable
from ..context import X86Context
from ..faults import GP
from ..operands import GPR_VIEWS, Imm, Mem, Reg, vector_register
from ..operands.masking import Masked, opmask_number, unmasked
from ..semantics import (vector, vector_arithmetic, vector_double, vector_gather, vector_integer, vector_masks,
                         vector_packed_integer, vector_single)
from ..semantics.vector import vl
from .iced_rows import IcedRowsForm


FEATURE = "SSE2"  # the lowest feature of the module; each form's rows say which one they need


@dataclass
class VectorForm(IcedRowsForm):
    syntax: str  # the SDM's instruction column, generic over widths
    mnemonic: str  # as objdump prints it
    semantics: Callable = field(repr=False)
    code_names: tuple[str, ...] = ()  # the iced Codes (SDM opcode rows) of the form
    aligned: bool = False  # a memory operand must be aligned to its size (#GP(0) otherwise)
    example: str = ""  # a line for the reference page
    feature: str = FEATURE
    codes: list[int] = field(default_factory=list)
    element_types: tuple[str, ...] = ()
    undefined_flags: int = 0

    row_table: ClassVar[dict] = {}  # iced Code -> its Row (this module's ROWS)

    @property
    def slug(self) -> str:
        """The reference page's name: the mnemonic ("{vex} vpdpbusd": vex-vpdpbusd)."""
        return self.mnemonic.replace("{vex} ", "vex-")

    def execute(self, cpu: X86Context, operands: tuple):
        for feature in required_features(self, operands):
            cpu.require_feature(feature, self.mnemonic)
        return self._checked_semantics(cpu, operands)

    def _checked_semantics(self, cpu: X86Context, operands: tuple):
        """The semantics after the alignment check (#GP) of a form that requires aligned memory (a masked
        aligned move checks it whatever the mask, as the SDM's EVEX alignment rule says)."""
        if self.aligned:
            for o in map(unmasked, operands):
                if isinstance(o, Mem) and cpu.effective_address(o) % o.size:
                    raise GP(f"{self.mnemonic}: the {o.size}-byte memory operand at "
                             f"{cpu.effective_address(o):#x} is not {o.size}-byte aligned")
        return self.semantics(cpu, *operands)

    def prepare(self, instruction):
        """The execute contract (isasim.core.isa; see AmxForm.prepare): ``bind(cpu)`` checks the CPU model's
        features once (the operands decide which: an EVEX form needs AVX-512)."""
        operands, next_address = instruction.operands, instruction.next_address
        features, mnemonic, checked_semantics = required_features(self, operands), self.mnemonic, self._checked_semantics

        def bind(cpu: X86Context):
            missing = [feature for feature in features if feature not in cpu.model.features]
            if missing:
                def unsupported() -> int:
                    cpu.require_feature(missing[0], mnemonic)  # raises #UD
                    return next_address

                return unsupported

            def run() -> int | None:
                checked_semantics(cpu, operands)
                return next_address

            return run

        return bind


# the semantics of the families declared below by name (semantics.vpaddd): the modules of semantics/ per family
semantics = SimpleNamespace(**{name: value for module in (vector, vector_arithmetic, vector_single, vector_packed_integer,
                                                          vector_masks) for name, value in vars(module).items()
                               if not name.startswith("__")})
FORMS = FormTable()
_CODE_NAMES = [name for name in vars(iced_x86.Code) if not name.startswith("_")]
_MMX_ROW = re.compile(r"(^|_)MM(M64|M32)?(_|$)")


def _rows_by_mnemonic() -> dict[str, list[str]]:
    """iced's Code names (other than MMX rows) by their mnemonic, the word after an optional VEX_/EVEX_,
    in iced's order; made once, as every rows_of call reads it (a scan per call cost a second at start-up)."""
    rows: dict[str, list[str]] = {}
    for name in _CODE_NAMES:
        if _MMX_ROW.search(name):
            continue
        words = name.split("_")
        if words[0] in ("VEX", "EVEX") and len(words) > 1:
            rows.setdefault(words[1], []).append(name)
        rows.setdefault(words[0], []).append(name)
    return rows


_ROWS_BY_MNEMONIC = _rows_by_mnemonic()


def rows_of(*mnemonics: str, vex: bool = True, legacy: bool = True) -> tuple[str, ...]:
    """The names of iced's 64-bit rows of these mnemonics (legacy SSE, VEX and EVEX; MMX rows left out)."""
    out = []
    for mnemonic in mnemonics:
        for name in _ROWS_BY_MNEMONIC.get(mnemonic, ()):
            if not re.match(rf"(VEX_|EVEX_)?{mnemonic}_", name):
                continue
            if (name.startswith("VEX_") and not vex) or (not name.startswith(("VEX_", "EVEX_")) and not legacy):
                continue
            out.append(name)
    return tuple(out)


def declare(semantics: Callable, syntax: str, *, codes: tuple[str, ...], aligned: bool = False,
            example: str = "") -> VectorForm:
    """Declare a vector instruction: its semantics, its SDM syntax line and its iced Code rows."""
    name = syntax.split()[0]
    form = VectorForm(syntax, name.lower(), semantics, codes, aligned, example)
    FORMS.add(form)
    return form


# ---------------------------------------------------------------------------
# The forms
# ---------------------------------------------------------------------------


declare(semantics.pxor, "PXOR xmm1, xmm2/m128", codes=("PXOR_XMM_XMMM128",), aligned=True)
declare(semantics.vpxor, "VPXOR xmm1, xmm2, xmm3/m128", codes=("VEX_VPXOR_XMM_XMM_XMMM128", "VEX_VPXOR_YMM_YMM_YMMM256"))
declare(semantics.movaps, "MOVAPS dest, src", codes=("MOVAPS_XMM_XMMM128", "MOVAPS_XMMM128_XMM"), aligned=True)
declare(semantics.movups, "MOVUPS dest, src", codes=("MOVUPS_XMM_XMMM128", "MOVUPS_XMMM128_XMM"))
declare(semantics.movdqa, "MOVDQA dest, src", codes=("MOVDQA_XMM_XMMM128", "MOVDQA_XMMM128_XMM"), aligned=True)
declare(semantics.vmovdqa, "VMOVDQA dest, src", codes=("VEX_VMOVDQA_XMM_XMMM128", "VEX_VMOVDQA_YMM_YMMM256",
                                         "VEX_VMOVDQA_XMMM128_XMM", "VEX_VMOVDQA_YMMM256_YMM"), aligned=True)
declare(semantics.vmovdqu8, "VMOVDQU8 dest {k1}{z}, src", codes=rows_of("VMOVDQU8"))
declare(semantics.vpbroadcastw, "VPBROADCASTW dest {k1}{z}, src", codes=rows_of("VPBROADCASTW"))
declare(semantics.vzeroupper, "VZEROUPPER", codes=("VEX_VZEROUPPER",))
# issue 27: the moves of every width and mask form compilers emit
declare(semantics.movdqu, "MOVDQU dest, src", codes=rows_of("MOVDQU", vex=False), example="movdqu xmm1, XMMWORD PTR [rdi+0x3]")
declare(semantics.vmovdqu, "VMOVDQU dest, src", codes=rows_of("VMOVDQU"), example="vmovdqu ymm1, YMMWORD PTR [rdi+0x3]")
declare(semantics.vmovdqa32, "VMOVDQA32 dest {k1}{z}, src", codes=rows_of("VMOVDQA32"), aligned=True,
        example="vmovdqa32 zmm1{k1}{z}, ZMMWORD PTR [rdi]")
declare(semantics.vmovdqa64, "VMOVDQA64 dest {k1}{z}, src", codes=rows_of("VMOVDQA64"), aligned=True,
        example="vmovdqa64 ZMMWORD PTR [rdi], zmm1")
declare(semantics.vmovdqu16, "VMOVDQU16 dest {k1}{z}, src", codes=rows_of("VMOVDQU16"),
        example="vmovdqu16 zmm1{k1}{z}, ZMMWORD PTR [rdi+0x2]")
declare(semantics.vmovdqu32, "VMOVDQU32 dest {k1}{z}, src", codes=rows_of("VMOVDQU32"),
        example="vmovdqu32 ZMMWORD PTR [rdi+0x4]{k1}, zmm1")
declare(semantics.vmovdqu64, "VMOVDQU64 dest {k1}{z}, src", codes=rows_of("VMOVDQU64"),
        example="vmovdqu64 zmm1, ZMMWORD PTR [rdi+0x8]")
declare(semantics.vmovups, "VMOVUPS dest {k1}{z}, src", codes=rows_of("VMOVUPS"),
        example="vmovups zmm1{k1}{z}, ZMMWORD PTR [rdi+0x4]")
declare(semantics.vmovaps, "VMOVAPS dest {k1}{z}, src", codes=rows_of("VMOVAPS"), aligned=True,
        example="vmovaps ymm1, YMMWORD PTR [rdi]")
declare(semantics.vmovupd, "VMOVUPD dest {k1}{z}, src", codes=rows_of("VMOVUPD"),
        example="vmovupd ZMMWORD PTR [rdi+0x8]{k1}, zmm1")
declare(semantics.vmovapd, "VMOVAPD dest {k1}{z}, src", codes=rows_of("VMOVAPD"), aligned=True,
        example="vmovapd xmm1, XMMWORD PTR [rdi]")
declare(semantics.movd, "MOVD dest, src", codes=rows_of("MOVD"), example="movd xmm1, eax")
declare(semantics.movq, "MOVQ dest, src", codes=rows_of("MOVQ"), example="movq rax, xmm1")
declare(semantics.vmovd, "VMOVD dest, src", codes=rows_of("VMOVD"), example="vmovd xmm1, DWORD PTR [rdi]")
declare(semantics.vmovq, "VMOVQ dest, src", codes=rows_of("VMOVQ"), example="vmovq xmm1, rax")
declare(semantics.vpxord, "VPXORD dest {k1}{z}, src1, src2", codes=rows_of("VPXORD"),
        example="vpxord zmm1, zmm1, zmm1")
declare(semantics.vpxorq, "VPXORQ dest {k1}{z}, src1, src2", codes=rows_of("VPXORQ"),
        example="vpxorq zmm1{k1}, zmm2, zmm3")
declare(semantics.vpternlogd, "VPTERNLOGD dest {k1}{z}, src2, src3, imm8", codes=rows_of("VPTERNLOGD"),
        example="vpternlogd zmm1, zmm1, zmm1, 0xff")
declare(semantics.vpternlogq, "VPTERNLOGQ dest {k1}{z}, src2, src3, imm8", codes=rows_of("VPTERNLOGQ"),
        example="vpternlogq zmm1, zmm2, zmm3, 0x96")
declare(semantics.vpbroadcastb, "VPBROADCASTB dest {k1}{z}, src", codes=rows_of("VPBROADCASTB"),
        example="vpbroadcastb zmm1, eax")
declare(semantics.vpbroadcastd, "VPBROADCASTD dest {k1}{z}, src", codes=rows_of("VPBROADCASTD"),
        example="vpbroadcastd zmm1{k1}{z}, DWORD PTR [rdi]")
declare(semantics.vpbroadcastq, "VPBROADCASTQ dest {k1}{z}, src", codes=rows_of("VPBROADCASTQ"),
        example="vpbroadcastq zmm1, rax")
declare(semantics.vbroadcastss, "VBROADCASTSS dest {k1}{z}, src", codes=rows_of("VBROADCASTSS"),
        example="vbroadcastss ymm1, DWORD PTR [rdi]")
for _bits, _suffix in ((8, "B"), (16, "W"), (32, "D"), (64, "Q")):
    declare(getattr(semantics, f"kmov{_suffix.lower()}"), f"KMOV{_suffix} dest, src", codes=rows_of(f"KMOV{_suffix}"),
            example=f"kmov{_suffix.lower()} k1, {'rax' if _bits == 64 else 'eax'}")
    declare(getattr(semantics, f"kortest{_suffix.lower()}"), f"KORTEST{_suffix} k1, k2",
            codes=rows_of(f"KORTEST{_suffix}"), example=f"kortest{_suffix.lower()} k1, k1")
    declare(getattr(semantics, f"kxor{_suffix.lower()}"), f"KXOR{_suffix} k1, k2, k3", codes=rows_of(f"KXOR{_suffix}"),
            example=f"kxor{_suffix.lower()} k1, k1, k1")

# issue 27: the integer, BF16 and fp32 arithmetic AMX code calls before and after the tiles
declare(semantics.vpaddd, "VPADDD dest {k1}{z}, src1, src2", codes=rows_of("VPADDD"), example="vpaddd zmm1, zmm2, zmm3")
declare(semantics.vpsubd, "VPSUBD dest {k1}{z}, src1, src2", codes=rows_of("VPSUBD"), example="vpsubd ymm1, ymm2, ymm3")
declare(semantics.vpmulld, "VPMULLD dest {k1}{z}, src1, src2", codes=rows_of("VPMULLD"),
        example="vpmulld zmm1{k1}, zmm2, zmm3")
declare(semantics.vpdpbusd, "VPDPBUSD dest {k1}{z}, src1, src2", codes=rows_of("VPDPBUSD", vex=False),
        example="vpdpbusd zmm1, zmm2, zmm3")
declare(semantics.vpermd, "VPERMD dest {k1}{z}, index, src", codes=rows_of("VPERMD"), example="vpermd zmm1, zmm2, zmm3")
declare(semantics.vpshufb, "VPSHUFB dest {k1}{z}, src1, src2", codes=rows_of("VPSHUFB"),
        example="vpshufb zmm1, zmm2, zmm3")
for _name in ("VPMOVZXBW", "VPMOVZXBD", "VPMOVZXWD", "VPMOVSXBW", "VPMOVSXBD", "VPMOVSXWD"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src", codes=rows_of(_name),
            example=f"{_name.lower()} zmm1, {'ymm2' if _name.endswith(('BW', 'WD')) else 'xmm2'}")
declare(semantics.vcvtdq2ps, "VCVTDQ2PS dest {k1}{z}, src", codes=rows_of("VCVTDQ2PS"), example="vcvtdq2ps zmm1, zmm2")
declare(semantics.vaddps, "VADDPS dest {k1}{z}, src1, src2", codes=rows_of("VADDPS"), example="vaddps zmm1, zmm2, zmm3")
declare(semantics.vmulps, "VMULPS dest {k1}{z}, src1, src2", codes=rows_of("VMULPS"), example="vmulps ymm1, ymm2, ymm3")
declare(semantics.vfmadd231ps, "VFMADD231PS dest {k1}{z}, src2, src3", codes=rows_of("VFMADD231PS"),
        example="vfmadd231ps zmm1, zmm2, zmm3")
declare(semantics.vcvtne2ps2bf16, "VCVTNE2PS2BF16 dest {k1}{z}, src1, src2", codes=rows_of("VCVTNE2PS2BF16"),
        example="vcvtne2ps2bf16 zmm1, zmm2, zmm3")
declare(semantics.vcvtneps2bf16, "VCVTNEPS2BF16 dest {k1}{z}, src", codes=rows_of("VCVTNEPS2BF16", vex=False),
        example="vcvtneps2bf16 ymm1, zmm2")

# issue 27: what the compiled kernels of tests/x86_amx/compiled showed besides
for _name, _example in (("VPAND", "vpand ymm1, ymm2, ymm3"), ("VPANDD", "vpandd zmm1, zmm2, zmm3"),
                        ("VPANDQ", "vpandq zmm1{k1}, zmm2, zmm3"), ("VPOR", "vpor ymm1, ymm2, ymm3"),
                        ("VPORD", "vpord zmm1, zmm2, zmm3"), ("VPORQ", "vporq zmm1, zmm2, zmm3"),
                        ("VXORPS", "vxorps xmm1, xmm1, xmm1"), ("VPMADDWD", "vpmaddwd zmm1, zmm2, zmm3"),
                        ("VPUNPCKLWD", "vpunpcklwd ymm1, ymm2, ymm3"), ("VPUNPCKHWD", "vpunpckhwd ymm1, ymm2, ymm3")):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src1, src2", codes=rows_of(_name), example=_example)
for _name, _example in (("VPSLLD", "vpslld zmm1, zmm2, 0x3"), ("VPSRLD", "vpsrld ymm1, ymm2, 0x8"),
                        ("VPSRAD", "vpsrad zmm1, zmm2, xmm3")):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src, count", codes=rows_of(_name),
            example=_example)
declare(semantics.vpshufd, "VPSHUFD dest {k1}{z}, src, imm8", codes=rows_of("VPSHUFD"), example="vpshufd zmm1, zmm2, 0x1b")
declare(semantics.vpextrd, "VPEXTRD r/m32, xmm, imm8", codes=rows_of("VPEXTRD"), example="vpextrd eax, xmm1, 0x2")
declare(semantics.vpextrq, "VPEXTRQ r/m64, xmm, imm8", codes=rows_of("VPEXTRQ"), example="vpextrq rax, xmm1, 0x1")
declare(semantics.vpinsrb, "VPINSRB xmm1, xmm2, r32/m8, imm8", codes=rows_of("VPINSRB"),
        example="vpinsrb xmm1, xmm2, BYTE PTR [rdi], 0x5")
declare(semantics.vpinsrd, "VPINSRD xmm1, xmm2, r/m32, imm8", codes=rows_of("VPINSRD"), example="vpinsrd xmm1, xmm2, eax, 0x1")
declare(semantics.vpinsrq, "VPINSRQ xmm1, xmm2, r/m64, imm8", codes=rows_of("VPINSRQ"), example="vpinsrq xmm1, xmm2, rax, 0x1")
declare(semantics.vextracti128, "VEXTRACTI128 xmm1/m128, ymm2, imm8", codes=rows_of("VEXTRACTI128"),
        example="vextracti128 xmm1, ymm2, 0x1")
declare(semantics.vextracti32x4, "VEXTRACTI32X4 dest {k1}{z}, src, imm8", codes=rows_of("VEXTRACTI32X4"),
        example="vextracti32x4 xmm1, zmm2, 0x3")
declare(semantics.vextracti64x4, "VEXTRACTI64X4 dest {k1}{z}, zmm, imm8", codes=rows_of("VEXTRACTI64X4"),
        example="vextracti64x4 ymm1, zmm2, 0x1")
declare(semantics.vbroadcasti128, "VBROADCASTI128 ymm1, m128", codes=rows_of("VBROADCASTI128"),
        example="vbroadcasti128 ymm1, XMMWORD PTR [rdi]")
declare(semantics.vbroadcasti64x4, "VBROADCASTI64X4 zmm1 {k1}{z}, m256", codes=rows_of("VBROADCASTI64X4"),
        example="vbroadcasti64x4 zmm1, YMMWORD PTR [rdi]")
declare(semantics.vpmovsxdq, "VPMOVSXDQ dest {k1}{z}, src", codes=rows_of("VPMOVSXDQ"), example="vpmovsxdq zmm1, ymm2")
declare(semantics.vpmovzxdq, "VPMOVZXDQ dest {k1}{z}, src", codes=rows_of("VPMOVZXDQ"), example="vpmovzxdq zmm1, ymm2")
declare(semantics.vpermt2w, "VPERMT2W dest {k1}{z}, index, table", codes=rows_of("VPERMT2W"),
        example="vpermt2w zmm1, zmm2, zmm3")
declare(semantics.vperm2i128, "VPERM2I128 ymm1, ymm2, ymm3/m256, imm8", codes=rows_of("VPERM2I128"),
        example="vperm2i128 ymm1, ymm2, ymm3, 0x21")


# issue 27: scalar single precision, SSE and AVX/AVX-512 (what float code beside the kernels compiles to)
declare(semantics.movss, "MOVSS dest, src", codes=rows_of("MOVSS"), example="movss xmm1, DWORD PTR [rdi]")
declare(semantics.vmovss, "VMOVSS dest {k1}{z}, [src1,] src", codes=rows_of("VMOVSS"),
        example="vmovss xmm1, xmm2, xmm3")
for _name in ("ADDSS", "SUBSS", "MULSS", "DIVSS", "MAXSS", "MINSS"):
    declare(getattr(semantics, _name.lower()), f"{_name} xmm1, xmm2/m32", codes=rows_of(_name),
            example=f"{_name.lower()} xmm1, DWORD PTR [rdi]")
    declare(getattr(semantics, "v" + _name.lower()), f"V{_name} xmm1 {{k1}}{{z}}, xmm2, xmm3/m32",
            codes=rows_of("V" + _name), example=f"v{_name.lower()} xmm1, xmm2, xmm3")
declare(semantics.cvtsi2ss, "CVTSI2SS xmm1, r/m32 (r/m64)", codes=rows_of("CVTSI2SS"), example="cvtsi2ss xmm1, eax")
declare(semantics.vcvtsi2ss, "VCVTSI2SS xmm1, xmm2, r/m32 (r/m64)", codes=rows_of("VCVTSI2SS"),
        example="vcvtsi2ss xmm1, xmm2, rax")
for _name in ("CVTTSS2SI", "CVTSS2SI"):
    declare(getattr(semantics, _name.lower()), f"{_name} r32 (r64), xmm1/m32", codes=rows_of(_name),
            example=f"{_name.lower()} eax, xmm1")
    declare(getattr(semantics, "v" + _name.lower()), f"V{_name} r32 (r64), xmm1/m32", codes=rows_of("V" + _name),
            example=f"v{_name.lower()} rax, DWORD PTR [rdi]")
for _name in ("UCOMISS", "COMISS", "VUCOMISS", "VCOMISS"):
    declare(getattr(semantics, _name.lower()), f"{_name} xmm1, xmm2/m32", codes=rows_of(_name),
            example=f"{_name.lower()} xmm1, xmm2")
for _order in ("132", "213", "231"):
    declare(getattr(semantics, f"vfmadd{_order}ss"), f"VFMADD{_order}SS xmm1 {{k1}}{{z}}, xmm2, xmm3/m32",
            codes=rows_of(f"VFMADD{_order}SS"), example=f"vfmadd{_order}ss xmm1, xmm2, DWORD PTR [rdi]")
declare(semantics.roundss, "ROUNDSS xmm1, xmm2/m32, imm8", codes=rows_of("ROUNDSS"), example="roundss xmm1, xmm2, 0xc")
declare(semantics.vroundss, "VROUNDSS xmm1, xmm2, xmm3/m32, imm8", codes=rows_of("VROUNDSS"),
        example="vroundss xmm1, xmm2, xmm3, 0x4")
declare(semantics.vrndscaless, "VRNDSCALESS xmm1 {k1}{z}, xmm2, xmm3/m32, imm8", codes=rows_of("VRNDSCALESS"),
        example="vrndscaless xmm1, xmm2, xmm3, 0x4")


# issue 27: packed single precision, SSE (128 bits, an m128 aligned) and AVX/AVX-512 (every width, masks)
for _name in ("ADDPS", "SUBPS", "MULPS", "DIVPS", "MAXPS", "MINPS", "ANDPS", "ORPS", "XORPS", "ANDNPS", "CVTDQ2PS",
              "CVTTPS2DQ", "CVTPS2DQ", "UNPCKLPS", "UNPCKHPS", "UNPCKLPD", "UNPCKHPD"):
    declare(getattr(semantics, _name.lower()), f"{_name} xmm1, xmm2/m128", codes=rows_of(_name), aligned=True,
            example=f"{_name.lower()} xmm1, xmm2")
for _name in ("VSUBPS", "VDIVPS", "VMAXPS", "VMINPS", "VANDPS", "VORPS", "VANDNPS", "VUNPCKLPS", "VUNPCKHPS",
              "VUNPCKLPD", "VUNPCKHPD", "VHADDPS"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src1, src2", codes=rows_of(_name),
            example=f"{_name.lower()} ymm1, ymm2, ymm3")
for _name in ("VCVTTPS2DQ", "VCVTPS2DQ"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src", codes=rows_of(_name),
            example=f"{_name.lower()} zmm1, zmm2")
for _order in ("132", "213"):
    declare(getattr(semantics, f"vfmadd{_order}ps"), f"VFMADD{_order}PS dest {{k1}}{{z}}, src2, src3",
            codes=rows_of(f"VFMADD{_order}PS"), example=f"vfmadd{_order}ps ymm1, ymm2, YMMWORD PTR [rdi]")
declare(semantics.haddps, "HADDPS xmm1, xmm2/m128", codes=rows_of("HADDPS"), aligned=True, example="haddps xmm1, xmm2")
declare(semantics.roundps, "ROUNDPS xmm1, xmm2/m128, imm8", codes=rows_of("ROUNDPS"), aligned=True,
        example="roundps xmm1, xmm2, 0x9")
declare(semantics.vroundps, "VROUNDPS dest, src, imm8", codes=rows_of("VROUNDPS"), example="vroundps ymm1, ymm2, 0x4")
declare(semantics.vrndscaleps, "VRNDSCALEPS dest {k1}{z}, src, imm8", codes=rows_of("VRNDSCALEPS"),
        example="vrndscaleps zmm1, zmm2, 0x4")
declare(semantics.shufps, "SHUFPS xmm1, xmm2/m128, imm8", codes=rows_of("SHUFPS"), aligned=True,
        example="shufps xmm1, xmm2, 0x4e")
declare(semantics.vshufps, "VSHUFPS dest {k1}{z}, src1, src2, imm8", codes=rows_of("VSHUFPS"),
        example="vshufps ymm1, ymm2, ymm3, 0x88")
declare(semantics.movhlps, "MOVHLPS xmm1, xmm2", codes=rows_of("MOVHLPS"), example="movhlps xmm1, xmm2")
declare(semantics.movlhps, "MOVLHPS xmm1, xmm2", codes=rows_of("MOVLHPS"), example="movlhps xmm1, xmm2")
declare(semantics.movlps, "MOVLPS dest, src", codes=rows_of("MOVLPS"), example="movlps QWORD PTR [rdi], xmm1")
declare(semantics.movhps, "MOVHPS dest, src", codes=rows_of("MOVHPS"), example="movhps xmm1, QWORD PTR [rdi]")
declare(semantics.vinsertf128, "VINSERTF128 ymm1, ymm2, xmm3/m128, imm8", codes=rows_of("VINSERTF128"),
        example="vinsertf128 ymm1, ymm2, xmm3, 0x1")
declare(semantics.vinserti128, "VINSERTI128 ymm1, ymm2, xmm3/m128, imm8", codes=rows_of("VINSERTI128"),
        example="vinserti128 ymm1, ymm2, xmm3, 0x1")
declare(semantics.vinserti32x4, "VINSERTI32X4 dest {k1}{z}, src1, xmm/m128, imm8", codes=rows_of("VINSERTI32X4"),
        example="vinserti32x4 zmm1, zmm2, xmm3, 0x3")
declare(semantics.vinserti64x4, "VINSERTI64X4 zmm1 {k1}{z}, zmm2, ymm3/m256, imm8", codes=rows_of("VINSERTI64X4"),
        example="vinserti64x4 zmm1, zmm2, ymm3, 0x1")
declare(semantics.vextractf128, "VEXTRACTF128 xmm1/m128, ymm2, imm8", codes=rows_of("VEXTRACTF128"),
        example="vextractf128 xmm1, ymm2, 0x1")
declare(semantics.vextractf32x4, "VEXTRACTF32X4 dest {k1}{z}, src, imm8", codes=rows_of("VEXTRACTF32X4"),
        example="vextractf32x4 xmm1, zmm2, 0x2")
declare(semantics.vextracti64x2, "VEXTRACTI64X2 dest {k1}{z}, src, imm8", codes=rows_of("VEXTRACTI64X2"),
        example="vextracti64x2 xmm1, ymm2, 0x1")
declare(semantics.vblendvps, "VBLENDVPS dest, src1, src2, selector", codes=rows_of("VBLENDVPS"),
        example="vblendvps ymm1, ymm2, ymm3, ymm4")
declare(semantics.vpblendvb, "VPBLENDVB dest, src1, src2, selector", codes=rows_of("VPBLENDVB"),
        example="vpblendvb ymm1, ymm2, ymm3, ymm4")
for _name in ("VBLENDMPS", "VPBLENDMB", "VPBLENDMD"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src1, src2", codes=rows_of(_name),
            example=f"{_name.lower()} zmm1{{k1}}, zmm2, zmm3")


# issue 27: packed integers, SSE2 (what the auto-vectoriser emits at the x86-64 baseline: 128 bits kept above, an
# m128 aligned) and the VEX/EVEX forms beside them
for _name in ("PADDB", "PADDW", "PADDD", "PADDQ", "PSUBB", "PSUBW", "PSUBD", "PSUBQ", "PAND", "POR", "PANDN",
              "PMULLW", "PMULLD", "PMADDWD", "PMINSD", "PMAXSD", "PMINUB", "PMAXUB", "PAVGB", "PCMPEQB", "PCMPEQW",
              "PCMPEQD", "PCMPGTB", "PCMPGTW", "PCMPGTD", "PUNPCKLBW", "PUNPCKHBW", "PUNPCKLWD", "PUNPCKHWD",
              "PUNPCKLDQ", "PUNPCKHDQ", "PUNPCKLQDQ", "PUNPCKHQDQ", "PACKSSWB", "PACKSSDW", "PACKUSWB", "PACKUSDW",
              "PHADDD", "PSHUFB"):
    declare(getattr(semantics, _name.lower()), f"{_name} xmm1, xmm2/m128", codes=rows_of(_name), aligned=True,
            example=f"{_name.lower()} xmm1, xmm2")
for _name in ("PSLLW", "PSLLD", "PSLLQ", "PSRLW", "PSRLD", "PSRLQ", "PSRAW", "PSRAD"):
    declare(getattr(semantics, _name.lower()), f"{_name} xmm1, imm8 (xmm2/m128)", codes=rows_of(_name), aligned=True,
            example=f"{_name.lower()} xmm1, 0x3")
for _name in ("PSLLDQ", "PSRLDQ"):
    declare(getattr(semantics, _name.lower()), f"{_name} xmm1, imm8", codes=rows_of(_name),
            example=f"{_name.lower()} xmm1, 0x8")
declare(semantics.pshufd, "PSHUFD xmm1, xmm2/m128, imm8", codes=rows_of("PSHUFD"), aligned=True,
        example="pshufd xmm1, xmm2, 0x1b")
for _name in ("VPADDB", "VPADDW", "VPADDQ", "VPSUBB", "VPSUBW", "VPSUBQ", "VPANDN", "VPMULLW", "VPMINSD", "VPMAXSD",
              "VPMINUB", "VPMAXUB", "VPAVGB", "VPCMPEQB", "VPCMPEQW", "VPCMPEQD", "VPCMPGTB", "VPCMPGTW", "VPCMPGTD",
              "VPUNPCKLBW", "VPUNPCKHBW", "VPUNPCKLDQ", "VPUNPCKHDQ", "VPUNPCKLQDQ", "VPUNPCKHQDQ", "VPACKSSWB",
              "VPACKSSDW", "VPACKUSWB", "VPACKUSDW", "VPHADDD"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src1, src2", codes=rows_of(_name),
            example=f"{_name.lower()} ymm1, ymm2, ymm3")
for _name in ("VPSLLW", "VPSLLQ", "VPSRLW", "VPSRLQ", "VPSRAW"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src, count", codes=rows_of(_name),
            example=f"{_name.lower()} zmm1, zmm2, 0x3")
for _name in ("VPSLLDQ", "VPSRLDQ"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest, src, imm8", codes=rows_of(_name),
            example=f"{_name.lower()} ymm1, ymm2, 0x4")
declare(semantics.vpermq, "VPERMQ dest {k1}{z}, src, imm8 (index, src)", codes=rows_of("VPERMQ"),
        example="vpermq ymm1, ymm2, 0xd8")
for _name in ("VPERMT2B", "VPERMT2D"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, index, table", codes=rows_of(_name),
            example=f"{_name.lower()} zmm1, zmm2, zmm3")
for _name in ("VPERMI2B", "VPERMI2W"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, table1, table2", codes=rows_of(_name),
            example=f"{_name.lower()} zmm1, zmm2, zmm3")
for _name in ("VALIGND", "VALIGNQ", "VSHUFI64X2", "VSHUFI32X4"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src1, src2, imm8", codes=rows_of(_name),
            example=f"{_name.lower()} zmm1, zmm2, zmm3, 0x1")
for _name in ("VPMOVDB", "VPMOVSDB", "VPMOVUSDB", "VPMOVDW", "VPMOVSDW", "VPMOVUSDW", "VPMOVQD", "VPMOVWB",
              "VPMOVSWB", "VPMOVUSWB"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src", codes=rows_of(_name),
            example=f"{_name.lower()} {'xmm1' if _name.endswith('DB') else 'ymm1'}, zmm2")
for _name in ("VPMOVSXBQ", "VPMOVZXBQ"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src", codes=rows_of(_name),
            example=f"{_name.lower()} zmm1, QWORD PTR [rdi]")


# issue 27: the opmask logic compilers emit to build and combine masks (tails, compares)
for _stem, _syntax in (("KAND", "k1, k2, k3"), ("KANDN", "k1, k2, k3"), ("KOR", "k1, k2, k3"), ("KXNOR", "k1, k2, k3"),
                       ("KADD", "k1, k2, k3"), ("KNOT", "k1, k2"), ("KSHIFTL", "k1, k2, imm8"),
                       ("KSHIFTR", "k1, k2, imm8"), ("KTEST", "k1, k2")):
    for _suffix in "BWDQ":
        _example = {"k1, k2, k3": "k1, k2, k3", "k1, k2": "k1, k2", "k1, k2, imm8": "k1, k2, 0x4"}[_syntax]
        declare(getattr(semantics, f"{_stem}{_suffix}".lower()), f"{_stem}{_suffix} {_syntax}",
                codes=rows_of(f"{_stem}{_suffix}"), example=f"{_stem.lower()}{_suffix.lower()} {_example}")
for _name in ("KUNPCKBW", "KUNPCKWD", "KUNPCKDQ"):
    declare(getattr(semantics, _name.lower()), f"{_name} k1, k2, k3", codes=rows_of(_name),
            example=f"{_name.lower()} k1, k2, k3")


# issue 27: compares with a predicate; objdump prints the predicate in the mnemonic (vcmpltps ymm0,ymm1,ymm2 is
# VCMPPS with imm8 = 1), and the assembler reads those names (PSEUDO_OPS)
@dataclass
class CompareForm(VectorForm):
    stem: str = ""  # the mnemonic before the predicate: "vcmp", "vpcmp"
    suffix: str = ""  # after it: "ps", "ss", "ud"
    predicates: tuple[str, ...] = ()  # the predicate names by imm8
    printed_with_imm: frozenset = frozenset()  # predicates objdump names but GNU as reads as another instruction

    def format(self, operands: tuple) -> str:
        imm = operands[-1] if operands and isinstance(operands[-1], Imm) else None
        if imm is None or not 0 <= imm.value < len(self.predicates) or imm.value in self.printed_with_imm:
            return super().format(operands)
        name = f"{self.stem}{self.predicates[imm.value]}{self.suffix}"
        return super().format(operands[:-1]).replace(self.mnemonic, name, 1)


PSEUDO_OPS: dict[str, tuple[str, int]] = {}  # vcmpltps -> ("vcmpps", 1)


def declare_compare(semantics_function: Callable, syntax: str, stem: str, suffix: str, predicates: tuple[str, ...],
                    *, aligned: bool = False, example: str = "", printed_with_imm: frozenset = frozenset()) -> None:
    name = syntax.split()[0]
    form = CompareForm(syntax, name.lower(), semantics_function, rows_of(name), aligned, example, stem=stem,
                       suffix=suffix, predicates=predicates, printed_with_imm=printed_with_imm)
    FORMS.add(form)
    for value, predicate in enumerate(predicates):
        if value not in printed_with_imm:
            PSEUDO_OPS[f"{stem}{predicate}{suffix}"] = (form.mnemonic, value)


declare_compare(semantics.cmpps, "CMPPS xmm1, xmm2/m128, imm8", "cmp", "ps", semantics.FP_PREDICATES[:8],
                aligned=True, example="cmpps xmm1, xmm2, 0x1")
declare_compare(semantics.cmpss, "CMPSS xmm1, xmm2/m32, imm8", "cmp", "ss", semantics.FP_PREDICATES[:8],
                example="cmpss xmm1, xmm2, 0x0")
declare_compare(semantics.vcmpps, "VCMPPS dest {k2}, src1, src2, imm8", "vcmp", "ps", semantics.FP_PREDICATES,
                example="vcmpps ymm1, ymm2, ymm3, 0x1")
declare_compare(semantics.vcmpss, "VCMPSS dest {k2}, src1, src2, imm8", "vcmp", "ss", semantics.FP_PREDICATES,
                example="vcmpss xmm1, xmm2, xmm3, 0x0")
for _suffix, _feature in (("b", 0), ("ub", 0), ("w", 0), ("uw", 0), ("d", 0), ("ud", 0), ("q", 0), ("uq", 0)):
    # VPCMPEQx/VPCMPGTx are instructions of their own: GNU as reads vpcmpeqd as VPCMPEQD, so a VPCMPD with imm8 0
    # prints as vpcmpd ...,0x0 (objdump names it vpcmpeqd), and predicates 3 and 7 print with their imm8 as
    # objdump prints them
    declare_compare(getattr(semantics, f"vpcmp{_suffix}"), f"VPCMP{_suffix.upper()} k1 {{k2}}, src1, src2, imm8",
                    "vpcmp", _suffix, semantics.INTEGER_PREDICATES,
                    example=f"vpcmp{_suffix} k1, zmm2, zmm3, 0x2",
                    printed_with_imm=frozenset({3, 7} | ({0} if not _suffix.startswith("u") else set())))


# issue 27: the VNNI family, EVEX, and its VEX (AVX-VNNI) encodings, which GNU as and objdump write with the {vex}
# pseudo-prefix (plain vpdpbusd ymm0,ymm1,ymm2 is the EVEX form): a form of their own, "{vex} vpdpbusd"
for _name in ("VPDPBUSDS", "VPDPWSSD", "VPDPWSSDS"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src1, src2", codes=rows_of(_name, vex=False),
            example=f"{_name.lower()} zmm1, zmm2, zmm3")
for _name in ("VPDPBUSD", "VPDPBUSDS", "VPDPWSSD", "VPDPWSSDS"):
    FORMS.add(VectorForm(f"{{vex}} {_name} xmm1, xmm2, xmm3/m128 (ymm)", f"{{vex}} {_name.lower()}",
                         getattr(semantics, _name.lower()), tuple(c for c in rows_of(_name) if c.startswith("VEX_")),
                         example=f"{{vex}} {_name.lower()} ymm1, ymm2, ymm3"))


# issue 27: half precision, F16C and AVX-512 (AMX-FP16 kernels convert with them before and after the tiles)
declare(semantics.vcvtph2ps, "VCVTPH2PS dest {k1}{z}, src", codes=rows_of("VCVTPH2PS"), example="vcvtph2ps zmm1, ymm2")
declare(semantics.vcvtps2ph, "VCVTPS2PH dest {k1}{z}, src, imm8", codes=rows_of("VCVTPS2PH"),
        example="vcvtps2ph ymm1, zmm2, 0x4")


# issue 27, round 2: what vectorised loops still needed (semantics/vector_integer.py, vector_double.py)
for _name in ("PMULUDQ", "PMULDQ", "PSHUFLW", "PSHUFHW", "PBLENDW"):
    _operands = "xmm1, xmm2/m128, imm8" if _name.startswith(("PSHUF", "PBLEND")) else "xmm1, xmm2/m128"
    declare(getattr(vector_integer, _name.lower()), f"{_name} {_operands}", codes=rows_of(_name), aligned=True,
            example=f"{_name.lower()} xmm1, xmm2" + (", 0x1b" if _operands.endswith("imm8") else ""))
for _name in ("VPMULUDQ", "VPMULDQ", "VPMULLQ", "VPERMB", "VPERMW"):
    declare(getattr(vector_integer, _name.lower()), f"{_name} dest {{k1}}{{z}}, src1, src2", codes=rows_of(_name),
            example=f"{_name.lower()} zmm1, zmm2, zmm3")
for _name in ("VPSHUFLW", "VPSHUFHW"):
    declare(getattr(vector_integer, _name.lower()), f"{_name} dest {{k1}}{{z}}, src, imm8", codes=rows_of(_name),
            example=f"{_name.lower()} ymm1, ymm2, 0x1b")
for _name in ("PMINSB", "PMAXSB", "PMINSW", "PMAXSW", "PMINUW", "PMAXUW", "PMINUD", "PMAXUD"):
    declare(getattr(semantics, _name.lower()), f"{_name} xmm1, xmm2/m128", codes=rows_of(_name), aligned=True,
            example=f"{_name.lower()} xmm1, xmm2")
for _name in ("VPMINSB", "VPMAXSB", "VPMINSW", "VPMAXSW", "VPMINUW", "VPMAXUW", "VPMINUD", "VPMAXUD", "VPMINSQ",
              "VPMAXSQ", "VPMINUQ", "VPMAXUQ"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src1, src2", codes=rows_of(_name),
            example=f"{_name.lower()} zmm1, zmm2, zmm3")
for _name in ("PMULHW", "PMULHUW"):
    declare(getattr(vector_integer, _name.lower()), f"{_name} xmm1, xmm2/m128", codes=rows_of(_name), aligned=True,
            example=f"{_name.lower()} xmm1, xmm2")
    declare(getattr(vector_integer, "v" + _name.lower()), f"V{_name} dest {{k1}}{{z}}, src1, src2",
            codes=rows_of("V" + _name), example=f"v{_name.lower()} zmm1, zmm2, zmm3")
for _name in ("PABSB", "PABSW", "PABSD"):
    declare(getattr(vector_integer, _name.lower()), f"{_name} xmm1, xmm2/m128", codes=rows_of(_name), aligned=True,
            example=f"{_name.lower()} xmm1, xmm2")
for _name in ("VPABSB", "VPABSW", "VPABSD", "VPABSQ"):
    declare(getattr(vector_integer, _name.lower()), f"{_name} dest {{k1}}{{z}}, src", codes=rows_of(_name),
            example=f"{_name.lower()} ymm1, ymm2")
declare(semantics.vcvtusi2ss, "VCVTUSI2SS xmm1, xmm2, r/m32 (r/m64)", codes=rows_of("VCVTUSI2SS"),
        example="vcvtusi2ss xmm1, xmm2, rax")
declare(vector_integer.pinsrw, "PINSRW xmm1, r32/m16, imm8", codes=rows_of("PINSRW"), example="pinsrw xmm1, eax, 0x3")
declare(vector_integer.vpinsrw, "VPINSRW xmm1, xmm2, r32/m16, imm8", codes=rows_of("VPINSRW"),
        example="vpinsrw xmm1, xmm2, WORD PTR [rdi], 0x5")
declare(vector_integer.pextrw, "PEXTRW r32/m16, xmm, imm8", codes=rows_of("PEXTRW"), example="pextrw eax, xmm1, 0x3")
declare(vector_integer.vpextrw, "VPEXTRW r32/m16, xmm, imm8", codes=rows_of("VPEXTRW"),
        example="vpextrw eax, xmm1, 0x7")
for _name in ("VPBLENDW", "VPBLENDD"):
    declare(getattr(vector_integer, _name.lower()), f"{_name} dest, src1, src2, imm8", codes=rows_of(_name),
            example=f"{_name.lower()} ymm1, ymm2, ymm3, 0x5a")
for _size in "BWDQ":
    declare(getattr(vector_integer, f"vpmov{_size.lower()}2m"), f"VPMOV{_size}2M k1, src",
            codes=rows_of(f"VPMOV{_size}2M"), example=f"vpmov{_size.lower()}2m k1, zmm2")
    declare(getattr(vector_integer, f"vpmovm2{_size.lower()}"), f"VPMOVM2{_size} dest, k1",
            codes=rows_of(f"VPMOVM2{_size}"), example=f"vpmovm2{_size.lower()} zmm1, k2")
for _name in ("VPMOVQB", "VPMOVSQB", "VPMOVUSQB", "VPMOVQW", "VPMOVSQW", "VPMOVUSQW", "VPMOVSQD", "VPMOVUSQD"):
    declare(getattr(semantics, _name.lower()), f"{_name} dest {{k1}}{{z}}, src", codes=rows_of(_name),
            example=f"{_name.lower()} {'ymm1' if _name.endswith('QD') else 'xmm1'}, zmm2")
declare(vector_double.movsd, "MOVSD dest, src", codes=("MOVSD_XMM_XMMM64", "MOVSD_XMMM64_XMM"),
        example="movsd xmm1, QWORD PTR [rdi]")
declare(vector_double.vmovsd, "VMOVSD dest {k1}{z}, [src1,] src", codes=rows_of("VMOVSD"),
        example="vmovsd xmm1, xmm2, xmm3")
declare(vector_double.movapd, "MOVAPD dest, src", codes=rows_of("MOVAPD"), aligned=True,
        example="movapd xmm1, XMMWORD PTR [rdi]")
declare(vector_double.movupd, "MOVUPD dest, src", codes=rows_of("MOVUPD"), example="movupd XMMWORD PTR [rdi], xmm1")

# issue 27, round 2: gathers and scatters through a VSIB operand, [rax+zmm1*4] (semantics/vector_gather.py)
for _name, _example in (("VPGATHERDD", "vpgatherdd ymm1, DWORD PTR [rdi+ymm2*4], ymm3"),
                        ("VPGATHERDQ", "vpgatherdq zmm1{k1}, QWORD PTR [rdi+ymm2*8]"),
                        ("VPGATHERQD", "vpgatherqd xmm1, DWORD PTR [rdi+ymm2*4], xmm3"),
                        ("VPGATHERQQ", "vpgatherqq zmm1{k1}, QWORD PTR [rdi+zmm2*8]"),
                        ("VGATHERDPS", "vgatherdps zmm1{k1}, DWORD PTR [rdi+zmm2*4]"),
                        ("VGATHERDPD", "vgatherdpd ymm1, QWORD PTR [rdi+xmm2*8], ymm3"),
                        ("VGATHERQPS", "vgatherqps ymm1{k1}, DWORD PTR [rdi+zmm2*4]"),
                        ("VGATHERQPD", "vgatherqpd zmm1{k1}, QWORD PTR [rdi+zmm2*8]")):
    declare(getattr(vector_gather, _name.lower()), f"{_name} dest {{k1}}, vsib [, mask]", codes=rows_of(_name),
            example=_example)
for _name, _example in (("VPSCATTERDD", "vpscatterdd DWORD PTR [rax+ymm1*4]{k2}, ymm0"),
                        ("VPSCATTERDQ", "vpscatterdq QWORD PTR [rax+ymm1*8]{k2}, zmm0"),
                        ("VPSCATTERQD", "vpscatterqd DWORD PTR [rax+zmm1*4]{k2}, ymm0"),
                        ("VPSCATTERQQ", "vpscatterqq QWORD PTR [rax+zmm1*8]{k2}, zmm0"),
                        ("VSCATTERDPS", "vscatterdps DWORD PTR [rax+zmm1*4]{k2}, zmm0"),
                        ("VSCATTERDPD", "vscatterdpd QWORD PTR [rax+ymm1*8]{k2}, zmm0"),
                        ("VSCATTERQPS", "vscatterqps DWORD PTR [rax+zmm1*4]{k2}, ymm0"),
                        ("VSCATTERQPD", "vscatterqpd QWORD PTR [rax+zmm1*8]{k2}, zmm0")):
    declare(getattr(vector_gather, _name.lower()), f"{_name} vsib {{k1}}, src", codes=rows_of(_name),
            example=_example)


def is_legacy(form: VectorForm) -> bool:
    return not form.mnemonic.startswith(("v", "k", "{vex}"))


def required_features(form: VectorForm, operands: tuple) -> tuple[str, ...]:
    """The CPUID features these operands' encoding of ``form`` needs (SDM: the CPUID column of the row GNU as
    encodes them with: the VEX row where one takes them, else the EVEX row)."""
    row = row_for(form, operands)
    return row.features if row is not None else ()


# ---------------------------------------------------------------------------
# The iced-x86 opcode rows of each form
# ---------------------------------------------------------------------------


OK = iced_x86.OpCodeOperandKind
VECTOR_REGISTER_KINDS = {OK.XMM_REG: ("xmm", 128), OK.YMM_REG: ("ymm", 256), OK.ZMM_REG: ("zmm", 512),
                         OK.XMM_VVVV: ("xmm", 128), OK.YMM_VVVV: ("ymm", 256), OK.ZMM_VVVV: ("zmm", 512),
                         OK.XMM_RM: ("xmm", 128), OK.YMM_RM: ("ymm", 256), OK.ZMM_RM: ("zmm", 512),
                         OK.XMM_IS4: ("xmm", 128), OK.YMM_IS4: ("ymm", 256)}  # IS4: a register in imm8[7:4]
VECTOR_OR_MEMORY_KINDS = {OK.XMM_OR_MEM: ("xmm", 128), OK.YMM_OR_MEM: ("ymm", 256), OK.ZMM_OR_MEM: ("zmm", 512)}
GPR_REGISTER_KINDS = {OK.R32_RM: 32, OK.R64_RM: 64, OK.R32_REG: 32, OK.R64_REG: 64}
GPR_OR_MEMORY_KINDS = {OK.R32_OR_MEM: 32, OK.R64_OR_MEM: 64}
OPMASK_KINDS = {OK.K_REG, OK.K_RM, OK.K_VVVV}
OPMASK_OR_MEMORY_KINDS = {OK.K_OR_MEM}
IMMEDIATE_KINDS = {OK.IMM8: 8}
# VSIB: memory addressed through a vector of indices, [rax+zmm1*4] (gathers, scatters): the index register's kind
VSIB_KINDS = {OK.MEM_VSIB32X: "xmm", OK.MEM_VSIB32Y: "ymm", OK.MEM_VSIB32Z: "zmm", OK.MEM_VSIB64X: "xmm",
              OK.MEM_VSIB64Y: "ymm", OK.MEM_VSIB64Z: "zmm"}
# iced's CPUID feature names, as the CPU models (config.py) spell them
_FEATURE_NAMES = {v: k for k, v in vars(iced_x86.CpuidFeature).items() if not k.startswith("_")}


@dataclass(frozen=True)
class Row:
    code: int
    kinds: tuple[int, ...]
    op_code_string: str
    instruction_string: str
    memory_bytes: int  # the size of the row's memory operand (m32 for vpbroadcastd), 0 if none
    evex: bool
    features: tuple[str, ...]  # the row's CPUID column
    can_mask: bool  # {k1}
    can_zero: bool  # {z}
    broadcast: bool  # an m32bcst/m64bcst row: its memory operand may be one element, broadcast
    element_bytes: int = 0  # the size of that element (4 for m32bcst)


ROWS: dict[int, Row] = VectorForm.row_table
CODE_FORMS: dict[int, VectorForm] = {}


def matches(row: Row, operands: tuple) -> bool:
    """Whether ``operands`` (register names, memory with a size or none, immediates, a mask on the first) are
    what ``row`` takes."""
    if len(row.kinds) != len(operands):
        return False
    if not row.evex and any(isinstance(o, Masked) or (isinstance(o, Reg) and vector_register(o.name)
                                                      and vector_register(o.name).number >= 16) for o in operands):
        return False  # xmm16-31 and masks exist only in EVEX encodings
    if not row.evex and any(isinstance(o, Mem) and vsib_index(o) and vsib_index(o).number >= 16 for o in operands):
        return False
    if row.evex and any(k in VSIB_KINDS for k in row.kinds) and not (operands and isinstance(operands[0], Masked)):
        return False  # an EVEX gather or scatter needs a write mask (k1-k7), which it clears
    for position, (kind, op) in enumerate(zip(row.kinds, operands)):
        if isinstance(op, Masked):
            if position or not row.can_mask or (op.zeroing and (not row.can_zero or isinstance(op.operand, Mem))):
                return False
            op = op.operand
        if isinstance(op, Mem) and op.broadcast and (not row.element_bytes or op.size not in (None, row.element_bytes)):
            return False  # embedded broadcast: a bcst row, and one element's size
        if isinstance(op, Mem) and not op.broadcast and op.size not in (None, row.memory_bytes):
            return False
        if isinstance(op, Mem) and (kind in VSIB_KINDS) != bool(vsib_index(op)):
            return False  # a vector index only in a VSIB operand, and a VSIB operand only with one
        if kind in VSIB_KINDS:
            if not (isinstance(op, Mem) and vsib_index(op) and op.index.startswith(VSIB_KINDS[kind])):
                return False
            continue
        if kind in VECTOR_REGISTER_KINDS:
            ok = isinstance(op, Reg) and op.name.startswith(VECTOR_REGISTER_KINDS[kind][0])
        elif kind in VECTOR_OR_MEMORY_KINDS:
            ok = isinstance(op, Mem) or (isinstance(op, Reg) and op.name.startswith(VECTOR_OR_MEMORY_KINDS[kind][0]))
        elif kind in GPR_REGISTER_KINDS or kind in GPR_OR_MEMORY_KINDS:
            bits = GPR_REGISTER_KINDS.get(kind) or GPR_OR_MEMORY_KINDS[kind]
            ok = (isinstance(op, Reg) and op.name in GPR_VIEWS and GPR_VIEWS[op.name].bits == bits
                  and GPR_VIEWS[op.name].shift == 0) or (isinstance(op, Mem) and kind in GPR_OR_MEMORY_KINDS)
        elif kind in OPMASK_KINDS or kind in OPMASK_OR_MEMORY_KINDS:
            ok = (isinstance(op, Reg) and opmask_number(op.name) is not None) or (
                isinstance(op, Mem) and kind in OPMASK_OR_MEMORY_KINDS)
        elif kind == OK.MEM:
            ok = isinstance(op, Mem)
        elif kind in IMMEDIATE_KINDS:
            ok = isinstance(op, Imm) and -(1 << 7) <= op.value < (1 << 8)
        else:
            ok = False
        if not ok:
            return False
    return True


def vsib_index(mem: Mem):
    """The vector register a VSIB operand's index is ([rax+zmm1*4]: zmm1), None for an ordinary address."""
    return vector_register(mem.index) if mem.index else None


def row_for(form: VectorForm, operands: tuple) -> Row | None:
    """The row GNU as encodes ``operands`` of ``form`` with: a legacy or VEX row before an EVEX one."""
    fitting = [ROWS[c] for c in form.codes if matches(ROWS[c], operands)]
    return min(fitting, key=lambda r: r.evex) if fitting else None


def _row(code: int) -> Row:
    info = iced_x86.OpCodeInfo(code)
    kinds = tuple(info.op_kind(i) for i in range(info.op_count))
    probe = iced_x86.Instruction()
    probe.code = code
    features = tuple(_FEATURE_NAMES[f] for f in probe.cpuid_features())
    memory = iced_x86.MemorySizeInfo(info.memory_size).size if info.memory_size else 0
    element = iced_x86.MemorySizeInfo(info.broadcast_memory_size).size if info.can_broadcast else 0
    first = VECTOR_REGISTER_KINDS.get(kinds[0], (None, 0))[1] if kinds else 0
    if first and first != 8 * memory:  # a narrowing conversion (VCVTNEPS2BF16): objdump adds {1toN}; not taken
        element = 0
    return Row(code, kinds, info.op_code_string, info.instruction_string, memory,
               info.op_code_string.startswith("EVEX"), features, info.can_use_op_mask_register,
               info.can_use_zeroing_masking, info.can_broadcast, element)


def _build_tables() -> None:
    for form in FORMS:
        for name in form.code_names:
            code = getattr(iced_x86.Code, name)
            ROWS[code] = _row(code)
            form.codes.append(code)
            CODE_FORMS[code] = form


_build_tables()
MNEMONICS: frozenset[str] = frozenset(f.mnemonic for f in FORMS) | frozenset(PSEUDO_OPS)
