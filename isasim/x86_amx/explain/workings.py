"""The trace viewer's click-for-working of x86 AMX: how each element a step wrote was computed.

For a TDP instruction (TDPB[SU][SU]D, TDPBF16PS, TDPFP16PS, and the extension TMULs) every element C[m][n]
of the configured shape gets the account ``isasim explain`` writes for its worked element, made by the same
functions (tmul.element_account, amx_extensions.element_account) from the tiles the machine held before the
step, and checked against C as the machine holds it after.  No figure: the page shows its own grids.

The data-movement instructions get an account of where each element came from, from the step's own data:
a tile load's dwords (row r from base + disp + r x stride as the SIB operand computes it with the registers
before the step), a tile store's dwords in memory, TILEZERO's zeros, LDTILECFG's 64 bytes (each named by
the layout tilecfg.tilecfg_layout reads from state.py), and the register (or memory) a scalar MOV, LEA,
ADD, ADC, SUB, SBB, INC, DEC, NEG, AND, OR or XOR writes; those and CMP and TEST also get the account of the
status flags they write (workings_flags.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...core.explain import Check, Paragraph, Table
from ...core.explain.model import ElementWorking
from ..forms import amx
from ..forms.amx_extensions import EXTENSION_FEATURES
from ..operands import GPR64, GPR_VIEWS, Imm, Mem, Reg, operand_text, signed, tile_number
from ..state import TILECFG_BYTES, TILECFG_PALETTE
from . import amx_extensions, tmul
from .common import hex_bytes
from .tilecfg import tilecfg_layout
from .workings_flags import FLAG_WRITERS, RESULT_WRITERS, flag_workings, operand_bits, operand_value

TILE_LOADS = ("tileloadd", "tileloaddt1", "tileloaddrs", "tileloaddrst1")
SCALAR_WRITES = ("mov", "lea") + RESULT_WRITERS


def element_workings(instruction, before, after) -> list[ElementWorking]:
    """One ElementWorking per dword of C the TMUL ``instruction`` wrote (row-major), or [] for any other
    instruction and for a step that faulted (e.g. the tiles were not configured)."""
    form = instruction.form
    if instruction.invalid is not None or after.fault is not None:
        return []  # (a faulted load keeps the rows it read: the page shows the fault, not an account)
    mnemonic = getattr(form, "mnemonic", "")
    if mnemonic in TILE_LOADS or mnemonic == "tilestored":
        return _tile_move_workings(instruction, before, after)
    if mnemonic == "tilezero":
        return _tilezero_workings(instruction, before, after)
    if mnemonic == "ldtilecfg":
        return _ldtilecfg_workings(instruction, before, after)
    if (mnemonic in SCALAR_WRITES or mnemonic in FLAG_WRITERS) and not isinstance(form, amx.AmxForm):
        # the register (or memory) written, then RFLAGS (CMP and TEST write only RFLAGS)
        written = _scalar_workings(instruction, before, after) if mnemonic in SCALAR_WRITES else []
        return written + flag_workings(instruction, before, after)
    if not isinstance(form, amx.AmxForm) or not form.is_tmul or len(instruction.operands) != 3:
        return []
    tiles = {role: tile_number(o.name) for role, o in zip(form.operand_roles, instruction.operands)}
    tc, ta, tb = tiles["C"], tiles["A"], tiles["B"]
    cfg = before.state.tilecfg
    if not cfg.configured:
        return []
    M, K, N = cfg.rows[tc], cfg.colsb[ta] // 4, cfg.colsb[tc] // 4
    if not (M and K and N):
        return []
    # (while a machine steps, its journal is on and TMUL products are made at once: settling only reads)
    tiles_before, tiles_after = before.state.settled_tiles(), after.state.settled_tiles()
    A = np.ascontiguousarray(tiles_before[ta, :M, :4 * K])
    B = np.ascontiguousarray(tiles_before[tb, :K, :4 * N])
    C_before = np.ascontiguousarray(tiles_before[tc, :M, :4 * N]).view(np.uint32)
    C_after = np.ascontiguousarray(tiles_after[tc, :M, :4 * N]).view(np.uint32)

    if form.feature in EXTENSION_FEATURES:
        def account(m: int, n: int) -> list:
            return amx_extensions.element_account(form, tiles, A, B, int(C_before[m, n]), int(C_after[m, n]),
                                                  m, n, (M, K, N))
    else:
        kind, signs = tmul._tdp_kind(form)
        element = tmul.WorkedElement(instruction, None, tiles, A=A, B=B, C_before=C_before, C_after=C_after,
                                     m=0, n=0, M=M, K=K, N=N)

        def account(m: int, n: int) -> list:
            return tmul.element_account(replace(element, m=m, n=n), kind, signs)[0]

    # the offset in tmm<c> as the trace shows a tile (Isa.observed_arrays): its rows x colsb bytes
    row_bytes = cfg.colsb[tc]
    return [ElementWorking(f"tmm{tc}", m * row_bytes + 4 * n, 4,
                           f"C[{m}][{n}] = tmm{tc} row {m}, dword {n}", account(m, n))
            for m in range(M) for n in range(N)]


# ---- the data-movement instructions ------------------------------------------------------------------------

def _value_text(data: bytes) -> str:
    """An element's bytes in memory order, and (a dword) its value as int32, the tiles' default element."""
    if len(data) != 4:
        return data.hex(" ")
    return f"{data.hex(' ')} = int32 {int.from_bytes(data, 'little', signed=True)}"


def _fp32_text(data: bytes) -> str:
    return f"{float(np.frombuffer(data, '<f4')[0]):.9g}" if len(data) == 4 else ""


def _sib_rows(mem: Mem, before) -> tuple[int, int, str, str]:
    """A tile load's or store's base + disp and row stride as the SIB operand computes them from the registers
    the machine held before the step (the same X86Context.effective_address the semantics use for base +
    disp), and both written out term by term."""
    base = before.context.effective_address(mem, with_index=False)
    if mem.base == "rip":
        terms = [f"rip-relative {mem.rip_target:#x}"]
    else:
        terms = [f"{mem.base} ({before.state.read_gpr(GPR_VIEWS[mem.base]):#x})"] if mem.base else []
        if mem.segment:
            terms.append(f"{mem.segment}_base ({getattr(before.state, mem.segment + '_base'):#x})")
        if mem.disp or not terms:
            terms.append(f"{mem.disp:#x}")
    if mem.index and mem.index != "riz":
        index = before.state.read_gpr(GPR_VIEWS[mem.index])
        stride = signed(index * mem.scale, 64)  # the index register is signed
        stride_text = f"{mem.index} ({index:#x}) × {mem.scale} = {stride}"
    else:
        stride, stride_text = 0, "0 (no index register: every row from the same address)"
    return base, stride, " + ".join(terms), stride_text


def _tile_move_workings(instruction, before, after) -> list[ElementWorking]:
    """TILELOADD (and its hints) and TILESTORED: one account per dword moved, rows start_row..rows-1 (rows
    below start_row were moved by the interrupted instruction before and are not touched)."""
    mem = next((o for o in instruction.operands if isinstance(o, Mem)), None)
    reg = next((o for o in instruction.operands if isinstance(o, Reg)), None)
    t = tile_number(reg.name) if reg is not None else None
    cfg = before.state.tilecfg
    if mem is None or t is None or not cfg.configured or not (cfg.rows[t] and cfg.colsb[t]):
        return []
    rows, colsb, start = cfg.rows[t], cfg.colsb[t], cfg.start_row
    store = instruction.form.mnemonic == "tilestored"
    base, stride, base_text, stride_text = _sib_rows(mem, before)
    tile_before, tile_after = before.state.settled_tiles()[t], after.state.settled_tiles()[t]
    name, what = f"tmm{t}", f"{instruction.form.mnemonic.upper()} {', '.join(operand_text(o) for o in instruction.operands)}"
    columns = ["", "where", "bytes (memory order)", "as int32", "as fp32"]
    workings = []
    for r in range(start, rows):
        row_at = (base + r * stride) % (1 << 64)
        rule = (f"{what}: row r is at base + disp + r × stride = {base_text} + {r} × {stride} = {row_at:#x} "
                f"(stride = {stride_text}); dword n of the row is its bytes 4n..4n+3.")
        for n in range(colsb // 4):
            address = (row_at + 4 * n) % (1 << 64)
            element = f"{name} row {r}, dword {n}"
            tile_place = f"{name} byte {r * colsb + 4 * n} (row {r}, bytes {4 * n}-{4 * n + 3})"
            if store:
                data, machine = tile_before[r, 4 * n:4 * n + 4].tobytes(), after.memory.read(address, 4)
                source, dest = ["from", tile_place + ", before"], ["to", f"memory {address:#x}, after"]
                location, offset = "memory", address
                title = f"memory {address:#x} := {element}"
            else:
                data, machine = before.memory.read(address, 4), tile_after[r, 4 * n:4 * n + 4].tobytes()
                source, dest = ["from", f"memory {address:#x}, before"], ["to", tile_place + ", after"]
                location, offset = name, r * colsb + 4 * n
                title = f"{element} := memory {address:#x}"
            table = Table(columns, [source + [data.hex(" "), str(int.from_bytes(data, "little", signed=True)),
                                              _fp32_text(data)],
                                    dest + [machine.hex(" "), str(int.from_bytes(machine, "little", signed=True)),
                                            _fp32_text(machine)]])
            blocks = [Paragraph(f"{rule} Dword {n}: {row_at:#x} + {4 * n} = {address:#x}."), table,
                      Check(f"the dword {'stored at ' + hex(address) if store else 'loaded into ' + element}",
                            _value_text(data), _value_text(machine))]
            workings.append(ElementWorking(location, offset, 4, title, blocks))
    return workings


def _tilezero_workings(instruction, before, after) -> list[ElementWorking]:
    """TILEZERO: each dword of the tile's configured rows x colsb (what the page shows of it) := 0."""
    operands = instruction.operands
    t = tile_number(operands[0].name) if operands and isinstance(operands[0], Reg) else None
    cfg = after.state.tilecfg
    if t is None or not cfg.configured or not (cfg.rows[t] and cfg.colsb[t]):
        return []
    rows, colsb = cfg.rows[t], cfg.colsb[t]
    tile_before, tile_after = before.state.settled_tiles()[t], after.state.settled_tiles()[t]
    name = f"tmm{t}"
    rule = Paragraph(f"TILEZERO {name}: every byte of its 16 rows × 64 bytes := 0, whatever it held; nothing is "
                     f"read (the page shows the configured {rows} rows × {colsb} bytes).")
    workings = []
    for r in range(rows):
        for start in range(0, colsb, 4):  # (TILEZERO does not require colsb % 4 == 0: a last short group)
            size = min(4, colsb - start)
            old, new = tile_before[r, start:start + size].tobytes(), tile_after[r, start:start + size].tobytes()
            element = f"{name} row {r}, dword {start // 4}"
            table = Table(["element", "before", "after"], [[element, _value_text(old), _value_text(new)]])
            workings.append(ElementWorking(name, r * colsb + start, size, f"{element} := 0", [
                rule, table, Check(element, _value_text(bytes(size)), _value_text(new))]))
    return workings


