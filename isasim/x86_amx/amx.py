"""The Intel AMX instructions: one definition per form.

Each form is declared by the row of the Intel SDM's opcode table (instruction,
opcode, operand encoding, CPUID feature) and one semantics function that reads
like the SDM's Operation section.  The decoder, encoder, assembler,
disassembler and ``isasim explain`` are all driven by these declarations; the
function's docstring is the text ``explain`` prints.

Where the SDM is silent, the semantics follow what was measured on Emerald Rapids
silicon (rows beyond the configured shape are zeroed; start_row is reset by every
tile instruction; a #PF leaves start_row at the faulting row; the TDPBF16PS lane
structure with its DAZ/FTZ/NaN rules).

The TMUL semantics hand their products to ``X86AmxState.accumulate``: a plain run
lets a kernel's products wait and computes them together (``WaitingProducts``),
stepping applies each at once; the two give the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np

from ..core import numerics
from ..core.errors import AssemblyError
from ..core.faults import Fault
from ..core.program import FormTable, syntax_id
from .context import X86Context
from .faults import GENERAL_PROTECTION, GP, INVALID_OPCODE, PAGE_FAULT, UD
from .encoding import VexOpcode, encode_memory, vex3
from .numerics.products import DwordDotProducts, PairDotProducts
from .operands import GPR_VIEWS, Mem, Reg, tile_number
from .state import BYTES_PER_ROW, MAX_ROWS, MAX_TILES, TILECFG_RESERVED, TileConfig

# ---------------------------------------------------------------------------
# Form declarations
# ---------------------------------------------------------------------------

# Operand kinds in the SDM's instruction column: tile registers and the two
# memory operand shapes AMX uses.
_OPERAND_KINDS = {"tmm1": "tmm", "tmm2": "tmm", "tmm3": "tmm", "sibmem": "sibmem", "m512": "m512"}
# Where each operand lives, from the SDM's "Instruction Operand Encoding" table.
_OPERAND_FIELDS = ("ModRM:reg", "ModRM:r/m", "VEX.vvvv")


@dataclass
class AmxForm:
    syntax: str  # the SDM's instruction column, e.g. "TILELOADD tmm1, sibmem"
    opcode: VexOpcode
    operand_encoding: tuple[str, ...]  # e.g. ("ModRM:reg (w)", "ModRM:r/m (r)")
    feature: str  # the CPUID feature flag
    semantics: Callable = field(repr=False)
    summary: str = ""
    # The faults the semantics can raise, as (kind, condition) in the SDM's words;
    # ``isasim explain`` and the reference pages list them.  The CPUID-feature #UD
    # and the encoding #UDs are derived from ``feature`` and ``opcode``.
    faults: tuple[tuple[str, str], ...] = ()
    # What each operand is to the operation, in syntax order (a TMUL's "C", "A", "B", as
    # the SDM's Operation section names them); empty when the operands play no such roles.
    # ``isasim explain`` labels and colours the operands by these.
    operand_roles: tuple[str, ...] = ()
    # The element type each tile operand holds, in syntax order (TDPBUSD's C, A, B are
    # "int32", "uint8", "int8"); empty where the form does not say.
    element_types: tuple[str, ...] = ()

    @cached_property  # derived once from the declaration
    def id(self) -> str:
        """Unique per form: the SDM's syntax line as an identifier, e.g. ``TILELOADD_tmm1_sibmem``."""
        return syntax_id(self.syntax)

    @property
    def is_tmul(self) -> bool:
        """A TMUL dot product: C += A·B of three tile registers, which must differ."""
        return self.operand_roles == _TMUL_ROLES

    @cached_property  # derived once from the declaration
    def mnemonic(self) -> str:
        return self.syntax.split()[0].lower()

    @cached_property  # derived once from the declaration
    def operand_names(self) -> tuple[str, ...]:
        rest = self.syntax.split(None, 1)[1:] or [""]
        return tuple(o.strip() for o in rest[0].split(",") if o.strip())

    @cached_property  # derived once from the declaration
    def operand_kinds(self) -> tuple[str, ...]:
        return tuple(_OPERAND_KINDS[name] for name in self.operand_names)

    @cached_property  # derived once from the declaration
    def operand_fields(self) -> tuple[str, ...]:
        return tuple(enc.split(" (")[0] for enc in self.operand_encoding)

    @property
    def doc(self) -> str:
        return (self.semantics.__doc__ or "").strip()

    def field_of(self, where: str) -> int | None:
        """Index of the operand encoded in ``where`` (one of _OPERAND_FIELDS), if any."""
        fields = self.operand_fields
        return fields.index(where) if where in fields else None

    # ---- encode ---------------------------------------------------------------
    def encode(self, operands: tuple) -> bytes:
        """Encode this form with ``operands`` (Reg/Mem in assembly order)."""
        op = self.opcode
        reg_field = op.modrm.reg or 0
        vvvv = 0
        R = X = B = 0
        modrm_bytes = b""
        for kind, where, operand in zip(self.operand_kinds, self.operand_fields, operands):
            if kind == "tmm" and where == "ModRM:reg":
                reg_field = tile_number(operand.name)
            elif kind == "tmm" and where == "VEX.vvvv":
                vvvv = tile_number(operand.name)
        rm_index = self.field_of("ModRM:r/m")
        if rm_index is not None and self.operand_kinds[rm_index] != "tmm":
            modrm_bytes, X, B = encode_memory(
                operands[rm_index], reg_field, require_sib=self.operand_kinds[rm_index] == "sibmem"
            )
        elif rm_index is not None:
            number = tile_number(operands[rm_index].name)
            modrm_bytes = bytes([0xC0 | (reg_field << 3) | number])
        else:
            rm = op.modrm.rm or 0
            modrm_bytes = bytes([0xC0 | (reg_field << 3) | rm])
        return vex3(R, X, B, op.map, op.W, vvvv, op.L, op.pp) + bytes([op.opcode]) + modrm_bytes

    def format(self, operands: tuple) -> str:
        """Canonical text, as ``objdump -M intel`` prints it."""
        if not operands:
            return self.mnemonic
        return f"{self.mnemonic} " + ",".join(str(o) for o in operands)

    # ---- execute ----------------------------------------------------------------
    def prepare(self, instruction) -> Callable[[X86Context], Callable[[], int]]:
        """The execute contract (isasim.core.isa): what translation does before it knows the machine, once per
        instruction of a program (the machines that run one program share it); ``bind(cpu)`` checks the CPU
        model's features once and makes the executable function."""
        operands, next_address = instruction.operands, instruction.next_address
        semantics, feature, mnemonic = self.semantics, self.feature, self.mnemonic
        # Tile registers become their numbers, and a sibmem operand its registers' views (BoundSib):
        # looking them up by name on every execution costs a tile load about a microsecond.
        args = tuple(tile_number(o.name) if isinstance(o, Reg) else
                     BoundSib.of(o) if kind == "sibmem" else o for kind, o in zip(self.operand_kinds, operands))
        fast = _PLAIN_RUN_PATHS.get(semantics)

        def bind(cpu: X86Context) -> Callable[[], int]:
            if feature not in cpu.model.features:  # the CPU model is fixed for the machine's life

                def unsupported() -> int:
                    cpu.require_feature(feature, mnemonic)  # raises #UD
                    return next_address

                return unsupported

            def execute() -> int:
                semantics(cpu, *args)
                return next_address

            return execute if fast is None else (fast(cpu, execute, next_address, *args) or execute)

        return bind


