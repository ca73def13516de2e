"""The SSE/AVX/AVX-512 moves and zeroing idioms g++ 12 emits around AMX kernels (issue 15).

g++ zeroes the 64-byte TileConfig on the stack with a vector register (pxor or
vpxor, then movaps/movups/movdqa, vmovdqa or vmovdqu8 stores), fills the colsb
words with vpbroadcastw, and ends a function that touched ymm/zmm with vzeroupper.
Those are the forms here; each is declared once, in scalar.py's style: its
semantics reads like the SDM's Operation section, its docstring is the explain
text, and its encodings are the iced-x86 ``Code`` rows it names (the SDM's opcode
table rows), encoded by iced's encoder as GNU as does: the shortest, so VEX before
EVEX and the two-byte VEX when it can be.

Registers: xmm/ymm/zmm0-31 are views of 32 512-bit registers (state.py).  A
legacy SSE write of an xmm register keeps bits 511:128; a VEX or EVEX write of
VL bits zeroes bits 511:VL (the SDM's "DEST[MAXVL-1:VL] := 0").  VZEROUPPER zeroes
bits 511:128 of zmm0-15 and leaves zmm16-31 (64-bit mode).

Not modelled: opmask registers and masking ({k1}{z}), embedded broadcast and
rounding (g++ emits none of them for these kernels: such bytes do not decode);
MMX (PXOR mm).  Features: the CPU model must have the instruction's CPUID feature
(SSE2, AVX, AVX2, AVX512F+AVX512BW, +AVX512VL below 512 bits), else #UD.
Alignment: MOVAPS, MOVDQA, PXOR with a memory operand and VMOVDQA need it
aligned to the operand size, else #GP(0); MOVUPS and VMOVDQU8 do not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar

import iced_x86

from ..core.errors import AssemblyError
from ..core.program import FormTable, Instruction
from .context import X86Context
from .faults import GP
from .iced_forms import IcedRowsForm
from .operands import GPR64, GPR_VIEWS, Mem, Reg, vector_register

FEATURE = "SSE2"  # the lowest feature of the module; each form's rows say which one they need
_MASK64 = (1 << 64) - 1


@dataclass
class VectorForm(IcedRowsForm):
    syntax: str  # the SDM's instruction column, generic over widths
    mnemonic: str  # as objdump prints it
    semantics: Callable = field(repr=False)
    code_names: tuple[str, ...] = ()  # the iced Codes (SDM opcode rows) of the form
    aligned: bool = False  # a memory operand must be aligned to its size (#GP(0) otherwise)
    feature: str = FEATURE
    codes: list[int] = field(default_factory=list)
    element_types: tuple[str, ...] = ()
    undefined_flags: int = 0

    row_table: ClassVar[dict] = {}  # iced Code -> its _Row (this module's _INFO)

    def execute(self, cpu: X86Context, operands: tuple):
        for feature in required_features(self, operands):
            cpu.require_feature(feature, self.mnemonic)
        return self._checked_semantics(cpu, operands)

    def _checked_semantics(self, cpu: X86Context, operands: tuple):
        """The semantics after the alignment check (#GP) of a form that requires aligned memory."""
        if self.aligned:
            for o in operands:
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


FORMS = FormTable()


def instruction(syntax: str, *, codes: tuple[str, ...], aligned: bool = False):
    """Declare a vector instruction: its SDM syntax line, its iced Code rows, then its semantics."""

    def declare(semantics: Callable) -> Callable:
        name = syntax.split()[0]
        FORMS.add(VectorForm(syntax, name.lower(), semantics, codes, aligned))
        return semantics

    return declare


# ---------------------------------------------------------------------------
# The SDM's vocabulary
# ---------------------------------------------------------------------------


def vl(operand) -> int:
    """The vector length of an operand in bits (an xmm register: 128, a YMMWORD: 256, a GPR: its width)."""
    if isinstance(operand, Reg):
        reg = vector_register(operand.name)
        return reg.bits if reg else GPR_VIEWS[operand.name].bits
    return operand.size * 8


def read(cpu: X86Context, operand, bits: int | None = None) -> int:
    """SRC[bits-1:0] as an unsigned number (a register's low bits, or ``bits`` bits of memory)."""
    bits = bits or vl(operand)
    if isinstance(operand, Reg):
        reg = vector_register(operand.name)
        if reg is None:
            return cpu.state.read_gpr(GPR_VIEWS[operand.name]) % (1 << bits)
        return cpu.state.read_vector(reg.number) % (1 << bits)
    return int.from_bytes(cpu.read_memory(cpu.effective_address(operand), bits // 8), "little")


def write_legacy(cpu: X86Context, dest, value: int) -> None:
    """DEST[127:0] := value; a register keeps bits MAXVL-1:128 (legacy SSE)."""
    if isinstance(dest, Reg):
        n = vector_register(dest.name).number
        old = cpu.state.read_vector(n)
        cpu.state.write_vector(n, old >> 128 << 128 | value % (1 << 128))
    else:
        cpu.write_memory(cpu.effective_address(dest), (value % (1 << 128)).to_bytes(16, "little"))


def write_vex(cpu: X86Context, dest, value: int, bits: int) -> None:
    """DEST[VL-1:0] := value; DEST[MAXVL-1:VL] := 0 for a register (VEX and EVEX)."""
    value %= 1 << bits
    if isinstance(dest, Reg):
        cpu.state.write_vector(vector_register(dest.name).number, value)
    else:
        cpu.write_memory(cpu.effective_address(dest), value.to_bytes(bits // 8, "little"))


def is_legacy(form: VectorForm) -> bool:
    return not form.mnemonic.startswith("v")


# ---------------------------------------------------------------------------
# The forms
# ---------------------------------------------------------------------------


@instruction("PXOR xmm1, xmm2/m128", codes=("PXOR_XMM_XMMM128",), aligned=True)
def pxor(cpu: X86Context, dest, src) -> None:
    """Bitwise XOR of 128 bits (SSE2); ``pxor xmm0, xmm0`` is the zeroing idiom.

        DEST[127:0] := DEST[127:0] XOR SRC[127:0]
        DEST[MAXVL-1:128] (unmodified)

    A memory SRC must be 16-byte aligned (#GP(0)).  No flags change.
    """
    write_legacy(cpu, dest, read(cpu, dest, 128) ^ read(cpu, src, 128))


@instruction("VPXOR xmm1, xmm2, xmm3/m128", codes=("VEX_VPXOR_XMM_XMM_XMMM128", "VEX_VPXOR_YMM_YMM_YMMM256"))
def vpxor(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise XOR of 128 (AVX) or 256 bits (AVX2), VEX-encoded: the upper bits of DEST are zeroed.

        DEST[VL-1:0] := SRC1[VL-1:0] XOR SRC2[VL-1:0]
        DEST[MAXVL-1:VL] := 0

    ``vpxor xmm0, xmm0, xmm0`` zeroes all 512 bits of zmm0.  No alignment, no flags.
    """
    bits = vl(dest)
    write_vex(cpu, dest, read(cpu, src1, bits) ^ read(cpu, src2, bits), bits)


@instruction("MOVAPS dest, src", codes=("MOVAPS_XMM_XMMM128", "MOVAPS_XMMM128_XMM"), aligned=True)
def movaps(cpu: X86Context, dest, src) -> None:
    """Move 128 aligned bits (SSE).

        DEST[127:0] := SRC[127:0]
        DEST[MAXVL-1:128] (unmodified, for a register DEST)

    A memory operand must be 16-byte aligned (#GP(0)).
    """
    write_legacy(cpu, dest, read(cpu, src, 128))


@instruction("MOVUPS dest, src", codes=("MOVUPS_XMM_XMMM128", "MOVUPS_XMMM128_XMM"))
def movups(cpu: X86Context, dest, src) -> None:
    """Move 128 bits, any alignment (SSE).

        DEST[127:0] := SRC[127:0]
        DEST[MAXVL-1:128] (unmodified, for a register DEST)
    """
    write_legacy(cpu, dest, read(cpu, src, 128))


@instruction("MOVDQA dest, src", codes=("MOVDQA_XMM_XMMM128", "MOVDQA_XMMM128_XMM"), aligned=True)
def movdqa(cpu: X86Context, dest, src) -> None:
    """Move 128 aligned bits of integers (SSE2).

        DEST[127:0] := SRC[127:0]
        DEST[MAXVL-1:128] (unmodified, for a register DEST)

    A memory operand must be 16-byte aligned (#GP(0)).
    """
    write_legacy(cpu, dest, read(cpu, src, 128))


@instruction("VMOVDQA dest, src", codes=("VEX_VMOVDQA_XMM_XMMM128", "VEX_VMOVDQA_YMM_YMMM256",
                                         "VEX_VMOVDQA_XMMM128_XMM", "VEX_VMOVDQA_YMMM256_YMM"), aligned=True)
def vmovdqa(cpu: X86Context, dest, src) -> None:
    """Move 128 or 256 aligned bits (AVX), VEX-encoded.

        DEST[VL-1:0] := SRC[VL-1:0]
        DEST[MAXVL-1:VL] := 0   (a register DEST)

    A memory operand must be aligned to VL/8 bytes (#GP(0)).
    """
    bits = vl(dest)
    write_vex(cpu, dest, read(cpu, src, bits), bits)


@instruction("VMOVDQU8 dest, src", codes=(
    "EVEX_VMOVDQU8_XMM_K1Z_XMMM128", "EVEX_VMOVDQU8_YMM_K1Z_YMMM256", "EVEX_VMOVDQU8_ZMM_K1Z_ZMMM512",
    "EVEX_VMOVDQU8_XMMM128_K1Z_XMM", "EVEX_VMOVDQU8_YMMM256_K1Z_YMM", "EVEX_VMOVDQU8_ZMMM512_K1Z_ZMM"))
def vmovdqu8(cpu: X86Context, dest, src) -> None:
    """Move 128, 256 or 512 bits of bytes, any alignment (AVX512BW; AVX512VL below 512), EVEX-encoded.

        DEST[VL-1:0] := SRC[VL-1:0]      (no write mask: every byte is written)
        DEST[MAXVL-1:VL] := 0            (a register DEST)

    isasim takes the unmasked form only (k0); {k1}{z} encodings do not decode.
    """
    bits = vl(dest)
    write_vex(cpu, dest, read(cpu, src, bits), bits)


@instruction("VPBROADCASTW dest, src", codes=(
    "VEX_VPBROADCASTW_XMM_XMMM16", "VEX_VPBROADCASTW_YMM_XMMM16", "EVEX_VPBROADCASTW_XMM_K1Z_XMMM16",
    "EVEX_VPBROADCASTW_YMM_K1Z_XMMM16", "EVEX_VPBROADCASTW_ZMM_K1Z_XMMM16", "EVEX_VPBROADCASTW_XMM_K1Z_R32",
    "EVEX_VPBROADCASTW_YMM_K1Z_R32", "EVEX_VPBROADCASTW_ZMM_K1Z_R32"))
def vpbroadcastw(cpu: X86Context, dest, src) -> None:
    """Broadcast the low word of an xmm register, of memory or of a GPR (EVEX only) to every word of dest.

        temp := SRC[15:0]
        FOR j := 0 TO VL/16 - 1: DEST[16j+15:16j] := temp
        DEST[MAXVL-1:VL] := 0

    The VEX forms are AVX2; the EVEX forms (the GPR source, zmm, xmm16-31) are
    AVX512BW (and AVX512VL below 512 bits).
    """
    bits = vl(dest)
    word = read(cpu, src, 16 if isinstance(src, Mem) else vl(src)) & 0xFFFF
    write_vex(cpu, dest, int.from_bytes(word.to_bytes(2, "little") * (bits // 16), "little"), bits)


@instruction("VZEROUPPER", codes=("VEX_VZEROUPPER",))
def vzeroupper(cpu: X86Context) -> None:
    """Zero the upper bits of the first sixteen vector registers (AVX).

        FOR i := 0 TO 15: ZMMi[MAXVL-1:128] := 0
        ZMM16-31 are not changed (64-bit mode)
    """
    for n in range(16):
        value = cpu.state.read_vector(n)
        if value >> 128:
            cpu.state.write_vector(n, value % (1 << 128))


def required_features(form: VectorForm, operands: tuple) -> tuple[str, ...]:
    """The CPUID features these operands' encoding of ``form`` needs (SDM: each row's CPUID column)."""
    if is_legacy(form):
        return ("SSE2",)
    if form.mnemonic == "vzeroupper":
        return ("AVX",)
    evex = form.mnemonic == "vmovdqu8" or any(
        isinstance(o, Reg) and (o.name in GPR_VIEWS or o.name.startswith("zmm")
                                or vector_register(o.name).number >= 16) for o in operands)
    if evex:
        return ("AVX512F", "AVX512BW") + (("AVX512VL",) if vl(operands[0]) < 512 else ())
    if form.mnemonic == "vpbroadcastw" or (form.mnemonic == "vpxor" and vl(operands[0]) == 256):
        return ("AVX2",)
    return ("AVX",)


# ---------------------------------------------------------------------------
# iced rows, encoding and decoding
# ---------------------------------------------------------------------------

_OK = iced_x86.OpCodeOperandKind
_VECTOR_KINDS = {_OK.XMM_REG: ("xmm", 128), _OK.YMM_REG: ("ymm", 256), _OK.ZMM_REG: ("zmm", 512),
                 _OK.XMM_VVVV: ("xmm", 128), _OK.YMM_VVVV: ("ymm", 256)}
_VECTOR_OR_MEM = {_OK.XMM_OR_MEM: ("xmm", 128), _OK.YMM_OR_MEM: ("ymm", 256), _OK.ZMM_OR_MEM: ("zmm", 512)}
_GPR_KINDS = {_OK.R32_RM: 32}


@dataclass(frozen=True)
class _Row:
    code: int
    kinds: tuple[int, ...]
    op_code_string: str
    instruction_string: str
    memory_bytes: int  # the size of the row's memory operand (m16 for vpbroadcastw), 0 if none


_INFO: dict[int, _Row] = VectorForm.row_table
CODE_FORMS: dict[int, VectorForm] = {}


def _memory_bytes(form: VectorForm, kinds: tuple[int, ...]) -> int:
    if form.mnemonic == "vpbroadcastw":
        return 2  # xmm2/m16
    for k in kinds:
        if k in _VECTOR_OR_MEM:
            return _VECTOR_OR_MEM[k][1] // 8
    return 0


def _build_tables() -> None:
    for form in FORMS:
        for name in form.code_names:
            code = getattr(iced_x86.Code, name)
            info = iced_x86.OpCodeInfo(code)
            kinds = tuple(info.op_kind(i) for i in range(info.op_count))
            _INFO[code] = _Row(code, kinds, info.op_code_string, info.instruction_string, _memory_bytes(form, kinds))
            form.codes.append(code)
            CODE_FORMS[code] = form


_build_tables()
MNEMONICS: frozenset[str] = frozenset(f.mnemonic for f in FORMS)


def _fail(mnemonic: str, rule: str) -> AssemblyError:
    return AssemblyError(f"{mnemonic}: {rule}")


def _register_of(name: str) -> int:
    return getattr(iced_x86.Register, name.upper())


_NAME_OF_REGISTER = {}
for _n in range(32):
    for _prefix in ("xmm", "ymm", "zmm"):
        _NAME_OF_REGISTER[_register_of(f"{_prefix}{_n}")] = f"{_prefix}{_n}"
for _name in GPR_VIEWS:
    if GPR_VIEWS[_name].bits == 32:
        _NAME_OF_REGISTER[_register_of(_name)] = _name


def _matches(row: _Row, operands: tuple) -> bool:
    if len(row.kinds) != len(operands):
        return False
    if not row.op_code_string.startswith("EVEX") and any(
            isinstance(o, Reg) and vector_register(o.name) and vector_register(o.name).number >= 16 for o in operands):
        return False  # xmm16-31 exist only in EVEX encodings
    for kind, op in zip(row.kinds, operands):
        if kind in _VECTOR_KINDS:
            prefix, _bits = _VECTOR_KINDS[kind]
            ok = isinstance(op, Reg) and op.name.startswith(prefix)
        elif kind in _VECTOR_OR_MEM:
            prefix, _bits = _VECTOR_OR_MEM[kind]
            ok = (isinstance(op, Reg) and op.name.startswith(prefix)) or (
                isinstance(op, Mem) and op.size == row.memory_bytes)
        elif kind in _GPR_KINDS:
            ok = isinstance(op, Reg) and op.name in GPR_VIEWS and GPR_VIEWS[op.name].bits == _GPR_KINDS[kind]
        else:
            ok = False
        if not ok:
            return False
    return True


def _iced_instruction(row: _Row, operands: tuple) -> "iced_x86.Instruction":
    from .scalar import _iced_memory

    I = iced_x86.Instruction
    args = [_register_of(o.name) if isinstance(o, Reg) else _iced_memory(o) for o in operands]
    shape = "".join("r" if isinstance(o, Reg) else "m" for o in operands)
    factory = {"": I.create, "rr": I.create_reg_reg, "rm": I.create_reg_mem, "mr": I.create_mem_reg,
               "rrr": I.create_reg_reg_reg, "rrm": I.create_reg_reg_mem}[shape]
    return factory(row.code, *args)


def _check(mnemonic: str, operands: tuple) -> tuple:
    from .scalar import _check_memory

    out = []
    for op in operands:
        if isinstance(op, Reg):
            name = op.name.lower()
            if vector_register(name) is None and name not in GPR_VIEWS:
                raise _fail(mnemonic, f"'{op.name}' is not a vector or general-purpose register")
            out.append(Reg(name))
        elif isinstance(op, Mem):
            mem = _check_memory(mnemonic, Mem(op.base, op.index, op.scale, op.disp, None))
            out.append(Mem(mem.base, mem.index, mem.scale, mem.disp, op.size))
        else:
            raise _fail(mnemonic, f"'{op}' is not an operand of {mnemonic} (registers and memory only)")
    return tuple(out)


def encode(mnemonic: str, operands: tuple, address: int):
    """(form, canonical operands, bytes) of one vector instruction, as GNU as encodes it."""
    from .scalar import _encode_with

    mnemonic = mnemonic.lower()
    (form,) = FORMS.of_mnemonic(mnemonic)
    ops = _check(mnemonic, tuple(operands))
    if sum(isinstance(o, Mem) for o in ops) > 1:
        raise _fail(mnemonic, "two memory operands")
    registers = [o for o in ops if isinstance(o, Reg) and vector_register(o.name)]
    widths = {vl(o) for o in registers}
    for o in ops:
        if isinstance(o, Mem) and o.size is None:
            # the register gives the size (vpbroadcastw: always a WORD), as GNU as infers it
            size = 2 if mnemonic == "vpbroadcastw" else (max(widths) // 8 if widths else None)
            if size is None:
                raise _fail(mnemonic, "operand size not given; write XMMWORD, YMMWORD or ZMMWORD PTR")
            ops = tuple(Mem(m.base, m.index, m.scale, m.disp, size) if m is o else m for m in ops)
    candidates, errors = [], []
    for code in form.codes:
        row = _INFO[code]
        if not _matches(row, ops):
            continue
        try:
            data, disp_size = _encode_with(_iced_instruction(row, ops), address)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        candidates.append((len(data), code, data, disp_size))
    if not candidates:
        if errors:
            raise _fail(mnemonic, f"cannot encode: {errors[0]}")
        rows = " | ".join(_INFO[c].instruction_string for c in form.codes)
        raise _fail(mnemonic, f"no form takes these operands; forms: {rows}")
    _, code, data, disp_size = min(candidates)
    canonical = tuple(Mem(o.base, o.index, o.scale, o.disp, o.size, disp_size=disp_size) if isinstance(o, Mem)
                      else o for o in ops)
    return form, canonical, data


def decode(code: bytes, pos: int, address: int) -> Instruction | None:
    """One vector instruction at code[pos:], or None if the bytes are not one of these forms (or are masked,
    broadcast, or otherwise outside what isasim models)."""
    window = bytes(code[pos:pos + 15])
    if not window:
        return None
    instr = iced_x86.Decoder(64, window, ip=address & _MASK64).decode()
    form = CODE_FORMS.get(instr.code)
    if form is None or instr.is_invalid:
        return None
    if (instr.op_mask != iced_x86.Register.NONE or instr.zeroing_masking or instr.is_broadcast
            or instr.suppress_all_exceptions or instr.has_lock_prefix or instr.has_rep_prefix
            or instr.has_repne_prefix or instr.segment_prefix != iced_x86.Register.NONE):
        return None
    row = _INFO[instr.code]
    operands = []
    for i in range(instr.op_count):
        kind = instr.op_kind(i)
        if kind == iced_x86.OpKind.REGISTER:
            name = _NAME_OF_REGISTER.get(instr.op_register(i))
            if name is None:
                return None
            operands.append(Reg(name))
        elif kind == iced_x86.OpKind.MEMORY and instr.memory_base == iced_x86.Register.RIP:
            from .scalar import rip_relative

            operands.append(rip_relative(instr, 8 * row.memory_bytes))
        elif kind == iced_x86.OpKind.MEMORY:
            base = _NAME_OF_REGISTER_64.get(instr.memory_base) if instr.memory_base != iced_x86.Register.NONE else None
            index = (_NAME_OF_REGISTER_64.get(instr.memory_index)
                     if instr.memory_index != iced_x86.Register.NONE else None)
            if (instr.memory_base != iced_x86.Register.NONE and base is None) or (
                    instr.memory_index != iced_x86.Register.NONE and index is None):
                return None  # RIP-relative, 32-bit or vector-index addressing
            if base is None and instr.memory_displ_size != 8:
                return None
            disp = instr.memory_displacement
            disp = disp - (1 << 64) if disp >> 63 else disp
            disp_size = 4 if base is None else instr.memory_displ_size
            operands.append(Mem(base, index, instr.memory_index_scale, disp, row.memory_bytes, disp_size=disp_size))
        else:
            return None
    operands = tuple(operands)
    return Instruction(form=form, operands=operands, address=address, encoding=window[:instr.len],
                       text=form.format(operands))


_NAME_OF_REGISTER_64 = {_register_of(name): name for name in GPR64}
