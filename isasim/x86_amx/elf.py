"""One function of an x86-64 ELF file (a relocatable .o from the compiler, or a linked program) as an
isasim program with the memory it needs.

``load_object(path, function, init)`` finds the function's symbol (its mangled name, its demangled
C++ name from binutils' c++filt with or without the parameter list, or an extern "C" name), takes its
bytes and:

* in a relocatable file, applies the relocations that fall inside the function (R_X86_64_PC32,
  PLT32, 32, 32S and 64, against sections or defined symbols), with the code at ``CODE_BASE`` and each
  data section a relocation reaches (.rodata constants of RIP-relative loads, .data, .bss) mapped after
  it at a fixed address, read-only unless the section is writable.  A relocation against an undefined
  symbol, or against code outside the function, is a call to another function: refused, naming the
  symbol and the instruction;
* in a linked file, moves the code to ``CODE_BASE`` (each RIP-relative displacement adjusted so that it
  still reaches its target) and maps the data sections it reaches at their link addresses;
* refuses, before anything runs, an instruction isasim does not simulate, naming its address, bytes
  and mnemonic (from iced-x86);
* maps a stack (STACK_SIZE bytes, rsp = its 16-byte aligned top - 8, where a CALL would have left the
  return address: RETURN_SENTINEL) and puts the init file's ``args`` in rdi, rsi, rdx, rcx, r8, r9
  as the System V ABI passes the first six integer or pointer arguments.

The file is read through isasim.core.elf_file, which checks every offset, size and index it reads, so a
damaged file is refused as any other bad input.  Every refusal is an IsasimError naming the file: one
line, exit status 2.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from ..core.elf_file import EM_X86_64, ElfFile, Section, Symbol, demangle, read_elf, shown
from ..core.errors import IsasimError
from ..core.program import Program
from ..core.trace import Init, RegionView
from .config import CODE_BASE

STACK_SIZE = 1 << 16  # 64 KiB: a kernel's frame is small, and a recorded trace holds all of it
STACK_TOP = 0x7FFF0000  # the stack is [STACK_TOP - STACK_SIZE, STACK_TOP)
RETURN_SENTINEL = 0xDEADBEEFDEADBEEF  # the return address the CALL would have pushed
ARGUMENT_REGISTERS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")
ADDRESS_LIMIT = 1 << 64


class _RelocationType(NamedTuple):
    name: str
    width: int  # bytes patched
    pc_relative: bool
    signed: bool


_R_X86_64 = {1: _RelocationType("R_X86_64_64", 8, False, False), 2: _RelocationType("R_X86_64_PC32", 4, True, True),
             4: _RelocationType("R_X86_64_PLT32", 4, True, True), 10: _RelocationType("R_X86_64_32", 4, False, False),
             11: _RelocationType("R_X86_64_32S", 4, False, True)}
_DATA_SECTIONS = (".rodata", ".data", ".bss", ".lrodata", ".ldata", ".lbss")  # of a linked program


class _Refused(IsasimError):
    pass


def _align(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def _iced_text(code: bytes, address: int) -> tuple[int, str, str]:
    """(length, mnemonic, Intel-syntax text) of the x86-64 instruction at the start of ``code``."""
    return _iced(code, address)[:3]


def _iced(code: bytes, address: int) -> tuple[int, str, str, bool]:
    """_iced_text's three, and whether the instruction has a RIP-relative memory operand."""
    import iced_x86

    instruction = iced_x86.Decoder(64, bytes(code[:15]), ip=address).decode()
    if instruction.is_invalid:
        return 1, "(bad)", "(bad)", False
    formatter = iced_x86.Formatter(iced_x86.FormatterSyntax.INTEL)
    return (instruction.len, formatter.format_mnemonic(instruction), formatter.format(instruction),
            instruction.is_ip_rel_memory_operand)


def _known(mnemonic: str) -> bool:
    """Whether isasim simulates some form of ``mnemonic``."""
    from .forms import amx, scalar

    return mnemonic in scalar.MNEMONICS or any(f.mnemonic.lower() == mnemonic for f in amx.FORMS)


def unsupported(code: bytes, base: int) -> list[tuple[int, bytes, str, str, str]]:
    """Each instruction of ``code`` (at ``base``) that isasim cannot simulate: (address, bytes, mnemonic,
    text, what isasim lacks: "" for the mnemonic, else the form)."""
    from ..core.errors import DecodeError
    from .decoder import decode_one

    out, pos = [], 0
    while pos < len(code):
        try:
            pos += len(decode_one(code, pos, base + pos).encoding)
        except DecodeError:
            length, mnemonic, text, rip_relative = _iced(code[pos:], base + pos)
            form = ("" if not _known(mnemonic) else
                    "a RIP-relative memory operand" if rip_relative else "these operands")
            out.append((base + pos, bytes(code[pos:pos + length]), mnemonic, text, form))
            pos += length
    return out