FORMS = FormTable()  # every AMX form, by id (see core.program.FormTable)


def instruction(syntax: str, opcode: str, encoding: tuple[str, ...], feature: str,
                faults: tuple[tuple[str, str], ...] = (), operand_roles: tuple[str, ...] = (),
                elements: tuple[str, ...] = ()):
    """Declare an AMX instruction form: the SDM table row, its faults, its operands' roles
    and element types, then its semantics."""

    def declare(semantics: Callable) -> Callable:
        doc = (semantics.__doc__ or "").strip()
        form = AmxForm(syntax, VexOpcode.parse(opcode), encoding, feature, semantics, doc.split("\n")[0], faults,
                       operand_roles, element_types=elements)
        FORMS.add(form)
        return semantics

    return declare


# ---------------------------------------------------------------------------
# Shared pseudocode helpers (the SDM's names)
# ---------------------------------------------------------------------------


def check_tiles_configured(cpu: X86Context, mnemonic: str) -> None:
    if not cpu.state.tilecfg.configured:
        raise UD(f"{mnemonic}: tiles are not configured (TILECFG palette is 0; run LDTILECFG first)")


def check_tile_valid(cpu: X86Context, t: int, mnemonic: str) -> None:
    """A tile is usable only if its rows and colsb are both non-zero."""
    rows, colsb = cpu.state.tile_shape(t)
    if t >= cpu.model.max_names or rows == 0 or colsb == 0:
        raise UD(f"{mnemonic}: tmm{t} is not configured (rows={rows}, colsb={colsb})")


def check_colsb_dword_multiple(cpu: X86Context, t: int, mnemonic: str) -> None:
    colsb = cpu.state.tilecfg.colsb[t]
    if colsb % 4:
        raise UD(f"{mnemonic}: tmm{t}.colsb={colsb} is not a multiple of 4")


def check_start_row(cpu: X86Context, t: int, mnemonic: str) -> None:
    start, rows = cpu.state.tilecfg.start_row, cpu.state.tilecfg.rows[t]
    if start >= rows:
        raise UD(f"{mnemonic}: start_row={start} is not below tmm{t}.rows={rows}")


def check_load_store(cpu: X86Context, t: int, mnemonic: str) -> None:
    """The SDM's exception class AMX-E3 (TILELOADD, TILELOADDT1, TILESTORED)."""
    if ("E3", t) not in cpu.state.checks_passed:  # else the configuration's part passed before
        check_tiles_configured(cpu, mnemonic)
        check_tile_valid(cpu, t, mnemonic)
        check_colsb_dword_multiple(cpu, t, mnemonic)
        cpu.state.checks_passed["E3", t] = ()
    check_start_row(cpu, t, mnemonic)


def zero_tilecfg_start(cpu: X86Context) -> None:
    if cpu.state.tilecfg.start_row:  # (almost always 0 already)
        cpu.state.set_start_row(0)


def signed64(value: int) -> int:
    """A 64-bit register value read as a signed stride (the index register is signed)."""
    value %= 1 << 64
    return value - (1 << 64) if value >> 63 else value


class BoundSib:
    """A sibmem operand as translation binds it: the views of its base and index registers found once,
    so that row_addresses reads the GPRs straight from the state (the same values as by name)."""

    __slots__ = ("mem", "base", "index", "scale", "disp")

    def __init__(self, mem: Mem, base, index):
        self.mem, self.base, self.index, self.scale, self.disp = mem, base, index, mem.scale, mem.disp

    @classmethod
    def of(cls, mem):
        """``mem`` bound, or ``mem`` itself when it names a register that is no GPR view (then by name)."""
        if not isinstance(mem, Mem) or (mem.base and mem.base not in GPR_VIEWS):
            return mem
        has_index = mem.index and mem.index != "riz"
        if has_index and mem.index not in GPR_VIEWS:
            return mem
        return cls(mem, GPR_VIEWS[mem.base] if mem.base else None, GPR_VIEWS[mem.index] if has_index else None)


_ADDRESS_MASK = (1 << 64) - 1


