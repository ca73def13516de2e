"""The x86_amx state as gdb sees an x86-64 Linux process (``isasim gdbserver``).

The features are gdb's own amd64 ones ("Standard Target Features", i386 in gdb's manual), so a stock gdb
recognises the target as amd64 and derives its pseudo registers (eax, ax, al, ymm0, zmm0 ...) itself:

- org.gnu.gdb.i386.core, .sse, .linux, .segments always; .avx and .avx512 as the CPU model has them.  x87,
  the segment selectors, MXCSR and orig_rax are not modelled: they read as the constants a Linux process
  shows (an empty x87 state; cs and ss of 64-bit user mode) and gdb may not change them.
- org.gnu.gdb.i386.amx as Intel's gdb reads it: ``tilecfg_raw`` (TILECFG's 64 bytes) and ``tiledata`` (the
  8 tiles x 16 rows x 64 bytes of XTILEDATA), from which Intel's gdb derives its ``tilecfg`` and ``tmm0-7``.
- org.isasim.amx.tiles, isasim's own: ``tmm0-7`` as 8192-bit registers whose type is a union of typed rows,
  so that a stock gdb prints ``p $tmm0.i32[3]`` (row 3 as 16 int32) or ``p $tmm1.bf16[0]``.

A tile reads as its configured shape, every byte beyond it 0 (what TILESTORED and XSAVE show; the state keeps
those bytes 0 too).  A write that would put data beyond the shape, or a TILECFG that LDTILECFG would refuse, is
refused with a ValueError; every accepted write goes through the state's journalled setters.
"""

from __future__ import annotations

import numpy as np

from ..core.debug_target import (SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP, DebugFeature, DebugRegister,
                                 DebugTarget, little_endian)
from ..core.faults import Fault
from .config import cpu_model
from .state import BYTES_PER_ROW, MAX_ROWS, MAX_TILES, TILECFG_BYTES, TileConfig, X86AmxState

# How Linux signals each x86 exception to a user process (arch/x86/kernel/traps.c); those isasim raises
# (faults.KINDS) are among them, the others are here for a fault kind added later.
EXCEPTION_SIGNALS = {
    "#DE": SIGFPE, "#DB": SIGTRAP, "#BP": SIGTRAP, "#OF": SIGSEGV, "#BR": SIGSEGV, "#UD": SIGILL,
    "#TS": SIGSEGV, "#NP": SIGBUS, "#SS": SIGBUS, "#GP": SIGSEGV, "#PF": SIGSEGV, "#MF": SIGFPE,
    "#AC": SIGBUS, "#XM": SIGFPE, "#CP": SIGSEGV,
}

# gdb's amd64 register order of the core feature (not isasim's encoding order of GPR64)
CORE_GPRS = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
             "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
POINTER_GPRS = ("rbp", "rsp")  # gdb types them data_ptr, the others int64

# The selectors of a 64-bit Linux user process (__USER_CS, __USER_DS); ds, es, fs, gs are 0 there.
SEGMENT_SELECTORS = {"cs": 0x33, "ss": 0x2B, "ds": 0, "es": 0, "fs": 0, "gs": 0}
# An x87 unit no instruction has used, as gdb shows it from Linux: FNINIT's control word, every
# register empty (gdb expands FXSAVE's abridged tag byte to the full tag word, 11b per empty register).
X87_CONTROL = {"fctrl": 0x37F, "fstat": 0, "ftag": 0xFFFF, "fiseg": 0, "fioff": 0, "foseg": 0, "fooff": 0, "fop": 0}
MXCSR_DEFAULT = 0x1F80  # the MXCSR isasim's vector semantics assume (all exceptions masked, round to nearest)
NO_SYSCALL = (1 << 64) - 1  # orig_rax of a process not in a system call: -1

EFLAGS_TYPE = """<flags id="i386_eflags" size="4">
  <field name="CF" start="0" end="0"/>
  <field name="" start="1" end="1"/>
  <field name="PF" start="2" end="2"/>
  <field name="AF" start="4" end="4"/>
  <field name="ZF" start="6" end="6"/>
  <field name="SF" start="7" end="7"/>
  <field name="TF" start="8" end="8"/>
  <field name="IF" start="9" end="9"/>
  <field name="DF" start="10" end="10"/>
  <field name="OF" start="11" end="11"/>
  <field name="NT" start="14" end="14"/>
  <field name="RF" start="16" end="16"/>
  <field name="VM" start="17" end="17"/>
  <field name="AC" start="18" end="18"/>
  <field name="VIF" start="19" end="19"/>
  <field name="VIP" start="20" end="20"/>
  <field name="ID" start="21" end="21"/>
</flags>"""