def _check_supported(code: bytes, name: str, path: str) -> None:
    missing = unsupported(code, CODE_BASE)
    if missing:
        address, encoding, mnemonic, text, form = missing[0]
        others = sorted({m for _a, _e, m, _t, _f in missing[1:]} - {mnemonic})
        more = (f"; {len(missing) - 1} more unsupported instruction{'s' if len(missing) > 2 else ''}"
                + (f" ({', '.join(others)})" if others else "")) if len(missing) > 1 else ""
        lacking = f" with {form}" if form else ""
        only = f" (only other forms of {mnemonic})" if form else ""
        raise _Refused(f"function '{name}': the instruction at {address:#x} ({encoding.hex(' ')}: {text}) "
                       f"is {mnemonic}{lacking}, which isasim does not simulate{only}{more}", source=path)


def _section_region(elf: ElfFile, section: Section, address: int) -> tuple[tuple[int, bytes, bool], RegionView]:
    """The memory region (and its view) of ``section`` loaded at ``address``."""
    data = elf.contents(section) or bytes(1)  # an empty section still has an address a pointer may name
    if address + len(data) > ADDRESS_LIMIT:
        raise _Refused(f"{section} ({len(data):#x} bytes at {address:#x}) does not fit below 2^64", source=elf.path)
    name = shown(section.name) if section.name else f"section {section.index}"  # a name to show, for the views
    return (address, data, section.writable), RegionView(name, address, "uint8", (1, len(data)), False)


def _function_name_at(elf: ElfFile, value: int, section: int | None = None) -> str | None:
    found = elf.function_at(value, section)
    return found.name if found is not None else None


def _instruction_at(code: bytes, offset: int) -> int:
    """The offset of the instruction holding byte ``offset`` of ``code`` (iced's lengths)."""
    pos = 0
    while pos < len(code):
        length = _iced_text(code[pos:], 0)[0]
        if pos + length > offset:
            return pos
        pos += length
    return offset


def _relocated(elf: ElfFile, symbol: Symbol, name: str):
    """A relocatable file's function with its relocations applied: (code, data regions, views)."""
    path = elf.path
    code = bytearray(elf.function_bytes(symbol, name))  # first: it checks that the symbol is in a section
    text = elf.sections[symbol.section]
    start = symbol.value
    size = len(code)
    regions, views, placed = [], [], {}
    next_free = _align(CODE_BASE + len(code), 0x1000)

    def place(section: Section) -> int:
        nonlocal next_free
        if section.index not in placed:
            if not section.loaded:
                raise _Refused(f"function '{name}' refers to {section}, which is not loaded at run time", source=path)
            address = _align(next_free, max(16, elf.alignment(section)))
            region, view = _section_region(elf, section, address)
            regions.append(region)
            views.append(view)
            placed[section.index] = address
            next_free = _align(address + len(region[1]), 0x1000)
        return placed[section.index]

    for table in elf.relocation_tables(text):
        for rel in elf.relocations(table):
            offset = rel.offset - start
            if not 0 <= offset < size:
                continue
            at = CODE_BASE + _instruction_at(bytes(code), offset)
            kind = _R_X86_64.get(rel.type)
            target = rel.symbol
            label = target.name or (elf.sections[target.section].name if target.in_section else "")
            if target.index == 0:  # r_info's symbol 0: a value with no symbol, which nothing here places
                raise _Refused(f"function '{name}': relocation {rel.index} of {table} (at {at:#x}) names no symbol",
                               source=path)
            if not target.defined:
                raise _Refused(f"function '{name}' calls or uses '{shown(demangle([label]).get(label, label))}' "
                               f"(the instruction at {at:#x}), which is not in this file: isasim runs one "
                               f"function by itself", source=path)
            if kind is None:
                raise _Refused(f"function '{name}': relocation type {rel.type} at {at:#x} against "
                               f"'{shown(label)}' is not supported (R_X86_64_PC32, PLT32, 32, 32S and 64 are)",
                               source=path)
            if not target.in_section:
                raise _Refused(f"function '{name}': the relocation at {at:#x} is against '{shown(label)}' "
                               f"({target.where}), which isasim does not place", source=path)
            if offset + kind.width > size:
                raise _Refused(f"function '{name}': relocation {rel.index} of {table} ({kind.name}) patches "
                               f"{kind.width} bytes at offset {offset:#x}, past the function's end ({size:#x} bytes)",
                               source=path)
            addend = rel.addend if rel.addend is not None else int.from_bytes(
                code[offset:offset + kind.width], "little", signed=kind.signed)
            within = target.value + (addend + 4 if kind.pc_relative else addend)  # the byte it reaches, for PC32
            if target.section == symbol.section:
                if not start <= within < start + size:  # code of another function in the same section
                    other = _function_name_at(elf, within, target.section) or label
                    raise _Refused(f"function '{name}' calls or uses '{shown(demangle([other]).get(other, other))}' "
                                   f"(the instruction at {at:#x}): isasim runs one function by itself",
                                   source=path)
                s = CODE_BASE + target.value - start
            else:
                section = elf.sections[target.section]
                if section.executable:
                    other = _function_name_at(elf, within, target.section) or label
                    raise _Refused(f"function '{name}' calls or uses '{shown(demangle([other]).get(other, other))}' "
                                   f"(the instruction at {at:#x}): isasim runs one function by itself",
                                   source=path)
                s = place(section) + target.value
            value = s + addend - (CODE_BASE + offset if kind.pc_relative else 0)
            width = kind.width * 8
            low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if kind.signed else (0, (1 << width) - 1)
            if kind.name == "R_X86_64_64":
                value %= 1 << 64
            elif not low <= value <= high:
                raise _Refused(f"function '{name}': {kind.name} at {at:#x} against '{shown(label)}' does not fit "
                               f"({value:#x})", source=path)
            code[offset:offset + kind.width] = (value % (1 << width)).to_bytes(kind.width, "little")
    return bytes(code), regions, views