def row_addresses(cpu: X86Context, mem: Mem | BoundSib):
    """TILELOADD/TILESTORED addressing: row r is at base + disp + r * (index << scale)."""
    if type(mem) is BoundSib:  # (X86Context.effective_address and read_gpr, with the views found)
        gpr = cpu.state.gpr
        address, stride = mem.disp, 0
        if mem.base is not None:
            view = mem.base
            address += (gpr[view.number] & view.mask) >> view.shift
        if mem.index is not None:
            view = mem.index
            stride = signed64(((gpr[view.number] & view.mask) >> view.shift) * mem.scale)
        return address & _ADDRESS_MASK, stride
    stride = 0
    if mem.index and mem.index != "riz":
        stride = signed64(cpu.state.read_gpr(GPR_VIEWS[mem.index]) * mem.scale)  # the index register is signed
    return cpu.effective_address(mem, with_index=False), stride


# The SDM's exception classes, as (kind, condition) for the ``faults`` of each form.
_NOT_CONFIGURED = (INVALID_OPCODE, "tiles are not configured (TILECFG.palette is 0)")
AMX_E3_FAULTS = (  # TILELOADD, TILELOADDT1, TILESTORED
    _NOT_CONFIGURED,
    (INVALID_OPCODE, "the tile is not configured (its rows or colsb is 0)"),
    (INVALID_OPCODE, "the tile's colsb is not a multiple of 4"),
    (INVALID_OPCODE, "start_row >= the tile's rows"),
    (PAGE_FAULT, "a row's bytes are not mapped (or, for a store, not writable); start_row := the faulting row, "
            "the rows before it stay done"),
)
TMUL_FAULTS = (
    _NOT_CONFIGURED,
    (INVALID_OPCODE, "two of the three tile registers are the same"),
    (INVALID_OPCODE, "a tile is not configured (rows or colsb 0), or a colsb is not a multiple of 4"),
    (INVALID_OPCODE, "shape: C.colsb != B.colsb (N), C.rows != A.rows (M), or A.colsb / 4 != B.rows (K)"),
    (INVALID_OPCODE, "K > tmul_maxk (16) or N * 4 > tmul_maxn (64 bytes)"),
)

# ---------------------------------------------------------------------------
# AMX-TILE: configuration
# ---------------------------------------------------------------------------


@instruction("LDTILECFG m512", "VEX.128.NP.0F38.W0 49 !(11):000:bbb", ("ModRM:r/m (r)",), "AMX-TILE", faults=(
    (GENERAL_PROTECTION, "palette > max_palette (1)"),
    (GENERAL_PROTECTION, "a reserved byte is not 0 (bytes 2-15; 32-47, the colsb of tiles >= max_names; 56-63)"),
    (GENERAL_PROTECTION, "colsb[t] > bytes_per_row (64) or rows[t] > max_rows (16)"),
    (GENERAL_PROTECTION, "exactly one of rows[t] and colsb[t] is 0"),
    (PAGE_FAULT, "the 64 bytes at m512 are not mapped"),
))
def ldtilecfg(cpu: X86Context, m512: Mem) -> None:
    """Load the tile configuration from 64 bytes of memory.

    Palette 0 returns the tiles to the INIT state (as TILERELEASE).  Otherwise the
    configuration is checked and any violation raises #GP with no state changed;
    a valid configuration is loaded and ALL tile data is zeroed.  start_row is
    loaded as given.  colsb need not be a multiple of 4 here: that is checked when
    a tile is used.

        mem := read 64 bytes at m512
        if mem.palette == 0: TILES_CONFIGURED := 0; zero all tile data
        else:
            #GP if palette > max_palette, reserved bytes 2-15 != 0,
                bytes 32-47 (colsb of tiles >= max_names) != 0, bytes 56-63 != 0,
                colsb[t] > bytes_per_row, rows[t] > max_rows,
                or exactly one of rows[t], colsb[t] is 0
            TILECFG := mem; zero all tile data; TILES_CONFIGURED := 1
    """
    image = cpu.read_memory(cpu.effective_address(m512), 64)
    config = checked_tilecfg(image, cpu.model)
    if not config.configured:
        cpu.state.release_tiles()
        return
    cpu.state.set_tilecfg(config)
    cpu.state.zero_all_tiles()


_RESERVED_BITS = sum(0xFF << (8 * offset) for offset in TILECFG_RESERVED)  # of the image read as one number


def checked_tilecfg(image: bytes, model) -> TileConfig:
    """The configuration LDTILECFG loads from ``image``, or the #GP it raises (also used to seed a
    trace's ``init.arrays.tilecfg``, which must be a configuration LDTILECFG would accept)."""
    palette = image[0]
    if palette == 0:
        return TileConfig()
    if palette > model.max_palette:
        raise GP(f"ldtilecfg: palette {palette} is not supported (max_palette is {model.max_palette})")
    for offset in TILECFG_RESERVED if int.from_bytes(image, "little") & _RESERVED_BITS else ():
        if image[offset]:
            raise GP(f"ldtilecfg: reserved byte {offset} of the configuration is {image[offset]:#04x}, not 0")
    config = TileConfig.from_bytes(image)
    for t in range(MAX_TILES):
        rows, colsb = config.rows[t], config.colsb[t]
        if colsb > model.bytes_per_row:
            raise GP(f"ldtilecfg: tmm{t}.colsb={colsb} exceeds bytes_per_row={model.bytes_per_row}")
        if rows > model.max_rows:
            raise GP(f"ldtilecfg: tmm{t}.rows={rows} exceeds max_rows={model.max_rows}")
        if (rows == 0) != (colsb == 0):
            raise GP(f"ldtilecfg: tmm{t} has rows={rows} but colsb={colsb}; both must be 0 or both non-zero")
    return config


@instruction("STTILECFG m512", "VEX.128.66.0F38.W0 49 !(11):000:bbb", ("ModRM:r/m (w)",), "AMX-TILE",
             faults=((PAGE_FAULT, "the 64 bytes at m512 are not mapped or not writable"),))
