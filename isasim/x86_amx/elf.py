"""One function of an x86-64 ELF file (a relocatable .o from the compiler, or a linked program) as an
isasim program with the memory it needs.

``load_object(path, function, init)`` finds the function's symbol (its mangled name, its demangled
C++ name from binutils' c++filt with or without the parameter list, or an extern "C" name), takes its
bytes and:

* places the function at ``CODE_BASE`` and every function it calls (directly, or through a pointer
  its code takes) after it, one after the other, so that CALL and RET run them on the simulated stack;
* in a relocatable file, applies the relocations that fall inside those functions (R_X86_64_PC32,
  PLT32, 32, 32S and 64, against sections or defined symbols; GOTPCREL, GOTPCRELX and REX_GOTPCRELX,
  -fPIC's, through a read-only GOT after the data with a slot per symbol), with each data section a relocation
  reaches (.rodata constants of RIP-relative loads and jump tables, .data, .bss) mapped after the code
  at a fixed address, read-only unless the section is writable, and the relocations inside those
  sections applied too (a jump table's entries);
* in a linked file, moves the code (each RIP-relative displacement adjusted so that it still reaches
  its target, each call to another function re-aimed) and maps the data sections at their link
  addresses;
* resolves a call to ``memset``, ``memcpy``, ``memmove``, ``__stack_chk_fail`` or ``abort`` (an undefined symbol of
  an object file, or a function of that name in a linked one) to an isasim built-in
  (forms/control.py), placed after the functions; any other symbol the code reaches and the file does
  not define is refused before the run, naming the symbol and the function that needs it;
* when the code reads fs:/gs: memory and the init gives no fs_base, maps the default thread block
  (TLS_BASE: its own address at fs:0, DEFAULT_CANARY at fs:0x28, where -fstack-protector code reads
  its canary);
* refuses, before anything runs, an instruction isasim does not simulate, naming its address, bytes
  and mnemonic (from iced-x86);
* maps a stack (STACK_SIZE bytes, rsp where a CALL would have left the return address: RETURN_SENTINEL)
  and puts the init file's ``args`` where the System V ABI passes integer and pointer arguments: the
  first six in rdi, rsi, rdx, rcx, r8, r9, the rest on the stack above the return address, eightbyte
  by eightbyte in order (the seventh at [rsp+8]), with rsp+8 16-byte aligned at entry.

The file is read through isasim.core.elf_file, which checks every offset, size and index it reads, so a
damaged file is refused as any other bad input.  Every refusal is an IsasimError naming the file: one
line, exit status 2.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import iced_x86

from ..core.elf_file import EM_X86_64, ElfFile, Section, Symbol, demangle, read_elf, shown
from ..core.errors import IsasimError
from ..core.program import Program
from ..core.trace import Init, RegionView
from .config import CODE_BASE
from .encoding.iced import CODE_NAMES
from .forms.control import BUILTINS, BuiltinForm
from .instructions import make_instruction
from .operands import Mem, Target

STACK_SIZE = 1 << 16  # 64 KiB: a kernel's frame is small, and a recorded trace holds all of it
STACK_TOP = 0x7FFF0000  # the stack is [STACK_TOP - STACK_SIZE, STACK_TOP)
RETURN_SENTINEL = 0xDEADBEEFDEADBEEF  # the return address the CALL would have pushed
# The thread pointer of code that reads fs: (the stack protector's canary at fs:0x28), when the init gives no
# fs_base: a block of TLS_SIZE bytes at TLS_BASE holding, as glibc's thread control block does, its own address
# at fs:0 and the canary at fs:0x28 (DEFAULT_CANARY: its low byte 0, as glibc's, so a string copy stops at it).
TLS_BASE = 0x7FFD0000
TLS_SIZE = 0x1000
CANARY_OFFSET = 0x28
DEFAULT_CANARY = 0x2F8D5A3C91E6B400
ARGUMENT_REGISTERS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")
ADDRESS_LIMIT = 1 << 64


def thread_block(canary: int = DEFAULT_CANARY) -> bytes:
    """The TLS_SIZE bytes of the default thread block: its address at fs:0, ``canary`` at fs:0x28."""
    block = bytearray(TLS_SIZE)
    block[0:8] = TLS_BASE.to_bytes(8, "little")
    block[CANARY_OFFSET:CANARY_OFFSET + 8] = canary.to_bytes(8, "little")
    return bytes(block)


class _RelocationType(NamedTuple):
    name: str
    width: int  # bytes patched
    pc_relative: bool
    signed: bool
    through_got: bool = False  # G + GOT + A - P: the field reaches a GOT slot that holds the symbol's address


_R_X86_64 = {1: _RelocationType("R_X86_64_64", 8, False, False), 2: _RelocationType("R_X86_64_PC32", 4, True, True),
             4: _RelocationType("R_X86_64_PLT32", 4, True, True), 10: _RelocationType("R_X86_64_32", 4, False, False),
             11: _RelocationType("R_X86_64_32S", 4, False, True),
             # -fPIC's global data and -fno-plt's calls: mov rax, QWORD PTR [rip+sym@GOTPCREL], call [rip+..]
             9: _RelocationType("R_X86_64_GOTPCREL", 4, True, True, True),
             41: _RelocationType("R_X86_64_GOTPCRELX", 4, True, True, True),
             42: _RelocationType("R_X86_64_REX_GOTPCRELX", 4, True, True, True)}
_SUPPORTED_RELOCATIONS = "R_X86_64_PC32, PLT32, 32, 32S, 64, GOTPCREL, GOTPCRELX and REX_GOTPCRELX are"
BUILTIN_SIZE = len(BuiltinForm.ENCODING)  # each built-in a call reaches: an instruction after the functions
_DIRECT_BRANCHES = (iced_x86.FlowControl.CALL, iced_x86.FlowControl.UNCONDITIONAL_BRANCH,
                    iced_x86.FlowControl.CONDITIONAL_BRANCH)
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
    from .forms import amx, amx_extensions, scalar

    return (mnemonic in scalar.MNEMONICS or any(f.mnemonic.lower() == mnemonic for f in amx.FORMS)
            or mnemonic in amx_extensions.MNEMONICS)


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


def _check_supported(code: bytes, name: str, path: str, owner=lambda address: None) -> None:
    """Refuse the code if it holds an instruction isasim does not simulate, naming the first (in the function
    ``owner(address)`` names: a function the one asked for calls) and counting the others."""
    missing = unsupported(code, CODE_BASE)
    if missing:
        address, encoding, mnemonic, text, form = missing[0]
        name = owner(address) or name
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


def _extension_length(code: bytes, offset: int, address: int) -> int:
    """The length of an AMX-extension instruction (forms/amx_extensions.py: AMX-FP8's VEX map 5, AMX-MOVRS,
    AMX-AVX512's EVEX forms...) at ``offset``, which iced-x86 1.21 does not know; 0 if there is none."""
    from .decoder import decode_amx, decode_amx_evex
    from .forms import amx_extensions

    if code[offset:offset + 1] not in (b"\xc4", b"\x62"):
        return 0
    try:
        instruction = decode_amx(code, offset, address) or decode_amx_evex(code, offset, address)
    except IsasimError:
        return 0
    return len(instruction.encoding) if instruction is not None and instruction.form in amx_extensions.FORMS else 0


def _decoded(code: bytes, ip: int):
    """(decoder, instruction) for iced's instructions of ``code``, stepping over the AMX-extension instructions
    iced does not know so that the walk stays in step with the instruction boundaries."""
    import iced_x86

    decoder = iced_x86.Decoder(64, code, ip=ip)
    while decoder.can_decode:
        offset = decoder.position
        length = _extension_length(code, offset, ip + offset)
        if length:
            decoder.position, decoder.ip = offset + length, ip + offset + length
            continue
        yield decoder, decoder.decode()


def _instruction_at(code: bytes, offset: int) -> int:
    """The offset of the instruction holding byte ``offset`` of ``code`` (iced's lengths)."""
    pos = 0
    while pos < len(code):
        length = _extension_length(code, pos, 0) or _iced_text(code[pos:], 0)[0]
        if pos + length > offset:
            return pos
        pos += length
    return offset


def _display(name: str) -> str:
    return shown(demangle([name]).get(name, name))


class _Function(NamedTuple):
    """A function of the program: its symbol, the name messages call it by, and where it is placed."""

    symbol: Symbol
    name: str
    address: int


class _Layout:
    """The functions a run reaches (the one asked for first, at CODE_BASE, then each function it calls, one
    after the other), the built-ins it calls (after them, BUILTIN_SIZE bytes each) and where each goes."""

    def __init__(self, entry: Symbol, name: str):
        self.functions: list[_Function] = [_Function(entry, name, CODE_BASE)]
        self.end = CODE_BASE + entry.size
        self.builtins: list[str] = []

    def function(self, symbol: Symbol) -> _Function:
        """The placed function of ``symbol``, placed now if it is new."""
        for function in self.functions:
            if function.symbol == symbol:
                return function
        function = _Function(symbol, _display(symbol.name), self.end)
        self.functions.append(function)
        self.end += symbol.size
        return function

    def builtin(self, name: str) -> None:
        if name not in self.builtins:
            self.builtins.append(name)

    def builtin_address(self, name: str) -> int:
        return self.end + BUILTIN_SIZE * self.builtins.index(name)

    @property
    def code_end(self) -> int:
        return self.end + BUILTIN_SIZE * len(self.builtins)


def _not_here(caller: str, callee: str, at: int, path: str) -> _Refused:
    return _Refused(f"function '{caller}' calls or uses '{callee}' (the instruction at {at:#x}), which is neither "
                    f"in this file nor an isasim built-in ({', '.join(BUILTINS)}); link it in, or run a function "
                    "that does not need it", source=path)


def _code_target(elf: ElfFile, layout: _Layout, caller: str, within: int, section: int, label: str, at: int,
                 path: str) -> _Function:
    """The function holding byte ``within`` of executable section ``section`` (placed if new)."""
    callee = elf.function_at(within, section)
    if callee is None or not callee.size:
        raise _Refused(f"function '{caller}' calls or uses code at '{shown(label)}' (the instruction at {at:#x}) "
                       "that no function's symbol covers", source=path)
    return layout.function(callee)


def _relocated(elf: ElfFile, symbol: Symbol, name: str):
    """A relocatable file's function and every function it calls, with their relocations applied, and the
    built-ins it calls: (code, data regions, views, layout).  The data sections the code (or their own
    relocations) reach go after the code, in the order they are first reached, once every function is placed."""
    path = elf.path
    layout = _Layout(symbol, name)
    codes: dict[int, bytearray] = {}
    sections: list[Section] = []  # the data sections reached, in order
    contents: dict[int, bytearray] = {}
    placed: dict[int, int] = {}  # section index -> its address, once the code's size is known
    pending: list[tuple] = []  # relocations to patch once every address is known
    anchors: dict[int, set[int]] = {}  # data section -> the offsets in it the code's relocations name
    table_owner = [0]  # the data section whose relocations are being read
    got: dict[int, tuple] = {}  # symbol index -> (its GOT slot, its address once known)
    got_base = [0]  # the GOT's address, once every section is placed

    def reach(section: Section) -> Section:
        if section.index not in contents:
            if not section.loaded:
                raise _Refused(f"function '{name}' refers to {section}, which is not loaded at run time", source=path)
            contents[section.index] = bytearray(elf.contents(section) or bytes(1))
            sections.append(section)
        return section

    def apply(table: Section, data: bytearray, start: int, base, owner: str, code_at, in_code: bool) -> None:
        """Note the relocations of ``table`` that fall in ``data`` (bytes ``start``.. of its section; ``base()``
        its address once known); ``code_at(offset)`` names the instruction a relocation patches."""
        size = len(data)
        for rel in elf.relocations(table):
            offset = rel.offset - start
            if not 0 <= offset < size:
                continue
            at = code_at(offset)
            kind = _R_X86_64.get(rel.type)
            target = rel.symbol
            label = target.name or (elf.sections[target.section].name if target.in_section else "")
            if target.index == 0:  # r_info's symbol 0: a value with no symbol, which nothing here places
                raise _Refused(f"function '{owner}': relocation {rel.index} of {table} (at {at:#x}) names no symbol",
                               source=path)
            if not target.defined and label not in BUILTINS:
                raise _not_here(owner, _display(label), at, path)
            if kind is None:
                raise _Refused(f"function '{owner}': relocation type {rel.type} at {at:#x} against "
                               f"'{shown(label)}' is not supported ({_SUPPORTED_RELOCATIONS})", source=path)
            if target.defined and not target.in_section:
                raise _Refused(f"function '{owner}': the relocation at {at:#x} is against '{shown(label)}' "
                               f"({target.where}), which isasim does not place", source=path)
            if offset + kind.width > size:
                raise _Refused(f"function '{owner}': relocation {rel.index} of {table} ({kind.name}) patches "
                               f"{kind.width} bytes at offset {offset:#x}, past the function's end ({size:#x} bytes)",
                               source=path)
            addend = rel.addend if rel.addend is not None else int.from_bytes(
                data[offset:offset + kind.width], "little", signed=kind.signed)
            if not target.defined:
                layout.builtin(label)
                s = (lambda label=label: layout.builtin_address(label))
            else:
                # the byte it reaches (a rip-relative operand's addend counts from the end of its field; through
                # the GOT, the addend is the slot's and the slot holds the symbol itself)
                within = target.value + (0 if kind.through_got else
                                         addend + 4 if kind.pc_relative and in_code else addend)
                section = elf.sections[target.section]
                if not in_code and kind.pc_relative:
                    # a jump table's entry, .long .L3-.L4: S + A - P names .L3 plus the entry's distance from
                    # the table's start .L4, which is where the code's own relocation into this data points
                    starts = [a for a in anchors.get(table_owner[0], ()) if a <= rel.offset]
                    within -= rel.offset - max(starts) if starts else 0
                if section.executable:
                    callee = _code_target(elf, layout, owner, within, target.section, label, at, path)
                    s = (lambda callee=callee, value=target.value: callee.address - callee.symbol.value + value)
                else:
                    reach(section)
                    if in_code:
                        anchors.setdefault(section.index, set()).add(within)
                    s = (lambda index=section.index, value=target.value: placed[index] + value)
            if kind.through_got:  # the field reaches the symbol's GOT slot (one per symbol), which holds s()
                if target.index not in got:
                    got[target.index] = (len(got), s)
                s = (lambda slot=got[target.index][0]: got_base[0] + 8 * slot)
            pending.append((data, offset, kind, s, label, addend, base, at, owner))

    done = data_done = 0
    while done < len(layout.functions) or data_done < len(sections):
        if done < len(layout.functions):  # each function's relocations may reach more functions and data
            function = layout.functions[done]
            done += 1
            code = codes[function.address] = bytearray(elf.function_bytes(function.symbol, function.name))
            for table in elf.relocation_tables(elf.sections[function.symbol.section]):
                apply(table, code, function.symbol.value, lambda address=function.address: address, function.name,
                      lambda offset, code=code, address=function.address: address + _instruction_at(bytes(code),
                                                                                                   offset), True)
            _calls_without_relocation(elf, layout, function, code, pending, path)
            continue
        section = sections[data_done]  # a jump table's entries, a table of pointers
        data_done += 1
        table_owner[0] = section.index
        for table in elf.relocation_tables(section):
            apply(table, contents[section.index], 0, lambda index=section.index: placed[index], name,
                  lambda offset: offset, False)  # (messages name the offset in the section)
    next_free = _align(layout.code_end, 0x1000)
    regions, views = [], []
    for section in sections:
        address = placed[section.index] = _align(next_free, max(16, elf.alignment(section)))
        region, view = _section_region(elf, section, address)
        regions.append(region)
        views.append(view)
        next_free = _align(address + len(region[1]), 0x1000)
    if got:  # the global offset table -fPIC code loads addresses from: read-only, as after RELRO
        got_base[0] = next_free
        table = b"".join(address().to_bytes(8, "little") for _slot, address in sorted(got.values(),
                                                                                       key=lambda e: e[0]))
        regions.append((next_free, table, False))
        views.append(RegionView("GOT", next_free, "uint64", (1, len(got)), False))
    for data, offset, kind, s, label, addend, base, at, owner in pending:
        where = base() + offset
        value = s() + addend - (where if kind.pc_relative else 0)
        width = kind.width * 8
        low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if kind.signed else (0, (1 << width) - 1)
        if kind.name == "R_X86_64_64":
            value %= 1 << 64
        elif not low <= value <= high:
            raise _Refused(f"function '{owner}': {kind.name} at {at:#x} against '{shown(label)}' does not fit "
                           f"({value:#x})", source=path)
        data[offset:offset + kind.width] = (value % (1 << width)).to_bytes(kind.width, "little")
    regions = [(address, bytes(contents[section.index]), writable)
               for (address, _data, writable), section in zip(regions, sections)] + regions[len(sections):]
    code = b"".join(bytes(codes[f.address]) for f in layout.functions)
    return code, regions, views, layout


def _calls_without_relocation(elf: ElfFile, layout: _Layout, function: _Function, code: bytearray, pending: list,
                              path: str) -> None:
    """A call or jump to another function of the same section that the assembler resolved itself (a local
    function: no relocation) is re-aimed at where that function is placed."""
    start, size = function.symbol.value, function.symbol.size
    patched = {(id(data), offset) for data, offset, *_rest in pending if data is code}
    for _decoder, instruction in _decoded(bytes(code), start):
        if instruction.is_invalid or instruction.flow_control not in _DIRECT_BRANCHES:
            continue
        end = instruction.next_ip - start
        width = 1 if "REL8" in CODE_NAMES.get(instruction.code, "") else 4
        if any((id(code), o) in patched for o in range(end - width, end)):
            continue  # a relocation says where it goes
        target = instruction.near_branch_target
        if start <= target < start + size:
            continue
        at = function.address + instruction.ip - start
        callee = _code_target(elf, layout, function.name, target, function.symbol.section, f"{target:#x}", at, path)
        if width == 1:
            raise _Refused(f"function '{function.name}': the short jump at {at:#x} to '{callee.name}' cannot reach "
                           "it where isasim places it", source=path)
        destination = callee.address + target - callee.symbol.value
        pending.append((code, end - 4, _R_X86_64[2], lambda destination=destination: destination, callee.name, -4,
                        lambda address=function.address: address, at, function.name))


def _moved(elf: ElfFile, symbol: Symbol, name: str):
    """A linked file's function and every function it calls moved to CODE_BASE and after it, and the
    built-ins it calls: (code, data regions, views, layout)."""
    path = elf.path
    layout = _Layout(symbol, name)
    regions, views, placed = [], [], set()
    codes: dict[int, bytearray] = {}
    done = 0
    fixes = []  # (code, offset of a rel32, the function reached or a built-in's name, its link address, at)
    while done < len(layout.functions):
        function = layout.functions[done]
        done += 1
        link = function.symbol.value
        code = codes[function.address] = bytearray(elf.function_bytes(function.symbol, function.name))
        end = link + len(code)
        delta = function.address - link
        for decoder, instruction in _decoded(bytes(code), link):
            at = function.address + instruction.ip - link
            if instruction.is_invalid:
                continue  # refused with its bytes by _check_supported
            if instruction.is_ip_rel_memory_operand:
                target = instruction.ip_rel_memory_address
                if not link <= target < end:
                    owner = next((s for s in elf.sections if s.loaded and not s.flags & _SHF_TLS
                                  and s.address <= target < s.address + s.size), None)
                    if owner is None or owner.executable:
                        raise _Refused(f"function '{function.name}': the instruction at {at:#x} reads {target:#x}, "
                                       f"which is {'code' if owner is not None else 'in no section of the file'}",
                                       source=path)
                    if owner.index not in placed:
                        region, view = _section_region(elf, owner, owner.address)
                        regions.append(region)
                        views.append(view)
                        placed.add(owner.index)
                    for pointer in _function_pointers(elf, owner, target):  # a table of them: those functions too
                        layout.function(pointer)
                    offsets = decoder.get_constant_offsets(instruction)
                    where = instruction.ip - link + offsets.displacement_offset
                    displacement = int.from_bytes(code[where:where + 4], "little", signed=True) - delta
                    if not -(1 << 31) <= displacement < 1 << 31:
                        raise _Refused(f"function '{function.name}': {target:#x} is out of reach of the code at "
                                       f"{at:#x}", source=path)
                    code[where:where + 4] = (displacement % (1 << 32)).to_bytes(4, "little")
            elif instruction.flow_control in _DIRECT_BRANCHES:
                target = instruction.near_branch_target
                if link <= target < end:
                    continue
                builtin = next((sym.name for sym in elf.symbols() if sym.value == target and sym.name in BUILTINS
                                and sym.type == _STT_FUNC), None)
                if builtin is not None:  # a linked program's own __stack_chk_fail: isasim's built-in runs instead
                    layout.builtin(builtin)
                    fixes.append((code, function.address, instruction.next_ip - link, builtin, target, at))
                    continue
                callee = elf.function_at(target)
                if callee is None:  # a static program's call to memset goes through its PLT (an IFUNC)
                    through = _plt_callee(elf, target)
                    if through in BUILTINS:
                        layout.builtin(through)
                        fixes.append((code, function.address, instruction.next_ip - link, through, target, at))
                        continue
                    if through is not None:
                        raise _not_here(function.name, _display(through), at, path)
                if callee is None or not callee.size:
                    raise _Refused(f"function '{function.name}' calls or uses {_called(None, target)} (the instruction "
                                   f"at {at:#x})", source=path)
                rel_end = instruction.next_ip - link
                if "REL8" in CODE_NAMES.get(instruction.code, ""):
                    raise _Refused(f"function '{function.name}': the short jump at {at:#x} to "
                                   f"'{_display(callee.name)}' cannot reach it where isasim places it", source=path)
                if callee.name in BUILTINS:
                    layout.builtin(callee.name)
                    fixes.append((code, function.address, rel_end, callee.name, target, at))
                else:
                    fixes.append((code, function.address, rel_end, layout.function(callee), target, at))
    for data in elf.sections:  # the data a linked program reaches by absolute address, at its address
        if (data.loaded and not data.executable and data.size and data.name.startswith(_DATA_SECTIONS)
                and data.index not in placed):
            region, view = _section_region(elf, data, data.address)
            regions.append(region)
            views.append(view)
            placed.add(data.index)
    for (address, _data, _writable), view in zip(regions, views):
        if address < layout.code_end and CODE_BASE < address + len(_data):
            raise _Refused(f"section {shown(view.name)} of this program is linked at {address:#x}, where isasim "
                           f"places the code of '{name}' ({CODE_BASE:#x}..{layout.code_end:#x})", source=path)
    for code, base, rel_end, callee, target, at in fixes:
        destination = (layout.builtin_address(callee) if isinstance(callee, str)
                       else callee.address + target - callee.symbol.value)
        code[rel_end - 4:rel_end] = ((destination - (base + rel_end)) % (1 << 32)).to_bytes(4, "little")
    return b"".join(bytes(codes[f.address]) for f in layout.functions), regions, views, layout


def _function_pointers(elf: ElfFile, section: Section, address: int) -> list[Symbol]:
    """The functions whose addresses a linked program's data holds from ``address`` on (a table of function
    pointers, as ``static Combine const table[] = {f, g}`` links): each 8-byte value, while it is the start
    of a function."""
    starts = {sym.value: sym for sym in elf.symbols() if sym.type == _STT_FUNC and sym.size and sym.in_section
              and elf.sections[sym.section].executable}
    data = elf.contents(section) if section.holds_bytes else b""
    found, offset = [], address - section.address
    while 0 <= offset and offset + 8 <= len(data) and len(found) < 256:
        value = int.from_bytes(data[offset:offset + 8], "little")
        if value not in starts:
            break
        found.append(starts[value])
        offset += 8
    return found


_SHT_RELA, _R_X86_64_IRELATIVE, _STT_FUNC, _STT_GNU_IFUNC, _SHF_TLS = 4, 37, 2, 10, 0x400


def _plt_callee(elf: ElfFile, target: int) -> str | None:
    """The function a linked program's PLT stub at ``target`` jumps to, when it says: a static glibc program
    calls memset and memcpy through ``jmp QWORD PTR [rip+X]`` stubs whose GOT slot an R_X86_64_IRELATIVE
    relocation fills with what the IFUNC resolver chooses; the resolver's symbol is the function's name."""
    owner = next((s for s in elf.sections if s.executable and s.address <= target < s.address + s.size), None)
    if owner is None:
        return None
    start = target - owner.address
    stub = iced_x86.Decoder(64, elf.contents(owner)[start:start + 15], ip=target).decode()
    if (stub.is_invalid or stub.flow_control != iced_x86.FlowControl.INDIRECT_BRANCH
            or not stub.is_ip_rel_memory_operand):
        return None
    slot = stub.ip_rel_memory_address
    for table in elf.sections:
        if table.type != _SHT_RELA:
            continue
        try:
            relocations = elf.relocations(table)
        except IsasimError:
            continue
        for rel in relocations:
            if rel.offset == slot and rel.type == _R_X86_64_IRELATIVE and rel.addend is not None:
                named = [sym for sym in elf.symbols() if sym.value == rel.addend and sym.name
                         and sym.type in (_STT_GNU_IFUNC, _STT_FUNC)]
                named.sort(key=lambda sym: sym.type != _STT_GNU_IFUNC)  # memset, not its resolver memset_ifunc
                return named[0].name if named else None
    return None


def _called(symbol: str | None, address: int | None) -> str:
    """'amx_block' (demangled), or what is known of code no symbol covers (a PLT stub, say)."""
    if symbol:
        return f"'{shown(demangle([symbol]).get(symbol, symbol))}'"
    return "code outside it" + (f" (at {address:#x} in the file, no function's symbol covers it)"
                                if address is not None else "")


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
    from .assembler import attach_labels
    from .decoder import disassemble

    elf = read_elf(path, EM_X86_64)
    symbol, name = elf.find_function(function)
    code, regions, views, layout = (_relocated if elf.relocatable else _moved)(elf, symbol, name)
    _check_supported(code, name, path, lambda address: next(
        (f.name for f in layout.functions if f.address <= address < f.address + f.symbol.size), None))
    program = disassemble(code, CODE_BASE, source=f"{path}:{name}")
    instructions = list(program.instructions)
    for builtin in layout.builtins:  # each built-in a call reaches: one instruction, after the functions
        instructions.append(make_instruction(BUILTINS[builtin], (), layout.builtin_address(builtin),
                                             BuiltinForm.ENCODING))
    if not elf.relocatable:  # indirect branches reach link addresses: the functions' moves go with them
        moves = tuple((f.symbol.value, f.symbol.value + f.symbol.size, f.address) for f in layout.functions)
        for instruction in instructions:
            if instruction.form.mnemonic in ("call", "jmp") and instruction.operands and not isinstance(
                    instruction.operands[0], Target):
                instruction.extra["moved"] = moves
    labels = {f.symbol.name: f.address for f in layout.functions
              if f.symbol.name.replace("_", "").isalnum() and f.symbol.name.isascii()}  # the recorded program names them
    labels.update({builtin: layout.builtin_address(builtin) for builtin in layout.builtins})
    # Every other direct branch target gets a local label (.L and its address), and the branches name it:
    # a compiler's rel8/rel32 choice is re-made when the recorded program is assembled again, and a branch
    # written as a bare address would keep pointing there while relaxation moves the code after it.
    named = set(labels.values())
    for instruction in instructions:
        for operand in instruction.operands:
            if isinstance(operand, Target) and operand.address not in named and program.at(operand.address):
                labels[f".L{operand.address:x}"] = operand.address
                named.add(operand.address)
    program = Program(program.isa, CODE_BASE, instructions, labels, program.source)
    attach_labels(program)

    stack_args = [value % (1 << 64) for value in init.args[len(ARGUMENT_REGISTERS):]]
    if 8 * len(stack_args) > STACK_SIZE // 2:
        raise IsasimError(f"init.args: {len(init.args)} arguments do not fit in isasim's {STACK_SIZE} byte stack")
    regs = dict(init.regs)
    if stack_args and "rsp" in regs:
        raise IsasimError(f"init.args: the arguments after the sixth go on isasim's stack, and init.regs.rsp "
                          "gives another: leave rsp out, or pass at most six arguments")
    for register, value in zip(ARGUMENT_REGISTERS, init.args):
        if register in regs:
            raise IsasimError(f"init.args gives {register} and so does init.regs.{register}: give it once")
        regs[register] = value % (1 << 64)
    if any(isinstance(o, Mem) and o.segment in ("fs", "gs") for ins in program.instructions for o in ins.operands):
        if "fs_base" not in regs:  # the thread's control block, holding the canary
            regs["fs_base"] = TLS_BASE
            regions.append((TLS_BASE, thread_block(), True))
            views.append(RegionView("thread", TLS_BASE, "uint8", (1, TLS_SIZE), False))
    taken = [(CODE_BASE, CODE_BASE + max(len(program.code), 1), f"the code of {name}")] + [
        (a, a + len(d), shown(view.name) if view.name.startswith("section ") else f"section {shown(view.name)}")
        for (a, d, _w), view in zip(regions, views)]  # a nameless section's view is already "section N"
    stack_base = STACK_TOP - STACK_SIZE
    stack = bytearray(STACK_SIZE)
    # [entry rsp] = the return address, then the arguments after the sixth; the area they take is a whole
    # number of 16 bytes, so rsp + 8 is 16-byte aligned at entry as after any CALL
    arg_area = -(-8 * len(stack_args) // 16) * 16
    entry_rsp = STACK_TOP - arg_area - 8
    at = entry_rsp - stack_base
    stack[at:at + 8] = RETURN_SENTINEL.to_bytes(8, "little")
    for n, value in enumerate(stack_args):
        stack[at + 8 + 8 * n:at + 16 + 8 * n] = value.to_bytes(8, "little")
    if "rsp" not in regs:
        regions.append((stack_base, bytes(stack), True))
        views.append(RegionView("stack", stack_base, "uint8", (1, STACK_SIZE), False))
        regs["rsp"] = entry_rsp
        taken.append((stack_base, STACK_TOP, "the stack"))
    _check_no_overlap(taken, path)
    for address, data, _writable in init.memory:
        for low, high, what in taken:
            if address < high and low < address + len(data):
                raise IsasimError(f"init.memory: the region at {address:#x} overlaps {what} "
                                  f"({low:#x}..{high:#x}); place it elsewhere")
    memory = sorted(list(init.memory) + regions, key=lambda region: region[0])
    return program, replace(init, regs=regs, memory=memory, views=list(init.views) + views, args=[])