# xmm's union: the lane types gdb's amd64 description offers (each feature that has xmm registers defines it)
_XMM_LANES = (("v8_bfloat16", "bfloat16", 8), ("v8_half", "ieee_half", 8), ("v4_float", "ieee_single", 4),
              ("v2_double", "ieee_double", 2), ("v16_int8", "int8", 16), ("v8_int16", "int16", 8),
              ("v4_int32", "int32", 4), ("v2_int64", "int64", 2))
VEC128_TYPE = "\n".join(f'<vector id="xmm_{field}" type="{element}" count="{count}"/>'
                        for field, element, count in _XMM_LANES) + '\n<union id="vec128">\n' + "\n".join(
    f'  <field name="{field}" type="xmm_{field}"/>' for field, _, _ in _XMM_LANES) + \
    '\n  <field name="uint128" type="uint128"/>\n</union>'

_MXCSR_BITS = ("IE", "DE", "ZE", "OE", "UE", "PE", "DAZ", "IM", "DM", "ZM", "OM", "UM", "PM")
MXCSR_TYPE = '<flags id="i386_mxcsr" size="4">\n' + "\n".join(
    f'  <field name="{name}" start="{bit}" end="{bit}"/>' for bit, name in enumerate(_MXCSR_BITS)) + \
    '\n  <field name="FZ" start="15" end="15"/>\n</flags>'

# A tile row as each element type AMX instructions use: (gdb field name, gdb element type, elements per row)
TILE_ROW_TYPES = (("i8", "int8", 64), ("u8", "uint8", 64), ("i16", "int16", 32), ("u16", "uint16", 32),
                  ("i32", "int32", 16), ("u32", "uint32", 16), ("bf16", "bfloat16", 32), ("f16", "ieee_half", 32),
                  ("f32", "ieee_single", 16))
TILE_TYPE = "\n".join(
    f'<vector id="row_{field}" type="{element}" count="{count}"/>\n'
    f'<vector id="rows_{field}" type="row_{field}" count="{MAX_ROWS}"/>' for field, element, count in TILE_ROW_TYPES
) + '\n<union id="tile">\n' + "\n".join(
    f'  <field name="{field}" type="rows_{field}"/>' for field, _, _ in TILE_ROW_TYPES) + "\n</union>"

# Intel's gdb: TILECFG as 64 bytes, XTILEDATA as 128 rows (8 tiles x 16) of the types its tiles are viewed in
# (Intel types tilecfg_raw "uint512", a type only its gdb has; a vector of 64 bytes is the same bits to any gdb)
_TILEDATA_LANES = (("m_int8", "int8", 64), ("m_uint8", "uint8", 64), ("m_int32", "int32", 16),
                   ("m_bf16", "bfloat16", 32), ("m_fp16", "ieee_half", 32), ("m_fp32", "ieee_single", 16))
AMX_TYPES = f'<vector id="tilecfg_bytes" type="uint8" count="{TILECFG_BYTES}"/>\n' + "\n".join(
    f'<vector id="tiledata_row_{field}" type="{element}" count="{count}"/>\n'
    f'<vector id="tiledata_{field}" type="tiledata_row_{field}" count="{MAX_TILES * MAX_ROWS}"/>'
    for field, element, count in _TILEDATA_LANES
) + '\n<union id="tiledata_type">\n' + "\n".join(
    f'  <field name="{field}" type="tiledata_{field}"/>' for field, _, _ in _TILEDATA_LANES) + "\n</union>"

TILE_BITS = MAX_ROWS * BYTES_PER_ROW * 8  # 8192


def debug_target(config: dict) -> DebugTarget:
    """gdb's amd64 Linux target for the configuration's CPU model, with the AMX state."""
    features = cpu_model(config["cpu"]).features
    avx, avx512 = "AVX" in features, "AVX512F" in features
    return DebugTarget(
        architecture="i386:x86-64",
        features=(core_feature(), sse_feature(), linux_feature(), segments_feature())
        + ((avx_feature(),) if avx else ()) + ((avx512_feature(),) if avx512 else ())
        + (amx_feature(), tiles_feature()),
        signals=dict(EXCEPTION_SIGNALS),
        osabi="GNU/Linux",
        pc_register="rip",
        code_registers=(),  # CALL keeps the return address on the stack
        complete_return=pop_return_address,
    )


