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

Every refusal is an IsasimError naming the file: one line, exit status 2.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace

from ..core.errors import IsasimError
from ..core.program import Program
from ..core.trace import Init, RegionView

CODE_BASE = 0x400000  # isasim's x86 code base (isasim.x86_amx.CODE_BASE)
STACK_SIZE = 1 << 16  # 64 KiB: a kernel's frame is small, and a recorded trace holds all of it
STACK_TOP = 0x7FFF0000  # the stack is [STACK_TOP - STACK_SIZE, STACK_TOP)
RETURN_SENTINEL = 0xDEADBEEFDEADBEEF  # the return address the CALL would have pushed
ARGUMENT_REGISTERS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")

# relocation type -> (name, width in bytes, PC-relative, signed)
_R_X86_64 = {1: ("R_X86_64_64", 8, False, False), 2: ("R_X86_64_PC32", 4, True, True),
             4: ("R_X86_64_PLT32", 4, True, True), 10: ("R_X86_64_32", 4, False, False),
             11: ("R_X86_64_32S", 4, False, True)}
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR = 0x1, 0x2, 0x4
_DATA_SECTIONS = (".rodata", ".data", ".bss", ".lrodata", ".ldata", ".lbss")  # of a linked program


class _Refused(IsasimError):
    pass


