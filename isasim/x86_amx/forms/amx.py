"""The Intel AMX forms: one declaration per form.

Each form is declared by the row of the Intel SDM's opcode table (instruction,
opcode, operand encoding, CPUID feature), the faults it can raise, what its operands
are to the operation and the element types they hold, and its semantics function
(semantics/amx.py), which reads like the SDM's Operation section.  The decoder,
encoder, assembler, disassembler and ``isasim explain`` are all driven by these
declarations; the semantics function's docstring is the text ``explain`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from ...core.errors import AssemblyError
from ...core.program import FormTable, syntax_id
from ..context import X86Context
from ..encoding.vex import VexOpcode, encode_memory, encoded_memory, vex3
from ..faults import GENERAL_PROTECTION, INVALID_OPCODE, PAGE_FAULT
from ..operands import Mem, Reg, tile_number
from ..semantics import amx as semantics
from ..semantics.amx import BoundSib
from ..semantics.plain_run import PLAIN_RUN_PATHS


# Operand kinds in the SDM's instruction column: tile registers and the two
# memory operand shapes AMX uses.
_OPERAND_KINDS = {"tmm1": "tmm", "tmm2": "tmm", "tmm3": "tmm", "sibmem": "sibmem", "m512": "m512"}
# Where each operand lives, from the SDM's "Instruction Operand Encoding" table.
_OPERAND_FIELDS = ("ModRM:reg", "ModRM:r/m", "VEX.vvvv")


_TMUL_RMV = ("ModRM:reg (r, w)", "ModRM:r/m (r)", "VEX.vvvv (r)")
_TMUL_ROLES = ("C", "A", "B")  # tmm1 accumulates C += A·B of tmm2 and tmm3


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

    def encoded_operands(self, operands: tuple) -> tuple:
        """The operands the decoder reads from ``encode(operands)``'s bytes (the memory operand as its ModRM,
        SIB and displacement say it): what an assembled instruction holds."""
        return tuple(encoded_memory(operand, require_sib=kind == "sibmem") if kind != "tmm" else operand
                     for kind, operand in zip(self.operand_kinds, operands))

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
        fast = PLAIN_RUN_PATHS.get(semantics)

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


def declare(semantics: Callable, syntax: str, opcode: str, encoding: tuple[str, ...], feature: str,
            faults: tuple[tuple[str, str], ...] = (), operand_roles: tuple[str, ...] = (),
            elements: tuple[str, ...] = ()) -> AmxForm:
    """Declare an AMX instruction form: its semantics, the SDM table row, its faults, its operands' roles
    and element types."""
    doc = (semantics.__doc__ or "").strip()
    form = AmxForm(syntax, VexOpcode.parse(opcode), encoding, feature, semantics, doc.split("\n")[0], faults,
                   operand_roles, element_types=elements)
    FORMS.add(form)
    return form


# ---------------------------------------------------------------------------
# The SDM's exception classes, as (kind, condition) for the ``faults`` of each form
# ---------------------------------------------------------------------------


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
# The forms
# ---------------------------------------------------------------------------


declare(semantics.ldtilecfg, "LDTILECFG m512", "VEX.128.NP.0F38.W0 49 !(11):000:bbb", ("ModRM:r/m (r)",), "AMX-TILE", faults=(
    (GENERAL_PROTECTION, "palette > max_palette (1)"),
    (GENERAL_PROTECTION, "a reserved byte is not 0 (bytes 2-15; 32-47, the colsb of tiles >= max_names; 56-63)"),
    (GENERAL_PROTECTION, "colsb[t] > bytes_per_row (64) or rows[t] > max_rows (16)"),
    (GENERAL_PROTECTION, "exactly one of rows[t] and colsb[t] is 0"),
    (PAGE_FAULT, "the 64 bytes at m512 are not mapped"),
))
declare(semantics.sttilecfg, "STTILECFG m512", "VEX.128.66.0F38.W0 49 !(11):000:bbb", ("ModRM:r/m (w)",), "AMX-TILE",
             faults=((PAGE_FAULT, "the 64 bytes at m512 are not mapped or not writable"),))
declare(semantics.tilerelease, "TILERELEASE", "VEX.128.NP.0F38.W0 49 C0", (), "AMX-TILE")
declare(semantics.tilezero, "TILEZERO tmm1", "VEX.128.F2.0F38.W0 49 11:rrr:000", ("ModRM:reg (w)",), "AMX-TILE", faults=(
    _NOT_CONFIGURED, (INVALID_OPCODE, "tdest is not configured (its rows or colsb is 0)")))
declare(semantics.tileloadd, 
    "TILELOADD tmm1, sibmem", "VEX.128.F2.0F38.W0 4B !(11):rrr:100", ("ModRM:reg (w)", "ModRM:r/m (r)"), "AMX-TILE",
    faults=AMX_E3_FAULTS,
)
declare(semantics.tileloaddt1, 
    "TILELOADDT1 tmm1, sibmem", "VEX.128.66.0F38.W0 4B !(11):rrr:100", ("ModRM:reg (w)", "ModRM:r/m (r)"), "AMX-TILE",
    faults=AMX_E3_FAULTS,
)
declare(semantics.tilestored, 
    "TILESTORED sibmem, tmm1", "VEX.128.F3.0F38.W0 4B !(11):rrr:100", ("ModRM:r/m (w)", "ModRM:reg (r)"), "AMX-TILE",
    faults=AMX_E3_FAULTS,
)
declare(semantics.tdpbssd, "TDPBSSD tmm1, tmm2, tmm3", "VEX.128.F2.0F38.W0 5E 11:rrr:bbb", _TMUL_RMV, "AMX-INT8", TMUL_FAULTS,
             _TMUL_ROLES, elements=("int32", "int8", "int8"))
declare(semantics.tdpbsud, "TDPBSUD tmm1, tmm2, tmm3", "VEX.128.F3.0F38.W0 5E 11:rrr:bbb", _TMUL_RMV, "AMX-INT8", TMUL_FAULTS,
             _TMUL_ROLES, elements=("int32", "int8", "uint8"))
declare(semantics.tdpbusd, "TDPBUSD tmm1, tmm2, tmm3", "VEX.128.66.0F38.W0 5E 11:rrr:bbb", _TMUL_RMV, "AMX-INT8", TMUL_FAULTS,
             _TMUL_ROLES, elements=("int32", "uint8", "int8"))
declare(semantics.tdpbuud, "TDPBUUD tmm1, tmm2, tmm3", "VEX.128.NP.0F38.W0 5E 11:rrr:bbb", _TMUL_RMV, "AMX-INT8", TMUL_FAULTS,
             _TMUL_ROLES, elements=("int32", "uint8", "uint8"))
declare(semantics.tdpbf16ps, "TDPBF16PS tmm1, tmm2, tmm3", "VEX.128.F3.0F38.W0 5C 11:rrr:bbb", _TMUL_RMV, "AMX-BF16", TMUL_FAULTS,
             _TMUL_ROLES, elements=("fp32", "bf16", "bf16"))
declare(semantics.tdpfp16ps, "TDPFP16PS tmm1, tmm2, tmm3", "VEX.128.F2.0F38.W0 5C 11:rrr:bbb", _TMUL_RMV, "AMX-FP16", TMUL_FAULTS,
             _TMUL_ROLES, elements=("fp32", "fp16", "fp16"))


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
            if operand.base == "rip" and kind == "sibmem":  # (LDTILECFG/STTILECFG take [rip+disp32])
                raise AssemblyError(f"{form.mnemonic}: rip-relative addressing cannot be used here (it needs a SIB byte)")
            if operand.size not in (None,) and kind == "sibmem":
                raise AssemblyError(f"{form.mnemonic}: the memory operand takes no size")
    if form.is_tmul:
        tiles = [o.name for o in operands]
        if len(set(tiles)) != 3:
            # GNU as refuses these; silicon raises #UD for the raw bytes.
            raise AssemblyError(f"{form.mnemonic}: all three tile registers must be different")