def pop_return_address(state, memory) -> None:
    """The pop of the RET that ended the run (RIP := [RSP]; RSP := RSP + 8), which isasim leaves undone
    (semantics/scalar.py's ret: the run ends with RSP as the function left it)."""
    rsp = state.read_register("rsp")
    state.rip = int.from_bytes(memory.read(rsp, 8), "little")
    state.write_register("rsp", (rsp + 8) & ((1 << 64) - 1))


# ---- register makers --------------------------------------------------------------------------------------


def _number(data: bytes) -> int:
    return int.from_bytes(data, "little")


def constant(name: str, bitsize: int, type: str, value: int, group: str | None = None) -> DebugRegister:
    """A register gdb's description must have but isasim does not model: always ``value``, not settable."""
    image = little_endian(value, bitsize)
    return DebugRegister(name, bitsize, type, lambda state: image, None, group)


def named(name: str, bitsize: int, type: str) -> DebugRegister:
    """A register the state reads and writes by name (GPRs, fs_base, gs_base)."""
    return DebugRegister(name, bitsize, type,
                         lambda state: little_endian(state.read_register(name), bitsize),
                         lambda state, data: state.write_register(name, _number(data)))


def vector_part(name: str, number: int, low: int, bits: int, type: str) -> DebugRegister:
    """Bits low .. low + bits - 1 of zmm``number``; a write keeps the register's other bits."""
    mask = ((1 << bits) - 1) << low

    def read(state: X86AmxState) -> bytes:
        return little_endian(state.read_vector(number) >> low, bits)

    def write(state: X86AmxState, data: bytes) -> None:
        state.write_vector(number, (state.read_vector(number) & ~mask) | (_number(data) << low))

    return DebugRegister(name, bits, type, read, write)


def opmask(number: int) -> DebugRegister:
    return DebugRegister(f"k{number}", 64, "uint64", lambda state: little_endian(state.read_opmask(number), 64),
                         lambda state, data: state.write_opmask(number, _number(data)))


def orig_rax() -> DebugRegister:
    """-1: the process is not in a system call.  gdb's amd64 Linux code sets it to -1 whenever it sets the pc
    (so that the kernel restarts no system call), so that value is accepted and any other refused."""
    def write(state: X86AmxState, data: bytes) -> None:
        if _number(data) != NO_SYSCALL:
            raise ValueError("orig_rax is -1: isasim has no system calls to restart")

    return DebugRegister("orig_rax", 64, "int", lambda state: little_endian(NO_SYSCALL, 64), write)


# ---- the features -----------------------------------------------------------------------------------------


def core_feature() -> DebugFeature:
    registers = [named(name, 64, "data_ptr" if name in POINTER_GPRS else "int64") for name in CORE_GPRS]
    registers.append(DebugRegister("rip", 64, "code_ptr", lambda state: little_endian(state.rip, 64),
                                   lambda state, data: state.write_register("rip", _number(data))))
    registers.append(DebugRegister(
        "eflags", 32, "i386_eflags", lambda state: little_endian(state.rflags, 32),
        # RFLAGS' upper half is reserved (0): eflags is all of it
        lambda state, data: state.set_rflags(_number(data))))
    registers += [constant(name, 32, "int32", value) for name, value in SEGMENT_SELECTORS.items()]
    registers += [constant(f"st{n}", 80, "i387_ext", 0) for n in range(8)]
    registers += [constant(name, 32, "int", value, "float") for name, value in X87_CONTROL.items()]
    return DebugFeature("org.gnu.gdb.i386.core", tuple(registers), EFLAGS_TYPE)


def sse_feature() -> DebugFeature:
    registers = [vector_part(f"xmm{n}", n, 0, 128, "vec128") for n in range(16)]
    registers.append(constant("mxcsr", 32, "i386_mxcsr", MXCSR_DEFAULT, "vector"))
    return DebugFeature("org.gnu.gdb.i386.sse", tuple(registers), VEC128_TYPE + "\n" + MXCSR_TYPE)


def linux_feature() -> DebugFeature:
    return DebugFeature("org.gnu.gdb.i386.linux", (orig_rax(),))


def segments_feature() -> DebugFeature:
    return DebugFeature("org.gnu.gdb.i386.segments", (named("fs_base", 64, "int"), named("gs_base", 64, "int")))


def avx_feature() -> DebugFeature:
    """The upper halves of ymm0-15 (gdb makes ymmN of xmmN and ymmNh)."""
    return DebugFeature("org.gnu.gdb.i386.avx",
                        tuple(vector_part(f"ymm{n}h", n, 128, 128, "uint128") for n in range(16)))