def sttilecfg(cpu: X86Context, m512: Mem) -> None:
    """Store the tile configuration to 64 bytes of memory.

    Stores palette, start_row, colsb[0..7] and rows[0..7] with every reserved byte
    zero; when the tiles are not configured it stores 64 zero bytes.
    """
    cpu.write_memory(cpu.effective_address(m512), cpu.state.tilecfg.to_bytes())


@instruction("TILERELEASE", "VEX.128.NP.0F38.W0 49 C0", (), "AMX-TILE")
def tilerelease(cpu: X86Context) -> None:
    """Return the tiles to the INIT state: TILECFG becomes all zero and all tile data is zeroed.

    Allowed when the tiles are already released.
    """
    cpu.state.release_tiles()


# ---------------------------------------------------------------------------
# AMX-TILE: data movement
# ---------------------------------------------------------------------------


@instruction("TILEZERO tmm1", "VEX.128.F2.0F38.W0 49 11:rrr:000", ("ModRM:reg (w)",), "AMX-TILE", faults=(
    _NOT_CONFIGURED, (INVALID_OPCODE, "tdest is not configured (its rows or colsb is 0)")))
def tilezero(cpu: X86Context, tdest: int) -> None:
    """Zero all 16 rows x 64 bytes of tdest, whatever its configured shape, and reset start_row.

        #UD if tiles are not configured or tdest is not configured (rows or colsb 0)
        zero all max_rows x bytes_per_row bytes of tdest
        zero_tilecfg_start()

    TILEZERO does not check colsb % 4 nor start_row < rows (both measured on silicon).
    """
    check_tiles_configured(cpu, "tilezero")
    check_tile_valid(cpu, tdest, "tilezero")
    cpu.state.checks_passed["TILEZERO", tdest] = ()  # (for the plain-run path: they depend on TILECFG alone)
    cpu.state.write_tile(tdest, np.zeros((MAX_ROWS, BYTES_PER_ROW), dtype=np.uint8))
    zero_tilecfg_start(cpu)


_ZERO_TILE = bytes(MAX_ROWS * BYTES_PER_ROW)


def tile_load(cpu: X86Context, tdest: int, sibmem: Mem, mnemonic: str) -> None:
    state = cpu.state
    if state.tilecfg.start_row or ("E3", tdest) not in state.checks_passed:
        check_load_store(cpu, tdest, mnemonic)  # (else it passed before, and start_row 0 < rows cannot fail)
    rows, colsb = state.tile_shape(tdest)
    base, stride = row_addresses(cpu, sibmem)
    start = state.tilecfg.start_row
    if stride == colsb == BYTES_PER_ROW and not start and not state.journal.enabled:
        # Whole 64-byte rows back to back (a kernel's packed tiles), nothing recorded: the tile's first
        # rows x 64 bytes are memory's, the rest zero -- one byte copy instead of a strided numpy view
        # and a copy of it (a tile load's largest cost).  Otherwise the general path below.
        size = rows * BYTES_PER_ROW
        data = cpu.memory.span(base, size)
        if data is not None:
            tile = memoryview(state.tile(tdest)).cast("B")  # (settles any products waiting on tdest)
            tile[:size] = data
            if size < len(_ZERO_TILE):
                tile[size:] = _ZERO_TILE[size:]
            return  # start_row is 0 already
    whole = cpu.memory.read_rows((base + start * stride) % (1 << 64), stride, rows - start, colsb)
    if whole is not None:  # every row is mapped: nothing can fault, so load them all at once
        state.write_rows_and_zero(tdest, start, whole)
        zero_tilecfg_start(cpu)
        return
    image = cpu.state.tile(tdest).copy()
    image[start:] = 0  # zero_upper_rows(tdest, start): rows below start_row are kept
    try:
        while start < rows:
            image[start, :colsb] = np.frombuffer(cpu.read_memory(base + start * stride, colsb), dtype=np.uint8)
            start += 1
    except Fault:
        # A #PF is restartable: the rows already loaded stay, and start_row names
        # the row that faulted so the instruction resumes there.
        cpu.state.write_tile(tdest, image)
        cpu.state.set_start_row(start)
        raise
    cpu.state.write_tile(tdest, image)
    zero_tilecfg_start(cpu)


@instruction(
    "TILELOADD tmm1, sibmem", "VEX.128.F2.0F38.W0 4B !(11):rrr:100", ("ModRM:reg (w)", "ModRM:r/m (r)"), "AMX-TILE",
    faults=AMX_E3_FAULTS,
)
def tileloadd(cpu: X86Context, tdest: int, sibmem: Mem) -> None:
    """Load tdest row by row from memory: row r comes from base + disp + r * stride, stride = index << scale.

        #UD if tiles or tdest are not configured, tdest.colsb % 4 != 0, or start_row >= tdest.rows
        start := start_row
        zero_upper_rows(tdest, start)           # rows below start_row keep their data
        while start < tdest.rows:
            write_row_and_zero(tdest, start, read_memory(base + start*stride, tdest.colsb), tdest.colsb)
            start := start + 1                  # on #PF: start_row := start (the faulting row)
        zero_tilecfg_start()

    The memory operand must use a SIB byte; with no index register (riz) the
    stride is 0 and every row is read from the same address.  Bytes beyond colsb
    and rows beyond tdest.rows are zeroed.
    """
    tile_load(cpu, tdest, sibmem, "tileloadd")


@instruction(
    "TILELOADDT1 tmm1, sibmem", "VEX.128.66.0F38.W0 4B !(11):rrr:100", ("ModRM:reg (w)", "ModRM:r/m (r)"), "AMX-TILE",
    faults=AMX_E3_FAULTS,
)
def tileloaddt1(cpu: X86Context, tdest: int, sibmem: Mem) -> None:
    """TILELOADD with a hint that the data is not reused soon (T1 locality); the result is identical.

    Architecturally the same as TILELOADD in every respect, faults included
    (measured: loads exactly the same data on silicon).
    """
    tile_load(cpu, tdest, sibmem, "tileloaddt1")