def _ldtilecfg_workings(instruction, before, after) -> list[ElementWorking]:
    """LDTILECFG: each of TILECFG's 64 bytes from the byte of the m512 operand at the same offset, named by
    the layout LDTILECFG reads with (palette, start_row, colsb[t] (2 bytes), rows[t], reserved)."""
    operands = instruction.operands
    if len(operands) != 1 or not isinstance(operands[0], Mem):
        return []
    address = before.context.effective_address(operands[0])
    image = before.memory.read(address, TILECFG_BYTES)
    held = after.state.tilecfg.to_bytes()
    names = tilecfg_layout()
    init = image[TILECFG_PALETTE] == 0  # palette 0: the tiles return to INIT, TILECFG all zero
    workings = []
    for i, field_name in enumerate(names):
        span = [j for j, n in enumerate(names) if n == field_name] if field_name != "reserved" else [i]
        field_value = int.from_bytes(image[span[0]:span[-1] + 1], "little")
        where = f"byte {i}" if len(span) == 1 else f"bytes {span[0]}-{span[-1]} (little-endian), byte {i} of them"
        explained = 0 if init else image[i]
        rule = (f"LDTILECFG {operand_text(operands[0])} reads the 64 bytes at {address:#x}; TILECFG {where} is "
                f"{field_name}" + (": it must be 0 (else #GP)" if field_name == "reserved" else "")
                + (". The palette byte is 0, so LDTILECFG returns the tiles to INIT: every TILECFG byte 0."
                   if init else "."))
        table = Table(["TILECFG byte", "field", "from memory", "byte", "field's bytes", "field value"],
                      [[str(i), field_name, f"{address + i:#x}", f"{image[i]:02x}",
                        hex_bytes(image[span[0]:span[-1] + 1]), str(field_value)]])
        workings.append(ElementWorking("tilecfg", i, 1, f"tilecfg byte {i}: {field_name}", [
            Paragraph(rule), table, Check(f"TILECFG byte {i} ({field_name})", f"{explained:#04x}", f"{held[i]:#04x}")]))
    return workings