def _align(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def demangle(names: list[str]) -> dict[str, str]:
    """Mangled C++ name -> its demangled form, through binutils' c++filt (empty without it)."""
    mangled = [n for n in names if n.startswith("_Z")]
    tool = shutil.which("c++filt")
    if not mangled or tool is None:
        return {}
    try:
        done = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True, text=True,
                              timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return {}
    lines = done.stdout.splitlines()
    return dict(zip(mangled, lines)) if len(lines) == len(mangled) else {}


def _open(path: str):
    try:
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError:
        raise IsasimError("reading an object file needs pyelftools: pip install pyelftools", source=path) from None
    try:
        data = open(path, "rb").read()
    except OSError as error:
        raise IsasimError(f"cannot read ({error.strerror})", source=path) from None
    import io

    try:
        elf = ELFFile(io.BytesIO(data))
        machine = elf["e_machine"]
        symtab = elf.get_section_by_name(".symtab")
    except (ELFError, ValueError, KeyError, AssertionError, OSError) as error:
        raise IsasimError(f"not an ELF file isasim can read ({error})", source=path) from None
    if machine != "EM_X86_64" or elf.elfclass != 64:
        raise IsasimError(f"an ELF file for {machine} ({elf.elfclass}-bit), not x86-64", source=path)
    if symtab is None:
        raise IsasimError("the ELF file has no symbol table (stripped?): isasim finds functions by name",
                          source=path)
    return elf, symtab


def find_function(elf, symtab, function: str, path: str):
    """The symbol named ``function`` (mangled, demangled with or without parameters, or plain)."""
    symbols = [s for s in symtab.iter_symbols() if s.name and s["st_info"]["type"] in ("STT_FUNC", "STT_NOTYPE")
               and s["st_shndx"] != "SHN_ABS"]
    names = demangle([s.name for s in symbols])
    wanted = function.strip()

    def matches(symbol) -> bool:
        readable = names.get(symbol.name, symbol.name)
        return wanted in (symbol.name, readable) or readable.split("(", 1)[0] == wanted

    found = [s for s in symbols if matches(s)]
    defined = [s for s in found if s["st_shndx"] != "SHN_UNDEF"]
    if not defined:
        if found:
            raise IsasimError(f"function '{wanted}' is not defined in this file (only called from it)",
                              source=path)
        functions = sorted(names.get(s.name, s.name) for s in symbols
                           if s["st_info"]["type"] == "STT_FUNC" and s["st_shndx"] != "SHN_UNDEF")
        listed = ", ".join(functions[:12]) + (f" and {len(functions) - 12} more" if len(functions) > 12 else "")
        raise IsasimError(f"no function '{wanted}' in this file (its functions: {listed or 'none'})",
                          source=path)
    unique = {(s["st_shndx"], s["st_value"]) for s in defined}
    if len(unique) > 1:
        raise IsasimError(f"'{wanted}' names {len(unique)} functions ("
                          + ", ".join(sorted(names.get(s.name, s.name) for s in defined))
                          + "): give the mangled name or the full signature", source=path)
    symbol = next(s for s in defined if s["st_info"]["type"] == "STT_FUNC") if any(
        s["st_info"]["type"] == "STT_FUNC" for s in defined) else defined[0]
    return symbol, names.get(symbol.name, symbol.name)


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
    from . import amx, scalar

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


def _section_region(section, address: int, name: str) -> tuple[tuple[int, bytes, bool], RegionView]:
    size = section["sh_size"]
    data = bytes(size) if section["sh_type"] == "SHT_NOBITS" else section.data()
    data = data or bytes(1)  # an empty section still has an address a pointer may name
    writable = bool(section["sh_flags"] & _SHF_WRITE)
    return (address, data, writable), RegionView(name, address, "uint8", (1, len(data)), False)


def _symbol_at(symtab, shndx: int, offset: int) -> str | None:
    for symbol in symtab.iter_symbols():
        if (symbol["st_shndx"] == shndx and symbol.name and symbol["st_info"]["type"] == "STT_FUNC"
                and symbol["st_value"] <= offset < symbol["st_value"] + max(symbol["st_size"], 1)):
            return symbol.name
    return None


def _instruction_at(code: bytes, offset: int) -> int:
    """The offset of the instruction holding byte ``offset`` of ``code`` (iced's lengths)."""
    pos = 0
    while pos < len(code):
        length = _iced_text(code[pos:], 0)[0]
        if pos + length > offset:
            return pos
        pos += length
    return offset


def _relocated(elf, symtab, symbol, name: str, path: str):
    """A relocatable file's function with its relocations applied: (code, data regions, views)."""
    text = elf.get_section(symbol["st_shndx"])
    start, size = symbol["st_value"], symbol["st_size"]
    code = bytearray(text.data()[start:start + size])
    regions, views, placed = [], [], {}
    next_free = _align(CODE_BASE + len(code), 0x1000)

    def place(index: int) -> int:
        nonlocal next_free
        if index not in placed:
            section = elf.get_section(index)
            if not section["sh_flags"] & _SHF_ALLOC:
                raise _Refused(f"function '{name}' refers to section {section.name}, which is not loaded "
                               f"at run time", source=path)
            address = _align(next_free, max(16, section["sh_addralign"] or 1))
            region, view = _section_region(section, address, section.name or f"section {index}")
            regions.append(region)
            views.append(view)
            placed[index] = address
            next_free = _align(address + len(region[1]), 0x1000)
        return placed[index]

    for relocations in elf.iter_sections():
        if relocations["sh_type"] not in ("SHT_RELA", "SHT_REL") or relocations["sh_info"] != symbol["st_shndx"]:
            continue
        table = elf.get_section(relocations["sh_link"])
        for rel in relocations.iter_relocations():
            offset = rel["r_offset"] - start
            if not 0 <= offset < size:
                continue
            at = CODE_BASE + _instruction_at(bytes(code), offset)
            kind = _R_X86_64.get(rel["r_info_type"])
            target = table.get_symbol(rel["r_info_sym"])
            shndx = target["st_shndx"]
            label = target.name or (elf.get_section(shndx).name if isinstance(shndx, int) else "")
            if shndx == "SHN_UNDEF":
                raise _Refused(f"function '{name}' calls or uses '{demangle([label]).get(label, label)}' "
                               f"(the instruction at {at:#x}), which is not in this file: isasim runs one "
                               f"function by itself", source=path)
            if kind is None:
                raise _Refused(f"function '{name}': relocation type {rel['r_info_type']} at {at:#x} against "
                               f"'{label}' is not supported (R_X86_64_PC32, PLT32, 32, 32S and 64 are)",
                               source=path)
            if not isinstance(shndx, int):
                raise _Refused(f"function '{name}': the relocation at {at:#x} is against '{label}' ({shndx}), "
                               f"which isasim does not place", source=path)
            addend = rel["r_addend"] if rel.is_RELA() else int.from_bytes(
                code[offset:offset + kind[1]], "little", signed=kind[3])
            within = target["st_value"] + (addend + 4 if kind[2] else addend)  # the byte it reaches, for PC32
            if shndx == symbol["st_shndx"]:
                if not start <= within < start + size:  # code of another function in the same section
                    other = _symbol_at(symtab, shndx, within) or label
                    raise _Refused(f"function '{name}' calls or uses '{demangle([other]).get(other, other)}' "
                                   f"(the instruction at {at:#x}): isasim runs one function by itself",
                                   source=path)
                s = CODE_BASE + target["st_value"] - start
            else:
                section = elf.get_section(shndx)
                if section["sh_flags"] & _SHF_EXECINSTR:
                    other = _symbol_at(symtab, shndx, within) or label
                    raise _Refused(f"function '{name}' calls or uses '{demangle([other]).get(other, other)}' "
                                   f"(the instruction at {at:#x}): isasim runs one function by itself",
                                   source=path)
                s = place(shndx) + target["st_value"]
            value = s + addend - (CODE_BASE + offset if kind[2] else 0)
            width = kind[1] * 8
            low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if kind[3] else (0, (1 << width) - 1)
            if kind[0] == "R_X86_64_64":
                value %= 1 << 64
            elif not low <= value <= high:
                raise _Refused(f"function '{name}': {kind[0]} at {at:#x} against '{label}' does not fit "
                               f"({value:#x})", source=path)
            code[offset:offset + kind[1]] = (value % (1 << width)).to_bytes(kind[1], "little")
    return bytes(code), regions, views


def _moved(elf, symtab, symbol, name: str, path: str):
    """A linked file's function moved to CODE_BASE: (code, data regions, views)."""
    import iced_x86

    link = symbol["st_value"]
    section = elf.get_section(symbol["st_shndx"])
    offset = link - section["sh_addr"]
    code = bytearray(section.data()[offset:offset + symbol["st_size"]])
    end = link + len(code)
    delta = CODE_BASE - link
    regions, views, placed = [], [], set()
    for data in elf.iter_sections():  # the data a linked program reaches by absolute address, at its address
        if (data["sh_flags"] & _SHF_ALLOC and not data["sh_flags"] & _SHF_EXECINSTR and data["sh_size"]
                and data.name.startswith(_DATA_SECTIONS)):
            if data["sh_addr"] < CODE_BASE + len(code) and CODE_BASE < data["sh_addr"] + data["sh_size"]:
                raise _Refused(f"section {data.name} of this program is linked at {data['sh_addr']:#x}, where "
                               f"isasim places the code of '{name}' ({CODE_BASE:#x})", source=path)
            region, view = _section_region(data, data["sh_addr"], data.name)
            regions.append(region)
            views.append(view)
            placed.add(data.name)
    decoder = iced_x86.Decoder(64, bytes(code), ip=link)
    for instruction in decoder:
        at = CODE_BASE + instruction.ip - link
        if instruction.is_invalid:
            continue  # refused with its bytes by _check_supported
        if instruction.is_ip_rel_memory_operand:
            target = instruction.ip_rel_memory_address
            if not link <= target < end:
                owner = next((s for s in elf.iter_sections() if s["sh_flags"] & _SHF_ALLOC and s["sh_addr"]
                              <= target < s["sh_addr"] + s["sh_size"]), None)
                if owner is None or owner["sh_flags"] & _SHF_EXECINSTR:
                    raise _Refused(f"function '{name}': the instruction at {at:#x} reads {target:#x}, which is "
                                   f"{'code' if owner is not None else 'in no section of the file'}",
                                   source=path)
                if owner.name not in placed:
                    region, view = _section_region(owner, owner["sh_addr"], owner.name)
                    regions.append(region)
                    views.append(view)
                    placed.add(owner.name)
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
                other = next((s.name for s in symtab.iter_symbols() if s["st_info"]["type"] == "STT_FUNC"
                              and s["st_value"] <= target < s["st_value"] + max(s["st_size"], 1)), None)
                raise _Refused(f"function '{name}' calls or uses {_called(other, target)} (the instruction at "
                               f"{at:#x}): isasim runs one function by itself", source=path)
        elif instruction.flow_control in (iced_x86.FlowControl.INDIRECT_CALL, iced_x86.FlowControl.INDIRECT_BRANCH):
            raise _Refused(f"function '{name}': the indirect call or jump at {at:#x} leaves the function",
                           source=path)
    return bytes(code), regions, views


def _called(symbol: str | None, address: int | None) -> str:
    """'amx_block' (demangled), or what is known of code no symbol covers (a PLT stub, say)."""
    if symbol:
        return f"'{demangle([symbol]).get(symbol, symbol)}'"
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


def load_object(path: str, function: str, init: Init) -> tuple[Program, Init]:
    """The program and initial state to run ``function`` of the ELF file at ``path`` with ``init``
    (whose ``args`` become the argument registers)."""
    from .decoder import disassemble

    elf, symtab = _open(path)
    symbol, name = find_function(elf, symtab, function, path)
    if not isinstance(symbol["st_shndx"], int):
        raise IsasimError(f"'{name}' is not in a section of the file ({symbol['st_shndx']})", source=path)
    if symbol["st_size"] == 0:
        raise IsasimError(f"'{name}' has no size in the symbol table: isasim cannot tell where it ends",
                          source=path)
    if elf["e_type"] == "ET_REL":
        code, regions, views = _relocated(elf, symtab, symbol, name, path)
        _check_branches_stay_inside(code, name, path, lambda target: _symbol_at(
            symtab, symbol["st_shndx"], symbol["st_value"] + target - CODE_BASE))
    else:
        code, regions, views = _moved(elf, symtab, symbol, name, path)
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
    stack_base = STACK_TOP - STACK_SIZE
    stack = bytearray(STACK_SIZE)
    stack[-8:] = RETURN_SENTINEL.to_bytes(8, "little")
    if "rsp" not in regs:
        regions.append((stack_base, bytes(stack), True))
        views.append(RegionView("stack", stack_base, "uint8", (1, STACK_SIZE), False))
        regs["rsp"] = STACK_TOP - 8
    code_end = CODE_BASE + max(len(code), 1)
    taken = [(CODE_BASE, code_end, f"the code of {name}")] + [
        (a, a + len(d), view.name) for (a, d, _w), view in zip(regions, views)]
    for address, data, _writable in init.memory:
        for low, high, what in taken:
            if address < high and low < address + len(data):
                raise IsasimError(f"init.memory: the region at {address:#x} overlaps {what} "
                                  f"({low:#x}..{high:#x}); place it elsewhere")
    memory = sorted(list(init.memory) + regions, key=lambda region: region[0])
    return program, replace(init, regs=regs, memory=memory, views=list(init.views) + views, args=[])