@instruction(
    "TILESTORED sibmem, tmm1", "VEX.128.F3.0F38.W0 4B !(11):rrr:100", ("ModRM:r/m (w)", "ModRM:reg (r)"), "AMX-TILE",
    faults=AMX_E3_FAULTS,
)
def tilestored(cpu: X86Context, sibmem: Mem, tsrc: int) -> None:
    """Store the configured rows of tsrc to memory: colsb bytes of row r go to base + disp + r * stride.

        #UD if tiles or tsrc are not configured, tsrc.colsb % 4 != 0, or start_row >= tsrc.rows
        start := start_row
        while start < tsrc.rows:
            write_memory(base + start*stride, tsrc.row[start], tsrc.colsb)
            start := start + 1                  # on #PF: start_row := start (the faulting row)
        zero_tilecfg_start()

    Exactly colsb bytes are written per row; nothing else in memory is touched.
    """
    check_load_store(cpu, tsrc, "tilestored")
    rows, colsb = cpu.state.tile_shape(tsrc)
    base, stride = row_addresses(cpu, sibmem)
    start = cpu.state.tilecfg.start_row
    first = (base + start * stride) % (1 << 64)
    if stride == colsb == BYTES_PER_ROW and not start:  # whole rows back to back: one byte copy (as tile_load)
        target = cpu.memory.span(first, rows * BYTES_PER_ROW, write=True)
        if target is not None:
            target[:] = memoryview(cpu.state.tile(tsrc)).cast("B")[: rows * BYTES_PER_ROW]
            return  # start_row is 0 already
    if start < rows and cpu.memory.write_rows(first, stride, cpu.state.tile(tsrc)[start:rows, :colsb]):
        start = rows  # stored in one go: every row was mapped and writable
    try:
        while start < rows:
            cpu.write_memory(base + start * stride, cpu.state.tile(tsrc)[start, :colsb].tobytes())
            start += 1
    except Fault:
        cpu.state.set_start_row(start)
        raise
    zero_tilecfg_start(cpu)


# ---------------------------------------------------------------------------
# TMUL: dot products
# ---------------------------------------------------------------------------


def check_tmul_shapes(cpu: X86Context, mnemonic: str, tsrcdest: int, tsrc1: int, tsrc2: int) -> tuple[int, int, int]:
    """The checks every TMUL instruction makes; returns (M, K, N) in dwords.

        #UD if tiles are not configured, or any two of the three tiles are the same register,
            or any of them is not configured, or any colsb is not a multiple of 4,
            or tsrcdest.colsb != tsrc2.colsb, tsrcdest.rows != tsrc1.rows,
            tsrc1.colsb / 4 != tsrc2.rows, K > tmul_maxk or N > tmul_maxn
    """
    passed = cpu.state.checks_passed.get(("TMUL", tsrcdest, tsrc1, tsrc2))
    if passed is not None:  # the same three tiles passed under this configuration before
        return passed
    check_tiles_configured(cpu, mnemonic)
    if len({tsrcdest, tsrc1, tsrc2}) != 3:
        raise UD(f"{mnemonic}: the three tile registers must differ (tmm{tsrcdest}, tmm{tsrc1}, tmm{tsrc2})")
    for t in (tsrcdest, tsrc1, tsrc2):
        check_tile_valid(cpu, t, mnemonic)
    for t in (tsrcdest, tsrc1, tsrc2):
        check_colsb_dword_multiple(cpu, t, mnemonic)
    cfg = cpu.state.tilecfg
    if cfg.colsb[tsrcdest] != cfg.colsb[tsrc2]:
        raise UD(f"{mnemonic}: C=tmm{tsrcdest}.colsb={cfg.colsb[tsrcdest]} differs from B=tmm{tsrc2}.colsb={cfg.colsb[tsrc2]}")
    if cfg.rows[tsrcdest] != cfg.rows[tsrc1]:
        raise UD(f"{mnemonic}: C=tmm{tsrcdest}.rows={cfg.rows[tsrcdest]} differs from A=tmm{tsrc1}.rows={cfg.rows[tsrc1]}")
    if cfg.colsb[tsrc1] // 4 != cfg.rows[tsrc2]:
        raise UD(
            f"{mnemonic}: A=tmm{tsrc1}.colsb/4={cfg.colsb[tsrc1] // 4} differs from B=tmm{tsrc2}.rows={cfg.rows[tsrc2]}"
        )
    M, K, N = cfg.rows[tsrcdest], cfg.colsb[tsrc1] // 4, cfg.colsb[tsrcdest] // 4
    if K > cpu.model.tmul_maxk:
        raise UD(f"{mnemonic}: K={K} exceeds tmul_maxk={cpu.model.tmul_maxk}")
    if N * 4 > cpu.model.tmul_maxn:
        raise UD(f"{mnemonic}: N={N} dwords exceeds tmul_maxn={cpu.model.tmul_maxn} bytes")
    cpu.state.checks_passed["TMUL", tsrcdest, tsrc1, tsrc2] = M, K, N
    return M, K, N


def integer_dot_product(cpu: X86Context, mnemonic: str, tsrcdest: int, tsrc1: int, tsrc2: int,
                        a_signed: bool, b_signed: bool) -> None:
    """DPBD: C[m][n] += sum over k and i<4 of ext(A[m].byte[4k+i]) * ext(B[k].byte[4n+i]), mod 2^32."""
    M, K, N = check_tmul_shapes(cpu, mnemonic, tsrcdest, tsrc1, tsrc2)
    # The hardware's 32-bit accumulator wraps, and with wrap-around the order of the
    # additions cannot be observed: one exact sum, then one addition modulo 2^32
    # (unsigned 32-bit arithmetic), is the same thing.  Rows beyond M and bytes beyond
    # 4N of C are zeroed.
    cpu.state.accumulate(tsrcdest, M, N, DwordDotProducts,
                         cpu.state.tile(tsrc1), cpu.state.tile(tsrc2), K, a_signed, b_signed)
    zero_tilecfg_start(cpu)