def avx512_feature() -> DebugFeature:
    """xmm16-31, the upper halves of ymm16-31, k0-7 and the upper halves of zmm0-31."""
    registers = [vector_part(f"xmm{n}", n, 0, 128, "vec128") for n in range(16, 32)]
    registers += [vector_part(f"ymm{n}h", n, 128, 128, "uint128") for n in range(16, 32)]
    registers += [opmask(n) for n in range(8)]
    registers += [vector_part(f"zmm{n}h", n, 256, 256, "zmm_upper") for n in range(32)]
    return DebugFeature("org.gnu.gdb.i386.avx512", tuple(registers),
                        VEC128_TYPE + '\n<vector id="zmm_upper" type="uint128" count="2"/>')


# ---- AMX ---------------------------------------------------------------------------------------------------


def shape_mask(config: TileConfig, t: int) -> np.ndarray:
    """True where tile ``t`` holds data under ``config`` (its rows x colsb), False beyond."""
    mask = np.zeros((MAX_ROWS, BYTES_PER_ROW), dtype=bool)
    if config.configured:
        mask[:config.rows[t], :config.colsb[t]] = True
    return mask


def tile_image(state: X86AmxState, t: int) -> bytes:
    """Tile ``t``'s 16 x 64 bytes, 0 beyond its configured shape."""
    return np.where(shape_mask(state.tilecfg, t), state.tile(t), 0).astype(np.uint8).tobytes()


def checked_tile_image(state: X86AmxState, t: int, data: bytes) -> np.ndarray:
    """``data`` as tile ``t``'s 16 x 64 bytes, or a ValueError if it has data beyond the configured shape."""
    image = np.frombuffer(bytes(data), dtype=np.uint8).reshape(MAX_ROWS, BYTES_PER_ROW)
    if image[~shape_mask(state.tilecfg, t)].any():
        rows, colsb = state.tile_shape(t) if state.tilecfg.configured else (0, 0)
        raise ValueError(f"tmm{t} holds {rows} rows x {colsb} bytes (TILECFG): the bytes beyond are 0")
    return image


def write_tile_image(state: X86AmxState, t: int, image: np.ndarray) -> None:
    if not np.array_equal(image, state.tile(t)):
        state.write_tile(t, image.copy())


def write_tilecfg(state: X86AmxState, data: bytes) -> None:
    """TILECFG := ``data`` if LDTILECFG would load it; palette 0 releases the tiles.  The tiles keep their
    data within the new shapes and are zeroed beyond, so they still read as a tile of that shape."""
    from .semantics.amx import checked_tilecfg

    try:
        config = checked_tilecfg(bytes(data), state.model)
    except Fault as fault:
        raise ValueError(fault.rule) from None
    if config.to_bytes() == state.tilecfg.to_bytes():
        return
    if not config.configured:
        state.release_tiles()
        return
    state.set_tilecfg(config)
    for t in range(MAX_TILES):
        kept = np.where(shape_mask(config, t), state.tile(t), 0).astype(np.uint8)
        if not np.array_equal(kept, state.tile(t)):
            state.write_tile(t, kept)


def amx_feature() -> DebugFeature:
    tile_bytes = MAX_ROWS * BYTES_PER_ROW

    def read_tiledata(state: X86AmxState) -> bytes:
        return b"".join(tile_image(state, t) for t in range(MAX_TILES))

    def write_tiledata(state: X86AmxState, data: bytes) -> None:
        # every tile checked first, so that a refused write changes none
        images = [checked_tile_image(state, t, data[t * tile_bytes:(t + 1) * tile_bytes]) for t in range(MAX_TILES)]
        for t, image in enumerate(images):
            write_tile_image(state, t, image)

    registers = (
        DebugRegister("tilecfg_raw", TILECFG_BYTES * 8, "tilecfg_bytes", lambda state: state.tilecfg.to_bytes(),
                      write_tilecfg),
        DebugRegister("tiledata", MAX_TILES * TILE_BITS, "tiledata_type", read_tiledata, write_tiledata),
    )
    return DebugFeature("org.gnu.gdb.i386.amx", registers, AMX_TYPES)


def tile_register(t: int) -> DebugRegister:
    return DebugRegister(f"tmm{t}", TILE_BITS, "tile", lambda state: tile_image(state, t),
                         lambda state, data: write_tile_image(state, t, checked_tile_image(state, t, data)),
                         "vector")


def tiles_feature() -> DebugFeature:
    return DebugFeature("org.isasim.amx.tiles", tuple(tile_register(t) for t in range(MAX_TILES)), TILE_TYPE)