def _scalar_workings(instruction, before, after) -> list[ElementWorking]:
    """MOV, LEA and the arithmetic and logic of RESULT_WRITERS with a general-purpose register or memory
    destination: the operands' values before the step, the result at the operand's width, and the register
    (or memory) after.  (The flags they write: workings_flags.py.)"""
    mnemonic, operands = instruction.form.mnemonic, instruction.operands
    if not operands or any(isinstance(o, Reg) and o.name not in GPR_VIEWS for o in operands):
        return []
    dest = operands[0]
    if isinstance(dest, Reg):
        bits = GPR_VIEWS[dest.name].bits
    elif isinstance(dest, Mem) and mnemonic != "lea" and operand_bits(operands):
        bits = operand_bits(operands)
    else:
        return []
    mask = (1 << bits) - 1
    rows: list[list[str]] = []

    def value(o) -> int:
        """An operand's value before the step, at the destination's width, and a row saying where it came from."""
        v = operand_value(o, bits, before)
        where = "register" if isinstance(o, Reg) else f"immediate (to {bits} bits)" if isinstance(o, Imm) else (
            f"memory at {before.context.effective_address(o):#x}: {v.to_bytes(bits // 8, 'little').hex(' ')}")
        rows.append([operand_text(o), where, f"{v:#x}"])
        return v

    if mnemonic == "lea":
        if len(operands) != 2 or not isinstance(operands[1], Mem):
            return []
        result = before.context.effective_address(operands[1]) & mask  # LEA reads no memory: the address
        rows.append([operand_text(operands[1]), "the address it computes", f"{result:#x}"])
        how = "the address"
    elif mnemonic == "mov":
        if len(operands) != 2:
            return []
        result, how = value(operands[1]), "the source"
    elif mnemonic in ("add", "sub", "adc", "sbb"):
        if len(operands) != 2:
            return []
        a, b = value(operands[0]), value(operands[1])
        carry = before.state.read_register("rflags") & 1 if mnemonic in ("adc", "sbb") else 0  # CF is bit 0
        sign = "+" if mnemonic in ("add", "adc") else "-"
        result = (a + b + carry if sign == "+" else a - b - carry) & mask
        how = f"{a:#x} {sign} {b:#x}" + (f" {sign} CF ({carry})" if mnemonic in ("adc", "sbb") else "") \
            + f" mod 2^{bits}"
    elif mnemonic in ("and", "or", "xor"):
        if len(operands) != 2:
            return []
        a, b = value(operands[0]), value(operands[1])
        result = {"and": a & b, "or": a | b, "xor": a ^ b}[mnemonic]
        how = f"{a:#x} {mnemonic.upper()} {b:#x}"
    else:  # inc, dec, neg
        if len(operands) != 1:
            return []
        a = value(operands[0])
        if mnemonic == "neg":
            result, how = -a & mask, f"0 - {a:#x} mod 2^{bits}"
        else:
            result = (a + 1 if mnemonic == "inc" else a - 1) & mask
            how = f"{a:#x} {'+' if mnemonic == 'inc' else '-'} 1 mod 2^{bits}"
    text = f"{mnemonic.upper()} {', '.join(operand_text(o) for o in operands)}"
    blocks = [Table(["operand", "what", "value before the step"], rows),
              Paragraph(f"{text}: result = {how} = {result:#x} ({signed(result, bits)} signed, {bits} bits).")]
    if isinstance(dest, Mem):
        address = before.context.effective_address(dest)
        machine = after.memory.read(address, bits // 8)
        blocks.append(Check(f"the {bits // 8} bytes at {address:#x}", result.to_bytes(bits // 8, "little").hex(" "),
                            machine.hex(" ")))
        return [ElementWorking("memory", address, bits // 8, f"memory {address:#x} := {text}", blocks)]
    view = GPR_VIEWS[dest.name]
    full = GPR64[view.number]
    held = after.state.read_register(full)
    if bits >= 32:  # a 32-bit write zeroes bits 32-63; the panel's row is the whole register
        if bits == 32:
            blocks.append(Paragraph(f"Writing {dest.name} zeroes bits 32-63 of {full}."))
        blocks.append(Check(full, f"{result:#x}", f"{held:#x}"))
        return [ElementWorking(full, 0, 8, f"{full} := {text}", blocks)]
    blocks.append(Paragraph(f"{dest.name} is bits {view.shift}-{view.shift + bits - 1} of {full}; its other bits "
                            "are kept."))
    blocks.append(Check(dest.name, f"{result:#x}", f"{(held & view.mask) >> view.shift:#x}"))
    return [ElementWorking(full, view.shift // 8, bits // 8, f"{dest.name} ({full}) := {text}", blocks)]