_TMUL_RMV = ("ModRM:reg (r, w)", "ModRM:r/m (r)", "VEX.vvvv (r)")
_TMUL_ROLES = ("C", "A", "B")  # tmm1 accumulates C += A·B of tmm2 and tmm3


@instruction("TDPBSSD tmm1, tmm2, tmm3", "VEX.128.F2.0F38.W0 5E 11:rrr:bbb", _TMUL_RMV, "AMX-INT8", TMUL_FAULTS,
             _TMUL_ROLES, elements=("int32", "int8", "int8"))
def tdpbssd(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of signed bytes of tmm2 (A) with signed bytes of tmm3 (B), four per dword, accumulated into the int32 elements of tmm1 (C) with wrap-around.

        for m < C.rows, n < C.colsb/4:
            for k < A.colsb/4:
                C[m].dword[n] += sext(A[m].byte[4k+i]) * sext(B[k].byte[4n+i])  for i = 0..3
        (32-bit two's-complement wrap-around, never saturation)
        zero bytes of C beyond colsb and rows beyond C.rows; zero_tilecfg_start()
    """
    integer_dot_product(cpu, "tdpbssd", tsrcdest, tsrc1, tsrc2, a_signed=True, b_signed=True)


@instruction("TDPBSUD tmm1, tmm2, tmm3", "VEX.128.F3.0F38.W0 5E 11:rrr:bbb", _TMUL_RMV, "AMX-INT8", TMUL_FAULTS,
             _TMUL_ROLES, elements=("int32", "int8", "uint8"))
def tdpbsud(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of signed bytes of tmm2 (A) with unsigned bytes of tmm3 (B), accumulated into the int32 elements of tmm1 (C) with wrap-around.

        C[m].dword[n] += sext(A[m].byte[4k+i]) * zext(B[k].byte[4n+i])   (mod 2^32)
    """
    integer_dot_product(cpu, "tdpbsud", tsrcdest, tsrc1, tsrc2, a_signed=True, b_signed=False)


@instruction("TDPBUSD tmm1, tmm2, tmm3", "VEX.128.66.0F38.W0 5E 11:rrr:bbb", _TMUL_RMV, "AMX-INT8", TMUL_FAULTS,
             _TMUL_ROLES, elements=("int32", "uint8", "int8"))
def tdpbusd(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of unsigned bytes of tmm2 (A) with signed bytes of tmm3 (B), accumulated into the int32 elements of tmm1 (C) with wrap-around.

        C[m].dword[n] += zext(A[m].byte[4k+i]) * sext(B[k].byte[4n+i])   (mod 2^32)
    """
    integer_dot_product(cpu, "tdpbusd", tsrcdest, tsrc1, tsrc2, a_signed=False, b_signed=True)


@instruction("TDPBUUD tmm1, tmm2, tmm3", "VEX.128.NP.0F38.W0 5E 11:rrr:bbb", _TMUL_RMV, "AMX-INT8", TMUL_FAULTS,
             _TMUL_ROLES, elements=("int32", "uint8", "uint8"))
def tdpbuud(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of unsigned bytes of tmm2 (A) with unsigned bytes of tmm3 (B), accumulated into the int32 elements of tmm1 (C) with wrap-around.

        C[m].dword[n] += zext(A[m].byte[4k+i]) * zext(B[k].byte[4n+i])   (mod 2^32)
    """
    integer_dot_product(cpu, "tdpbuud", tsrcdest, tsrc1, tsrc2, a_signed=False, b_signed=False)


def float_pair_dot_product(cpu: X86Context, mnemonic: str, tsrcdest: int, tsrc1: int, tsrc2: int,
                           widen: Callable[[np.ndarray], np.ndarray]) -> None:
    """The TDPBF16PS / TDPFP16PS lane structure (PairDotProducts), for all outputs at once.

        for m < C.rows, n < C.colsb/4:
            E := +0.0; O := +0.0                      # two fp32 lanes, fresh per element
            for k < A.colsb/4 (in increasing k):
                E := FMA32(E, A[m].h[2k],   B[k].h[2n])     # even lane: bits 15:0 of each dword
                O := FMA32(O, A[m].h[2k+1], B[k].h[2n+1])   # odd lane:  bits 31:16
            C[m].fp32[n] := ADD32(C[m].fp32[n], ADD32(E, O))
        rows beyond C.rows and bytes beyond C.colsb are zeroed
    """
    M, K, N = check_tmul_shapes(cpu, mnemonic, tsrcdest, tsrc1, tsrc2)
    cpu.state.accumulate(tsrcdest, M, N, PairDotProducts, cpu.state.tile(tsrc1), cpu.state.tile(tsrc2), K, widen)
    zero_tilecfg_start(cpu)


@instruction("TDPBF16PS tmm1, tmm2, tmm3", "VEX.128.F3.0F38.W0 5C 11:rrr:bbb", _TMUL_RMV, "AMX-BF16", TMUL_FAULTS,
             _TMUL_ROLES, elements=("fp32", "bf16", "bf16"))
def tdpbf16ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of bf16 pairs of tmm2 (A) and tmm3 (B), accumulated into the fp32 elements of tmm1 (C).

        for m < C.rows, n < C.colsb/4:
            E := +0.0; O := +0.0                      # two fp32 lanes, fresh for every element
            for k < A.colsb/4, in increasing k:
                E := FMA32(E, A[m].bf16[2k],   B[k].bf16[2n])      # even lane
                O := FMA32(O, A[m].bf16[2k+1], B[k].bf16[2n+1])    # odd lane
            C[m].fp32[n] := ADD32(C[m].fp32[n], ADD32(E, O))

    FMA32 computes acc + a*b exactly and rounds once (RNE); ADD32 rounds once (RNE).
    Inputs that are denormal are treated as zero (sign kept); results that are
    tiny after rounding become zero with the sign of the exact result.  NaN: in
    FMA32 a NaN a wins, then b, then the accumulator, quieted; in ADD32 the first
    operand wins (E over O, C over the sum); inf*0 and inf-inf give 0xFFC00000.
    MXCSR is neither read nor written.  This is the SDM pseudocode, and what
    Emerald Rapids silicon does (not the Intrinsics Guide's sequential
    accumulation into C).
    """
    float_pair_dot_product(cpu, "tdpbf16ps", tsrcdest, tsrc1, tsrc2, numerics.bf16_to_fp32)


@instruction("TDPFP16PS tmm1, tmm2, tmm3", "VEX.128.F2.0F38.W0 5C 11:rrr:bbb", _TMUL_RMV, "AMX-FP16", TMUL_FAULTS,
             _TMUL_ROLES, elements=("fp32", "fp16", "fp16"))
def tdpfp16ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of fp16 pairs of tmm2 (A) and tmm3 (B), accumulated into the fp32 elements of tmm1 (C).

    The same lane structure and rounding rules as TDPBF16PS, with each fp16
    element widened exactly to fp32 first.  Granite Rapids only (AMX-FP16);
    on Sapphire and Emerald Rapids it is #UD.
    """
    float_pair_dot_product(cpu, "tdpfp16ps", tsrcdest, tsrc1, tsrc2, numerics.fp16_to_fp32)


# ---------------------------------------------------------------------------
# Plain-run paths: the hot instructions of a kernel loop, bound at translation
# ---------------------------------------------------------------------------
#
# While a plain run() goes (the journal off, no access noted), a kernel's tile loads and TMULs take
# the same steps as their semantics above, with what the operands name found once at translation
# and the Python calls between them gone: in a kernel loop the calls, not the bytes, are the cost.
# Each path does exactly what the semantics would in its case and hands every other case (stepping,
# a fault, a first use under a TILECFG, start_row != 0, a strided or unmapped load ...) to the
# semantics themselves, so ``run()`` and ``step()`` still agree bit for bit.

_TILE_BYTES = MAX_ROWS * BYTES_PER_ROW


class _TileBytes:
    """The state's tile data as one flat memoryview, made again if the state's array was replaced
    (replace_tiles): a byte copy through a memoryview costs a third of a numpy row-block assignment."""

    __slots__ = ("array", "bytes")

    def __init__(self):
        self.array = self.bytes = None

    def of(self, state) -> memoryview:
        if state._tiles is not self.array:
            self.array, self.bytes = state._tiles, memoryview(state._tiles).cast("B")
        return self.bytes


def _whole_rows_at(state, memory, sibmem: BoundSib, tile: int, last: list):
    """Where a plain tile load or store of ``tile`` through ``sibmem`` goes: (region, offset, size) when its
    configured rows are 64 bytes each, back to back (the index register times the scale is 64), inside one
    mapped region; else None, and the general path decides (and faults where it must).  ``last`` holds the
    region the instruction reached last time (regions are never unmapped)."""
    config, gpr, index, base = state.tilecfg, state.gpr, sibmem.index, sibmem.base
    if ((gpr[index.number] & index.mask) >> index.shift) * sibmem.scale != BYTES_PER_ROW \
            or config.colsb[tile] != BYTES_PER_ROW:
        return None
    address = sibmem.disp if base is None else sibmem.disp + ((gpr[base.number] & base.mask) >> base.shift)
    address &= _ADDRESS_MASK
    size = config.rows[tile] * BYTES_PER_ROW
    region = last[0]
    if not region.start <= address < region.end:
        region = memory._region_at(address)
        if region is None:
            return None
        last[0] = region
    if address + size > region.end:
        return None
    return region, address - region.start, size


def _plain_tile_load(cpu: X86Context, general: Callable[[], int], next_address: int, tdest: int, sibmem):
    """TILELOADD / TILELOADDT1 of whole 64-byte rows back to back (tile_load's first case)."""
    if type(sibmem) is not BoundSib or sibmem.index is None:
        return None
    state, memory, journal = cpu.state, cpu.memory, cpu.state.journal
    key, tiles = ("E3", tdest), _TileBytes()
    first = tdest * _TILE_BYTES
    last = [memory._last]

    def execute() -> int:
        if (journal.enabled or memory.accesses is not None or state.tilecfg.start_row
                or key not in state.checks_passed or tdest in state._deferred):
            return general()
        span = _whole_rows_at(state, memory, sibmem, tdest, last)
        if span is None:
            return general()
        region, offset, size = span
        flat = tiles.bytes if state._tiles is tiles.array else tiles.of(state)
        flat[first:first + size] = region.data[offset:offset + size]
        if size < _TILE_BYTES:
            flat[first + size:first + _TILE_BYTES] = _ZERO_TILE[size:]
        return next_address  # start_row is 0 already

    return execute


def _plain_tile_store(cpu: X86Context, general: Callable[[], int], next_address: int, sibmem, tsrc: int):
    """TILESTORED of whole 64-byte rows back to back (tilestored's first case), with no products
    waiting on the tile."""
    if type(sibmem) is not BoundSib or sibmem.index is None:
        return None
    state, memory, journal, memory_journal = cpu.state, cpu.memory, cpu.state.journal, cpu.memory.journal
    key, tiles = ("E3", tsrc), _TileBytes()
    first = tsrc * _TILE_BYTES
    last = [memory._last]

    def execute() -> int:
        if (journal.enabled or memory_journal.enabled or memory.accesses is not None or state.tilecfg.start_row
                or key not in state.checks_passed or tsrc in state._deferred):
            return general()
        span = _whole_rows_at(state, memory, sibmem, tsrc, last)
        if span is None or not span[0].writable:
            return general()
        region, offset, size = span
        flat = tiles.bytes if state._tiles is tiles.array else tiles.of(state)
        region.data[offset:offset + size] = flat[first:first + size]
        return next_address  # start_row is 0 already

    return execute


def _plain_tilezero(cpu: X86Context, general: Callable[[], int], next_address: int, tdest: int):
    """TILEZERO once its checks passed under this TILECFG, with start_row 0 and no products waiting."""
    state, journal, key = cpu.state, cpu.state.journal, ("TILEZERO", tdest)

    def execute() -> int:
        if journal.enabled or state.tilecfg.start_row or key not in state.checks_passed or tdest in state._deferred:
            return general()
        state._tile_views[tdest].fill(0)
        return next_address

    return execute


def _plain_tmul(batch_type: type, kind_of: Callable[[int], tuple]):
    """A TMUL's product joining the batch waiting on its accumulator (X86AmxState.accumulate), when the
    shapes passed under this TILECFG before, start_row is 0, and neither source has products waiting."""

    def bind(cpu: X86Context, general: Callable[[], int], next_address: int, tsrcdest: int, tsrc1: int, tsrc2: int):
        state, journal = cpu.state, cpu.state.journal
        key, tiles, capacity = ("TMUL", tsrcdest, tsrc1, tsrc2), _TileBytes(), batch_type.CAPACITY
        a_first, b_first = tsrc1 * _TILE_BYTES, tsrc2 * _TILE_BYTES
        # The batch last added to, its A and B as flat memoryviews, the shapes (M, K, N) it was found
        # under and the kind of this instruction's products then: while both are the same objects, the
        # batch is known to be of this type and shape.
        bound = [None, None, None, None, None]

        def execute() -> int:
            passed = state.checks_passed.get(key)
            if passed is None or journal.enabled or state.tilecfg.start_row:
                return general()
            deferred = state._deferred
            batch = deferred.get(tsrcdest)
            if batch is not bound[0] or passed is not bound[3]:
                if batch is None or type(batch) is not batch_type or batch.shape != (passed[0], passed[2]):
                    return general()  # (a new batch, or one of another kind or shape, is accumulate's to make)
                bound[:] = batch, memoryview(batch.A).cast("B"), memoryview(batch.B).cast("B"), passed, kind_of(passed[1])
            if tsrc1 in deferred or tsrc2 in deferred:
                return general()
            if state._tiles is not tiles.array:
                tiles.of(state)
            flat, kinds = tiles.bytes, batch.kinds
            n = len(kinds)
            at = n * _TILE_BYTES
            bound[1][at:at + _TILE_BYTES] = flat[a_first:a_first + _TILE_BYTES]
            bound[2][at:at + _TILE_BYTES] = flat[b_first:b_first + _TILE_BYTES]
            kinds.append(bound[4])
            if n + 1 == capacity:
                state._settle(tsrcdest)
            return next_address

        return execute

    return bind


_PLAIN_RUN_PATHS = {
    tilezero: _plain_tilezero,
    tilestored: _plain_tile_store,
    tileloadd: _plain_tile_load,
    tileloaddt1: _plain_tile_load,
    tdpbssd: _plain_tmul(DwordDotProducts, lambda K: (K, True, True)),
    tdpbsud: _plain_tmul(DwordDotProducts, lambda K: (K, True, False)),
    tdpbusd: _plain_tmul(DwordDotProducts, lambda K: (K, False, True)),
    tdpbuud: _plain_tmul(DwordDotProducts, lambda K: (K, False, False)),
    tdpbf16ps: _plain_tmul(PairDotProducts, lambda K: (K, numerics.bf16_to_fp32)),
    tdpfp16ps: _plain_tmul(PairDotProducts, lambda K: (K, numerics.fp16_to_fp32)),
}


# ---------------------------------------------------------------------------
# Lookup tables derived from the declarations
# ---------------------------------------------------------------------------

# Deprecated: one form per mnemonic holds for AMX but not for every ISA.  Use
# FORMS.of_mnemonic(mnemonic) (all its forms) or FORMS[id]; kept while fuzz.py and the
# tests still index it.
# (map, opcode byte, pp) -> forms sharing it (LDTILECFG and TILERELEASE share NP 49)
BY_OPCODE: dict[tuple[int, int, int], list[AmxForm]] = {}
for _form in FORMS:
    BY_OPCODE.setdefault((_form.opcode.map, _form.opcode.opcode, _form.opcode.pp), []).append(_form)
AMX_OPCODE_BYTES = {(m, o) for (m, o, _pp) in BY_OPCODE}


def check_operands(form: AmxForm, operands: tuple) -> None:
    """Reject operands this form does not take (the assembler's job, GNU as's rules)."""
    names = form.operand_names
    if len(operands) != len(names):
        raise AssemblyError(f"{form.mnemonic} takes {len(names)} operand(s) ({', '.join(names) or 'none'}), got {len(operands)}")
    for kind, name, operand in zip(form.operand_kinds, names, operands):
        if kind == "tmm":
            if not (isinstance(operand, Reg) and tile_number(operand.name) is not None):
                raise AssemblyError(f"{form.mnemonic}: operand {name} must be a tile register tmm0-tmm7, not '{operand}'")
        else:
            if not isinstance(operand, Mem):
                raise AssemblyError(f"{form.mnemonic}: operand {name} must be a memory operand, not '{operand}'")
            if operand.base == "rip":
                raise AssemblyError(f"{form.mnemonic}: rip-relative addressing cannot be used here")
            if operand.size not in (None,) and kind == "sibmem":
                raise AssemblyError(f"{form.mnemonic}: the memory operand takes no size")
    if form.is_tmul:
        tiles = [o.name for o in operands]
        if len(set(tiles)) != 3:
            # GNU as refuses these; silicon raises #UD for the raw bytes.
            raise AssemblyError(f"{form.mnemonic}: all three tile registers must be different")
