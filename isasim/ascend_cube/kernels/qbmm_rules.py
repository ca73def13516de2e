"""Which problems the seed's QBMM Cube kernel takes, and the Fixpipe mode each one selects.

The kernel (CANN ``kernel_qbmm_cube.h`` with ``BlockMmadA8W8FixpipeQuant``, the 950's arch35
path) multiplies on the cube and dequantises on the way out through the Fixpipe, with no
vector epilogue.  So a problem fits when every step has a cube or Fixpipe instruction:

- Mmad multiplies int8 x int8 -> int32, fp8 x fp8 (e4m3fn / e5m2, mixed) -> float32 or
  hifloat8 x hifloat8 -> float32.
- The bias is added in L0C through the bias table, so it has L0C's type: int32 for int8
  inputs, float32 for fp8 / hifloat8 (the seed's "(x1 @ x2 + bias) * scale").
- C = int32 is Fixpipe NoQuant: any scale passed is ignored (the seed says so).
- Every other C is dequantised by one quant word, the same for all elements (per tensor:
  SetFixpipePreQuantFlag) or one per column (per channel: through the fixpipe buffer).

Everything else is refused with the reason: a per-token A scale, a per-channel float scale, A
per-tensor with B per-channel, a half/bf16 bias, or no scale for a non-int32 C need a vector
step (``qbmm_mix_*`` kernels), and the 910B has no such kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from .qbmm_case import CaseError

FP8 = ("float8_e4m3fn", "float8_e5m2")
ATOMIC_TYPES = ("float32",)  # the kernel's SetAtomicAdd<float>()

# (L0C type, C type) -> the Fixpipe QuantMode_t of the per-tensor (scalar) form; the per-channel
# form is the V-prefixed one.  The int32-L0C modes take int32 sums, the F32 ones float32 sums
# (asc_copy_l0c2gm_arch_3510.md: DEQF16 s32 -> f16, QS322BF16_PRE s32 -> bf16, REQ8 s32 -> s8,
# QF322F16_PRE / QF322BF16_PRE / QF322F32_PRE f32 -> f16 / bf16 / f32).
QUANT_MODE = {
    ("int32", "float16"): "DEQF16",
    ("int32", "bfloat16"): "QS322BF16_PRE",
    ("int32", "int8"): "REQ8",
    ("float32", "float16"): "QF322F16_PRE",
    ("float32", "bfloat16"): "QF322BF16_PRE",
    ("float32", "float32"): "QF322F32_PRE",
}


@dataclass(frozen=True)
class Dataflow:
    """What the kernel does for one case: the Mmad types, L0C's type, the Fixpipe mode (None:
    NoQuant) and where the quant word comes from ("none", "word" / "float" / "double" per tensor,
    "channel" per channel)."""

    l0c_type: str
    quant_mode: str | None
    scale: str


def l0c_type(a_type: str, b_type: str) -> str | None:
    if a_type == b_type == "int8":
        return "int32"
    if a_type in FP8 and b_type in FP8 or a_type == b_type == "hifloat8":
        return "float32"
    return None


def dataflow(case) -> Dataflow:
    """The kernel's data flow for ``case``, or a CaseError saying why the kernel has none."""
    def refuse(message: str):
        raise CaseError(message, source=case.source)

    if case.chip != "950":
        refuse(f"chip {case.chip} has no QBMM Cube kernel: the seed's Fixpipe-only kernel is the 950's "
               f"(arch35); use chip 950")
    acc = l0c_type(case.a_type, case.b_type)
    if acc is None:
        refuse(f"Mmad has no {case.a_type} x {case.b_type}: the 950 multiplies int8 x int8, fp8 x fp8 "
               f"(e4m3fn/e5m2, mixed) and hifloat8 x hifloat8")
    if case.has_bias and case.bias_type != acc:
        refuse(f"bias_type {case.bias_type} with {case.a_type} inputs: the bias enters L0C through the bias "
               f"table as {acc} (a {case.bias_type} bias added after the scale is the mix kernels' vector step)")
    x1, x2 = case.x1_quant_mode, case.x2_quant_mode
    if case.c_type == "int32":
        if acc != "int32":
            refuse(f"c_type int32 from {case.a_type}: L0C holds float32 sums and the Fixpipe has no "
                   f"float32 -> int32 mode")
        return Dataflow(acc, None, "none")  # NoQuant: the seed says the scale is not used
    mode = QUANT_MODE.get((acc, case.c_type))
    if mode is None:
        refuse(f"c_type {case.c_type} from {case.a_type}: the 950's Fixpipe has no {acc} -> {case.c_type} "
               f"quant mode (it writes " + ", ".join(c for (l0c, c) in QUANT_MODE if l0c == acc) + ", int32 NoQuant)")
    if x2 == "none":
        refuse(f"x2_quant_mode none with c_type {case.c_type}: the kernel dequantises {case.c_type} with a B "
               f"scale (only c_type int32 needs none)")
    if x1 == "pertensor" and x2 != "pertensor":
        refuse("x1_quant_mode pertensor with x2_quant_mode perchannel: A per-tensor x B per-channel is "
               "multiplied in the vector unit (the mix kernel), not by this kernel's Fixpipe")
    if x2 == "perchannel":
        if case.scale_b_type not in ("uint64", "int64"):
            refuse(f"scale_b_type {case.scale_b_type} per channel: this kernel takes per-channel scales as "
                   f"packed uint64/int64 quant words (TransQuantParam); a float per-channel scale is the "
                   f"mix kernels'")
        return Dataflow(acc, "V" + mode, "channel")
    if x1 == "pertensor":
        if case.scale_b_type not in ("float32", "bfloat16"):
            refuse(f"scale_b_type {case.scale_b_type} with x1 pertensor: the kernel multiplies the float "
                   f"scales of A and B, so scale_b is float32 or bfloat16")
        if case.has_bias:
            refuse("a bias with x1 and x2 per tensor: the float scales' product runs with the bias added after "
                   "it, in the mix kernel (IsFp8OrHif8TTFloatBiasMix), not in L0C")
        return Dataflow(acc, mode, "double")
    if case.c_type == "int8" and case.scale_b_type not in ("uint64", "int64"):
        refuse(f"c_type int8 with a {case.scale_b_type} scale: the word the kernel makes from a float scale has "
               f"no sign bit (46) or offset, so REQ8 would write unsigned bytes; give the packed uint64 word")
    if acc == "float32" and case.scale_b_type not in ("uint64", "int64"):
        # the kernel would truncate the float to 19 bits, but the host never sends it here: IsCubeBasicApiCapable
        # takes fp8 / hifloat8 per tensor only with a uint64/int64 word (quant_batch_matmul_v3_tiling_util.h)
        refuse(f"scale_b_type {case.scale_b_type} per tensor with {case.a_type} inputs: the operator sends an fp8 / "
               f"hifloat8 float scale to another kernel (it multiplies without the 19-bit cut); this kernel takes "
               f"a uint64/int64 word, or scale_a and scale_b both per tensor")
    return Dataflow(acc, mode, "word" if case.scale_b_type in ("uint64", "int64") else "float")


MAX_PITCH = 65535  # Nd2NzParams.srcDValue is 16 bits: the row pitch of A or B in GM


def check_combination(case) -> None:
    """Refuse, in one line, a case the kernel has no data flow for."""
    dataflow(case)
    pitches = {"A": case.m if case.transpose_a else case.k, "B": case.k if case.transpose_b else case.n}
    for name, pitch in pitches.items():
        if case.b_format == "NZ" and name == "B":
            continue
        if pitch > MAX_PITCH:
            raise CaseError(f"{name}'s rows are {pitch} elements long: the GM -> L1 copy's row pitch (Nd2NzParams."
                            f"srcDValue) is a 16-bit field, at most {MAX_PITCH}", source=case.source)
    if case.atomic_add and case.c_type not in ATOMIC_TYPES:
        raise CaseError(f"atomic_add with c_type {case.c_type}: the Fixpipe adds to GM in "
                        f"{', '.join(ATOMIC_TYPES)}", source=case.source)