def _moved(elf: ElfFile, symbol: Symbol, name: str):
    """A linked file's function moved to CODE_BASE: (code, data regions, views)."""
    import iced_x86

    path = elf.path
    link = symbol.value
    code = bytearray(elf.function_bytes(symbol, name))
    end = link + len(code)
    delta = CODE_BASE - link
    regions, views, placed = [], [], set()
    for data in elf.sections:  # the data a linked program reaches by absolute address, at its address
        if data.loaded and not data.executable and data.size and data.name.startswith(_DATA_SECTIONS):
            if data.address < CODE_BASE + len(code) and CODE_BASE < data.address + data.size:
                raise _Refused(f"{data} of this program is linked at {data.address:#x}, where "
                               f"isasim places the code of '{name}' ({CODE_BASE:#x})", source=path)
            region, view = _section_region(elf, data, data.address)
            regions.append(region)
            views.append(view)
            placed.add(data.index)
    decoder = iced_x86.Decoder(64, bytes(code), ip=link)
    for instruction in decoder:
        at = CODE_BASE + instruction.ip - link
        if instruction.is_invalid:
            continue  # refused with its bytes by _check_supported
        if instruction.is_ip_rel_memory_operand:
            target = instruction.ip_rel_memory_address
            if not link <= target < end:
                owner = next((s for s in elf.sections if s.loaded and s.address <= target < s.address + s.size), None)
                if owner is None or owner.executable:
                    raise _Refused(f"function '{name}': the instruction at {at:#x} reads {target:#x}, which is "
                                   f"{'code' if owner is not None else 'in no section of the file'}",
                                   source=path)
                if owner.index not in placed:
                    region, view = _section_region(elf, owner, owner.address)
                    regions.append(region)
                    views.append(view)
                    placed.add(owner.index)
                offsets = decoder.get_constant_offsets(instruction)
                where = instruction.ip - link + offsets.displacement_offset
                displacement = int.from_bytes(code[where:where + 4], "little", signed=True) - delta
                if not -(1 << 31) <= displacement < 1 << 31:
                    raise _Refused(f"function '{name}': {target:#x} is out of reach of the code at {at:#x}",
                                   source=path)
                code[where:where + 4] = (displacement % (1 << 32)).to_bytes(4, "little")
        elif instruction.flow_control in (iced_x86.FlowControl.CALL, iced_x86.FlowControl.UNCONDITIONAL_BRANCH,
                                          iced_x86.FlowControl.CONDITIONAL_BRANCH):
            target = instruction.near_branch_target
            if not link <= target < end:
                raise _Refused(f"function '{name}' calls or uses {_called(_function_name_at(elf, target), target)} "
                               f"(the instruction at {at:#x}): isasim runs one function by itself", source=path)
        elif instruction.flow_control in (iced_x86.FlowControl.INDIRECT_CALL, iced_x86.FlowControl.INDIRECT_BRANCH):
            raise _Refused(f"function '{name}': the indirect call or jump at {at:#x} leaves the function",
                           source=path)
    return bytes(code), regions, views


def _called(symbol: str | None, address: int | None) -> str:
    """'amx_block' (demangled), or what is known of code no symbol covers (a PLT stub, say)."""
    if symbol:
        return f"'{shown(demangle([symbol]).get(symbol, symbol))}'"
    return "code outside it" + (f" (at {address:#x} in the file, no function's symbol covers it)"
                                if address is not None else "")


def _check_branches_stay_inside(code: bytes, name: str, path: str, name_at) -> None:
    """A call or jump out of the function that no relocation showed (the assembler resolves one to a
    local function of the same section itself) is refused as a call to that function."""
    import iced_x86

    branches = (iced_x86.FlowControl.CALL, iced_x86.FlowControl.UNCONDITIONAL_BRANCH,
                iced_x86.FlowControl.CONDITIONAL_BRANCH)
    for instruction in iced_x86.Decoder(64, code, ip=CODE_BASE):
        if instruction.is_invalid or instruction.flow_control not in branches:
            continue
        target = instruction.near_branch_target
        if not CODE_BASE <= target < CODE_BASE + len(code):
            raise _Refused(f"function '{name}' calls or uses {_called(name_at(target), None)} (the instruction "
                           f"at {instruction.ip:#x}): isasim runs one function by itself", source=path)


def _check_no_overlap(taken: list[tuple[int, int, str]], path: str) -> None:
    """The code, the file's sections and the stack do not overlap (a damaged linked program can put a
    section on another, or on the stack)."""
    spans = sorted(taken)
    for (_low, high, first), (low, _high, second) in zip(spans, spans[1:]):
        if low < high:
            raise _Refused(f"{first} and {second} overlap in memory (from {low:#x})", source=path)


def load_object(path: str, function: str, init: Init) -> tuple[Program, Init]:
    """The program and initial state to run ``function`` of the ELF file at ``path`` with ``init``
    (whose ``args`` become the argument registers)."""
    from .decoder import disassemble

    elf = read_elf(path, EM_X86_64)
    symbol, name = elf.find_function(function)
    if elf.relocatable:
        code, regions, views = _relocated(elf, symbol, name)
        _check_branches_stay_inside(code, name, path, lambda target: _function_name_at(
            elf, symbol.value + target - CODE_BASE, symbol.section))
    else:
        code, regions, views = _moved(elf, symbol, name)
    _check_supported(code, name, path)
    program = disassemble(code, CODE_BASE, source=f"{path}:{name}")
    if symbol.name.replace("_", "").isalnum() and symbol.name.isascii():  # the recorded program names it
        program.labels[symbol.name] = CODE_BASE

    if len(init.args) > len(ARGUMENT_REGISTERS):
        raise IsasimError(f"init.args: {len(init.args)} arguments; the System V ABI passes the first "
                          f"{len(ARGUMENT_REGISTERS)} in registers and isasim does not put more on the stack")
    regs = dict(init.regs)
    for register, value in zip(ARGUMENT_REGISTERS, init.args):
        if register in regs:
            raise IsasimError(f"init.args gives {register} and so does init.regs.{register}: give it once")
        regs[register] = value % (1 << 64)
    taken = [(CODE_BASE, CODE_BASE + max(len(code), 1), f"the code of {name}")] + [
        (a, a + len(d), shown(view.name) if view.name.startswith("section ") else f"section {shown(view.name)}")
        for (a, d, _w), view in zip(regions, views)]  # a nameless section's view is already "section N"
    stack_base = STACK_TOP - STACK_SIZE
    stack = bytearray(STACK_SIZE)
    stack[-8:] = RETURN_SENTINEL.to_bytes(8, "little")
    if "rsp" not in regs:
        regions.append((stack_base, bytes(stack), True))
        views.append(RegionView("stack", stack_base, "uint8", (1, STACK_SIZE), False))
        regs["rsp"] = STACK_TOP - 8
        taken.append((stack_base, STACK_TOP, "the stack"))
    _check_no_overlap(taken, path)
    for address, data, _writable in init.memory:
        for low, high, what in taken:
            if address < high and low < address + len(data):
                raise IsasimError(f"init.memory: the region at {address:#x} overlaps {what} "
                                  f"({low:#x}..{high:#x}); place it elsewhere")
    memory = sorted(list(init.memory) + regions, key=lambda region: region[0])
    return program, replace(init, regs=regs, memory=memory, views=list(init.views) + views, args=[])
