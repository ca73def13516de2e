"""One function of an AArch64 ELF file (a relocatable .o from clang, or a linked static program) as an
isasim program with the memory it needs.

``load_object(path, function, init)`` finds the function's symbol (mangled, demangled, or extern "C"), takes
its words and:

* places the function at ``CODE_BASE`` and every function it reaches (a BL or B to it, or its address taken
  with ADRP/ADD or in a table of pointers) after it, one after the other, so that BL and RET run them on
  the simulated stack;
* in a relocatable file, applies the relocations in those functions: CALL26 and JUMP26, CONDBR19, TSTBR14,
  ADR_PREL_PG_HI21 (and _NC), ADR_PREL_LO21, ADD_ABS_LO12_NC, LDST8/16/32/64/128_ABS_LO12_NC, LD_PREL_LO19,
  ABS64, ABS32, PREL32, PREL64, and -fPIC's ADR_GOT_PAGE / LD64_GOT_LO12_NC through a read-only GOT after the
  data (a slot per symbol holding its address), against sections or defined symbols; each data section a
  relocation reaches (.rodata constants, .data, .bss) is mapped after the code at a page of its own,
  read-only unless the section is writable, its own relocations (tables of pointers) applied too; a branch
  the assembler resolved itself (to a static function of the same section: no relocation) is re-aimed at
  where that function is placed;
* in a linked file, moves the code (each PC-relative instruction that reaches outside its function re-aimed:
  B, BL, ADRP, ADR, LDR literal) and maps the data sections at their link addresses;
* resolves a call of ``memset``, ``memcpy``, ``memmove``, ``abort`` and the SME ABI routines clang calls
  (``__arm_tpidr2_save``, ``__arm_tpidr2_restore``, ``__arm_za_disable``, ``__arm_sme_state``,
  ``__arm_get_current_vg``; ``__arm_sme_state_size``, ``__arm_sme_save``, ``__arm_sme_restore`` of
  ``__arm_agnostic("sme_za_state")`` functions) to an isasim built-in (forms/builtins.py), one word each after
  the functions;
  any other symbol the code reaches and the file does not define is refused before the run, by name;
* refuses, before anything runs, a word isasim does not decode, naming its address, the word and what it
  is (capstone's disassembly where capstone is installed, the hex word otherwise);
* maps a stack (STACK_SIZE bytes), puts the init's ``args`` where AAPCS64 passes integer and pointer
  arguments (x0-x7, the rest on the stack from [sp] up, 8 bytes each, sp 16-byte aligned at entry) and sets
  x30 to the address just past the code: the RET of the function isasim runs goes there, which ends the
  run, as a return to a harness that called it would.

The file is read through isasim.core.elf_file, which checks every offset, size and index it reads.  Every
refusal is an IsasimError naming the file: one line, exit status 2.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, NamedTuple

from ..core.elf_file import EM_AARCH64, ElfFile, Section, Symbol, demangle, read_elf, shown
from ..core.errors import DecodeError, IsasimError
from ..core.program import Program
from ..core.trace import Init, RegionView
from .config import CODE_BASE
from .forms.builtins import BUILTINS
from .instructions import make_instruction

STACK_SIZE = 1 << 18  # 256 KiB: a streaming function's frame at -O0 holds a lazy-save buffer of SVL^2/64 bytes
STACK_TOP = 0x7FFF0000  # the stack is [STACK_TOP - STACK_SIZE, STACK_TOP)
ARGUMENT_REGISTERS = tuple(f"x{n}" for n in range(8))
ADDRESS_LIMIT = 1 << 64
PAGE = 0x1000
WORD = 4


class _Refused(IsasimError):
    pass


def _align(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def _display(name: str) -> str:
    return shown(demangle([name]).get(name, name))


# ---- instruction words: the fields a relocation or a move rewrites ---------------------------------------

def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _put(word: int, value: int, low: int, bits: int) -> int:
    mask = ((1 << bits) - 1) << low
    return (word & ~mask) | ((value << low) & mask)


def _fits(value: int, bits: int) -> bool:
    return -(1 << (bits - 1)) <= value < 1 << (bits - 1)


def _branch(word: int, target: int, place: int, bits: int, low: int) -> int | str:
    delta = target - place
    if delta % 4:
        return f"the target {target:#x} is not a whole number of words from {place:#x}"
    if not _fits(delta >> 2, bits):
        return f"the target {target:#x} is out of the branch's reach from {place:#x}"
    return _put(word, delta >> 2, low, bits)


def _adr_imm(word: int, value: int) -> int:
    return _put(_put(word, value & 3, 29, 2), value >> 2, 5, 19)


def _adrp(word: int, target: int, place: int, check: bool = True) -> int | str:
    pages = (target >> 12) - (place >> 12)
    if check and not _fits(pages, 21):
        return f"the page of {target:#x} is out of ADRP's reach (4 GiB) from {place:#x}"
    return _adr_imm(word, pages)


def _adr(word: int, target: int, place: int) -> int | str:
    delta = target - place
    if not _fits(delta, 21):
        return f"{target:#x} is out of ADR's reach (1 MiB) from {place:#x}"
    return _adr_imm(word, delta)


def _lo12(shift: int):
    def patch(word: int, target: int, place: int) -> int | str:
        low = target & 0xFFF
        if low % (1 << shift):
            return f"{target:#x} is not a multiple of {1 << shift}, as the {8 << shift}-bit access's offset must be"
        return _put(word, low >> shift, 10, 12)
    return patch


class _Kind(NamedTuple):
    name: str
    patch: Callable | None  # (word, S + A, P) -> the new word or why not, for an instruction's relocation
    width: int = 4  # bytes patched (data: 8 or 4)
    relative: bool = False  # data: S + A - P
    got: bool = False  # the field reaches the symbol's GOT slot


def _data(name: str, width: int, relative: bool) -> _Kind:
    return _Kind(name, None, width, relative)


_R_AARCH64 = {
    257: _data("R_AARCH64_ABS64", 8, False), 258: _data("R_AARCH64_ABS32", 4, False),
    260: _data("R_AARCH64_PREL64", 8, True), 261: _data("R_AARCH64_PREL32", 4, True),
    273: _Kind("R_AARCH64_LD_PREL_LO19", lambda w, s, p: _branch(w, s, p, 19, 5)),
    274: _Kind("R_AARCH64_ADR_PREL_LO21", _adr),
    275: _Kind("R_AARCH64_ADR_PREL_PG_HI21", _adrp),
    276: _Kind("R_AARCH64_ADR_PREL_PG_HI21_NC", lambda w, s, p: _adrp(w, s, p, False)),
    277: _Kind("R_AARCH64_ADD_ABS_LO12_NC", _lo12(0)),
    278: _Kind("R_AARCH64_LDST8_ABS_LO12_NC", _lo12(0)),
    279: _Kind("R_AARCH64_TSTBR14", lambda w, s, p: _branch(w, s, p, 14, 5)),
    280: _Kind("R_AARCH64_CONDBR19", lambda w, s, p: _branch(w, s, p, 19, 5)),
    282: _Kind("R_AARCH64_JUMP26", lambda w, s, p: _branch(w, s, p, 26, 0)),
    283: _Kind("R_AARCH64_CALL26", lambda w, s, p: _branch(w, s, p, 26, 0)),
    284: _Kind("R_AARCH64_LDST16_ABS_LO12_NC", _lo12(1)),
    285: _Kind("R_AARCH64_LDST32_ABS_LO12_NC", _lo12(2)),
    286: _Kind("R_AARCH64_LDST64_ABS_LO12_NC", _lo12(3)),
    299: _Kind("R_AARCH64_LDST128_ABS_LO12_NC", _lo12(4)),
    311: _Kind("R_AARCH64_ADR_GOT_PAGE", _adrp, got=True),
    312: _Kind("R_AARCH64_LD64_GOT_LO12_NC", _lo12(3), got=True),
}
_SUPPORTED = ("CALL26, JUMP26, CONDBR19, TSTBR14, ADR_PREL_PG_HI21(_NC), ADR_PREL_LO21, ADD_ABS_LO12_NC, "
              "LDST8/16/32/64/128_ABS_LO12_NC, LD_PREL_LO19, ABS64, ABS32, PREL32, PREL64, ADR_GOT_PAGE and "
              "LD64_GOT_LO12_NC are")


def _is_b_or_bl(word: int) -> bool:
    return word & 0x7C000000 == 0x14000000


def _pc_relative(word: int) -> tuple[str, int] | None:
    """(what, offset in bytes from the instruction) of a PC-relative A64 word, or None: B/BL (imm26), B.cond,
    CBZ/CBNZ, LDR literal (imm19), TBZ/TBNZ (imm14), ADR (bytes) and ADRP (pages: the offset is in pages)."""
    if _is_b_or_bl(word):
        return "b", _signed(word, 26) * 4
    if word & 0xFF000010 == 0x54000000 or word & 0x7E000000 == 0x34000000:
        return "imm19", _signed(word >> 5, 19) * 4
    if word & 0x3B000000 == 0x18000000:
        return "literal", _signed(word >> 5, 19) * 4
    if word & 0x7E000000 == 0x36000000:
        return "imm14", _signed(word >> 5, 14) * 4
    if word & 0x1F000000 == 0x10000000:
        value = _signed(((word >> 5) & 0x7FFFF) << 2 | (word >> 29) & 3, 21)
        return ("adrp", value) if word >> 31 else ("adr", value)
    return None


# ---- refusing what isasim cannot run, by name ------------------------------------------------------------

def _capstone_text(word: int, address: int) -> tuple[str, str] | None:
    """(mnemonic, text) of an A64 word as capstone disassembles it, or None without capstone (or a word it
    does not know either)."""
    try:
        import capstone
    except ImportError:
        return None
    try:
        md = capstone.Cs(capstone.CS_ARCH_AARCH64, capstone.CS_MODE_ARM)
        found = next(md.disasm(word.to_bytes(4, "little"), address), None)
    except Exception:  # an older capstone without AArch64 under this name, or a broken install
        return None
    if found is None:
        return None
    return found.mnemonic, f"{found.mnemonic} {found.op_str}".strip()


def unsupported(code: bytes, base: int) -> list[tuple[int, int, str, str]]:
    """Each word of ``code`` (at ``base``) that isasim does not decode: (address, word, mnemonic, text); the
    mnemonic and text are capstone's, or the hex word where capstone is absent or does not know it."""
    from .decoder import decode_word

    out = []
    for offset in range(0, len(code) - len(code) % 4, 4):
        word = int.from_bytes(code[offset:offset + 4], "little")
        try:
            decode_word(word, base + offset)
        except DecodeError:
            named = _capstone_text(word, base + offset)
            mnemonic, text = named if named is not None else (f".inst {word:#010x}", f".inst {word:#010x}")
            out.append((base + offset, word, mnemonic, text))
    return out


def _check_supported(code: bytes, name: str, path: str, owner) -> None:
    missing = unsupported(code, CODE_BASE)
    if missing:
        address, word, mnemonic, text = missing[0]
        others = sorted({m for _a, _w, m, _t in missing[1:]} - {mnemonic})
        more = (f"; {len(missing) - 1} more unsupported instruction{'s' if len(missing) > 2 else ''}"
                + (f" ({', '.join(others)})" if others else "")) if len(missing) > 1 else ""
        raise _Refused(f"function '{owner(address) or name}': the instruction at {address:#x} ({word:08x}: {text}) "
                       f"is {mnemonic}, which isasim does not simulate{more}", source=path)


# ---- where everything goes -----------------------------------------------------------------------------

class _Function(NamedTuple):
    symbol: Symbol
    name: str
    address: int


class _Layout:
    """The functions a run reaches (the one asked for first, at CODE_BASE, then each it reaches, one after
    the other), the built-ins it calls (after them, one word each) and where each goes."""

    def __init__(self, entry: Symbol, name: str):
        self.functions: list[_Function] = [_Function(entry, name, CODE_BASE)]
        self.end = CODE_BASE + _align(entry.size, WORD)
        self.builtins: list[str] = []

    def function(self, symbol: Symbol) -> _Function:
        for function in self.functions:
            if function.symbol == symbol:
                return function
        function = _Function(symbol, _display(symbol.name), self.end)
        self.functions.append(function)
        self.end += _align(symbol.size, WORD)
        return function

    def builtin(self, name: str) -> None:
        if name not in self.builtins:
            self.builtins.append(name)

    def builtin_address(self, name: str) -> int:
        return self.end + WORD * self.builtins.index(name)

    @property
    def code_end(self) -> int:
        return self.end + WORD * len(self.builtins)

    def owner(self, address: int) -> str | None:
        return next((f.name for f in self.functions if f.address <= address < f.address + f.symbol.size), None)


def _not_here(caller: str, callee: str, at: int, path: str) -> _Refused:
    return _Refused(f"function '{caller}' calls or uses '{callee}' (the instruction at {at:#x}), which is neither in "
                    f"this file nor an isasim built-in ({', '.join(BUILTINS)}); link it in, or run a function that "
                    "does not need it", source=path)


def _function_bytes(elf: ElfFile, function: _Function, path: str) -> bytearray:
    code = bytearray(elf.function_bytes(function.symbol, function.name))
    if len(code) % 4:
        raise _Refused(f"function '{function.name}' is {len(code)} bytes, not a whole number of 4-byte A64 words",
                       source=path)
    return code


def _section_region(elf: ElfFile, section: Section, address: int) -> tuple[tuple[int, bytes, bool], RegionView]:
    data = elf.contents(section) or bytes(1)  # an empty section still has an address a pointer may name
    if address + len(data) > ADDRESS_LIMIT:
        raise _Refused(f"{section} ({len(data):#x} bytes at {address:#x}) does not fit below 2^64", source=elf.path)
    name = shown(section.name) if section.name else f"section {section.index}"
    return (address, data, section.writable), RegionView(name, address, "uint8", (1, len(data)), False)


def _relocated(elf: ElfFile, symbol: Symbol, name: str):
    """A relocatable file's function and every function it reaches, relocations applied, and the built-ins it
    calls: (code, data regions, views, layout)."""
    path = elf.path
    layout = _Layout(symbol, name)
    codes: dict[int, bytearray] = {}
    sections: list[Section] = []  # the data sections reached, in order
    contents: dict[int, bytearray] = {}
    placed: dict[int, int] = {}  # data section index -> its address, once the code's size is known
    pending: list[tuple] = []  # (bytes, offset, kind, S(), addend, P(), at, owner, label)
    got: dict[tuple, tuple] = {}  # (symbol index, addend) -> (slot, S() + addend)
    got_base = [0]

    def reach(section: Section) -> None:
        if section.index not in contents:
            if not section.loaded:
                raise _Refused(f"function '{name}' refers to {section}, which is not loaded at run time", source=path)
            contents[section.index] = bytearray(elf.contents(section) or bytes(1))
            sections.append(section)

    def apply(table: Section, data: bytearray, start: int, base: Callable[[], int], owner: str,
              at_of: Callable[[int], int], in_code: bool) -> set[int]:
        patched = set()
        for rel in elf.relocations(table):
            offset = rel.offset - start
            if not 0 <= offset < len(data):
                continue
            at = at_of(offset)
            kind = _R_AARCH64.get(rel.type)
            target = rel.symbol
            label = target.name or (elf.sections[target.section].name if target.in_section else "")
            if target.index == 0:
                raise _Refused(f"function '{owner}': relocation {rel.index} of {table} (at {at:#x}) names no symbol",
                               source=path)
            if not target.defined and label not in BUILTINS:
                raise _not_here(owner, _display(label), at, path)
            if kind is None:
                raise _Refused(f"function '{owner}': relocation type {rel.type} at {at:#x} against '{shown(label)}' "
                               f"is not supported ({_SUPPORTED})", source=path)
            if kind.patch is not None and not in_code:
                raise _Refused(f"function '{owner}': {kind.name} in {table} patches data, not an instruction",
                               source=path)
            if target.defined and not target.in_section:
                raise _Refused(f"function '{owner}': the relocation at {at:#x} is against '{shown(label)}' "
                               f"({target.where}), which isasim does not place", source=path)
            if offset + kind.width > len(data) or (kind.patch is not None and offset % 4):
                raise _Refused(f"function '{owner}': relocation {rel.index} of {table} ({kind.name}) at offset "
                               f"{offset:#x} does not patch a whole field inside it", source=path)
            if rel.addend is None:
                raise _Refused(f"function '{owner}': {table} is SHT_REL; AArch64 code has SHT_RELA relocations",
                               source=path)
            addend = rel.addend
            if not target.defined:
                layout.builtin(label)
                s = (lambda label=label: layout.builtin_address(label))
            else:
                section = elf.sections[target.section]
                if section.executable:
                    callee = elf.function_at(target.value + addend, target.section)
                    if callee is None or not callee.size:
                        raise _Refused(f"function '{owner}' calls or uses code at '{shown(label)}'+{addend:#x} (the "
                                       f"instruction at {at:#x}) that no function's symbol covers", source=path)
                    placed_callee = layout.function(callee)
                    s = (lambda c=placed_callee, value=target.value: c.address - c.symbol.value + value)
                else:
                    reach(section)
                    s = (lambda index=section.index, value=target.value: placed[index] + value)
            if kind.got:
                key = (target.index, addend)
                if key not in got:
                    got[key] = (len(got), (lambda s=s, addend=addend: s() + addend))
                s, addend = (lambda slot=got[key][0]: got_base[0] + 8 * slot), 0
            pending.append((data, offset, kind, s, addend, base, at, owner, label))
            patched.add(offset)
        return patched

    done = data_done = 0
    while done < len(layout.functions) or data_done < len(sections):
        if done < len(layout.functions):
            function = layout.functions[done]
            done += 1
            code = codes[function.address] = _function_bytes(elf, function, path)
            patched = set()
            for table in elf.relocation_tables(elf.sections[function.symbol.section]):
                patched |= apply(table, code, function.symbol.value, lambda a=function.address: a, function.name,
                                 lambda offset, a=function.address: a + (offset & ~3), True)
            _branches_without_relocation(elf, layout, function, code, patched, pending, path)
            continue
        section = sections[data_done]
        data_done += 1
        for table in elf.relocation_tables(section):
            apply(table, contents[section.index], 0, lambda index=section.index: placed[index], name,
                  lambda offset: offset, False)
    next_free = _align(layout.code_end + WORD, PAGE)  # QEMU's harness puts its way back in the word at code_end
    regions, views = [], []
    for section in sections:
        address = placed[section.index] = _align(next_free, max(16, elf.alignment(section)))
        region, view = _section_region(elf, section, address)
        regions.append(region)
        views.append(view)
        next_free = _align(address + len(region[1]), PAGE)
    if got:  # the global offset table -fPIC code loads addresses from: read-only, as after RELRO
        got_base[0] = next_free
        table = b"".join(value().to_bytes(8, "little") for _slot, value in sorted(got.values(), key=lambda e: e[0]))
        regions.append((next_free, table, False))
        views.append(RegionView("GOT", next_free, "uint64", (1, len(got)), False))
    for data, offset, kind, s, addend, base, at, owner, label in pending:
        place = base() + offset
        value = s() + addend
        if kind.patch is not None:
            word = kind.patch(int.from_bytes(data[offset:offset + 4], "little"), value, place)
            if isinstance(word, str):
                raise _Refused(f"function '{owner}': {kind.name} at {at:#x} against '{shown(label)}': {word}",
                               source=path)
            data[offset:offset + 4] = word.to_bytes(4, "little")
            continue
        if kind.relative:
            value -= place
        bits = 8 * kind.width
        if kind.width == 4 and not -(1 << 31) <= value < 1 << 32:
            raise _Refused(f"function '{owner}': {kind.name} at {at:#x} against '{shown(label)}' does not fit "
                           f"({value:#x})", source=path)
        data[offset:offset + kind.width] = (value % (1 << bits)).to_bytes(kind.width, "little")
    regions = [(address, bytes(contents[section.index]), writable)
               for (address, _data, writable), section in zip(regions, sections)] + regions[len(sections):]
    code = b"".join(bytes(codes[f.address]) for f in layout.functions)
    return code, regions, views, layout


def _branches_without_relocation(elf: ElfFile, layout: _Layout, function: _Function, code: bytearray,
                                 patched: set[int], pending: list, path: str) -> None:
    """A branch the assembler resolved itself (to a local function of the same section: no relocation) is
    re-aimed at where that function is placed; any other PC-relative word reaching outside the function
    without a relocation is refused (isasim could not know what it reaches)."""
    start, size = function.symbol.value, function.symbol.size
    for offset in range(0, len(code), 4):
        if offset in patched:
            continue
        word = int.from_bytes(code[offset:offset + 4], "little")
        found = _pc_relative(word)
        if found is None or found[0] == "adrp":
            continue
        what, delta = found
        target = start + offset + delta
        if start <= target < start + size:
            continue
        at = function.address + offset
        if what != "b":
            raise _Refused(f"function '{function.name}': the instruction at {at:#x} ({word:08x}) reaches {target:#x}, "
                           "outside the function, without a relocation", source=path)
        callee = elf.function_at(target, function.symbol.section)
        if callee is None or not callee.size:
            raise _Refused(f"function '{function.name}': the branch at {at:#x} reaches {target:#x}, which no "
                           "function's symbol covers", source=path)
        placed = layout.function(callee)
        destination = placed.address + target - callee.symbol.value
        pending.append((code, offset, _R_AARCH64[283], lambda d=destination: d, 0,
                        lambda a=function.address: a, at, function.name, placed.name))


_DATA_SECTIONS = (".rodata", ".data", ".bss", ".tdata", ".tbss", ".init_array", ".fini_array", ".got")


def _moved(elf: ElfFile, symbol: Symbol, name: str):
    """A linked file's function and every function it calls moved to CODE_BASE and after it, and the built-ins
    it calls: (code, data regions, views, layout).  Data stays at its link addresses."""
    path = elf.path
    layout = _Layout(symbol, name)
    codes: dict[int, bytearray] = {}
    fixes = []  # (code, offset, kind, destination or builtin name, at, owner)
    builtin_at = {sym.value: sym.name for sym in elf.symbols() if sym.name in BUILTINS and sym.in_section
                  and elf.sections[sym.section].executable}  # the program's own memset: isasim's runs instead
    done = 0
    while done < len(layout.functions):
        function = layout.functions[done]
        done += 1
        link = function.symbol.value
        code = codes[function.address] = _function_bytes(elf, function, path)
        for offset in range(0, len(code), 4):
            word = int.from_bytes(code[offset:offset + 4], "little")
            found = _pc_relative(word)
            if found is None:
                continue
            what, delta = found
            place = link + offset
            at = function.address + offset
            if what == "adrp":
                fixes.append((code, offset, "adrp", ((place >> 12) + delta) << 12, at, function.name))
                continue
            target = place + delta
            if link <= target < link + function.symbol.size:
                continue
            if what == "b":
                if target in builtin_at:
                    layout.builtin(builtin_at[target])
                    fixes.append((code, offset, "b", builtin_at[target], at, function.name))
                    continue
                callee = elf.function_at(target)
                if callee is None or not callee.size:
                    raise _Refused(f"function '{function.name}': the branch at {at:#x} reaches {target:#x}, which no "
                                   "function's symbol covers", source=path)
                placed = layout.function(callee)
                fixes.append((code, offset, "b", placed.address + target - callee.value, at, function.name))
            elif what in ("adr", "literal"):
                fixes.append((code, offset, what, target, at, function.name))
            else:
                raise _Refused(f"function '{function.name}': the conditional branch at {at:#x} leaves the function "
                               f"(to {target:#x})", source=path)
    regions, views = [], []
    for data in elf.sections:
        if data.loaded and not data.executable and data.size and data.name.startswith(_DATA_SECTIONS):
            region, view = _section_region(elf, data, data.address)
            if data.address < layout.code_end and CODE_BASE < data.address + len(region[1]):
                raise _Refused(f"{data} of this program is linked at {data.address:#x}, where isasim places the code "
                               f"of '{name}' ({CODE_BASE:#x}..{layout.code_end:#x})", source=path)
            regions.append(region)
            views.append(view)
    for code, offset, what, destination, at, owner in fixes:
        if isinstance(destination, str):
            destination = layout.builtin_address(destination)
        place = at
        word = int.from_bytes(code[offset:offset + 4], "little")
        new = {"adrp": lambda: _adrp(word, destination, place), "adr": lambda: _adr(word, destination, place),
               "b": lambda: _branch(word, destination, place, 26, 0),
               "literal": lambda: _branch(word, destination, place, 19, 5)}[what]()
        if isinstance(new, str):
            raise _Refused(f"function '{owner}': the instruction at {at:#x} cannot be moved: {new}", source=path)
        code[offset:offset + 4] = new.to_bytes(4, "little")
    return b"".join(bytes(codes[f.address]) for f in layout.functions), regions, views, layout


def _check_no_overlap(taken: list[tuple[int, int, str]], path: str) -> None:
    spans = sorted(taken)
    for (_low, high, first), (low, _high, second) in zip(spans, spans[1:]):
        if low < high:
            raise _Refused(f"{first} and {second} overlap in memory (from {low:#x})", source=path)


def load_object(path: str, function: str, init: Init) -> tuple[Program, Init]:
    """The program and initial state to run ``function`` of the AArch64 ELF file at ``path`` with ``init``
    (whose ``args`` become x0-x7 and the stack's arguments)."""
    from .decoder import disassemble

    regs = dict(init.regs)  # what the init gets wrong is refused before the file is read
    for register in ("x30", "pc"):
        if register in regs:
            raise IsasimError(f"init.regs.{register}: isasim sets {register} for a function of an object file "
                              f"({'the return address that ends the run' if register == 'x30' else 'its entry'})")
    stack_args = [value % (1 << 64) for value in init.args[len(ARGUMENT_REGISTERS):]]
    if 8 * len(stack_args) > STACK_SIZE // 2:
        raise IsasimError(f"init.args: {len(init.args)} arguments do not fit in isasim's {STACK_SIZE} byte stack")
    if stack_args and "sp" in regs:
        raise IsasimError("init.args: the arguments after the eighth go on isasim's stack, and init.regs.sp gives "
                          "another: leave sp out, or pass at most eight arguments")
    for register, value in zip(ARGUMENT_REGISTERS, init.args):
        if register in regs:
            raise IsasimError(f"init.args gives {register} and so does init.regs.{register}: give it once")
        regs[register] = value % (1 << 64)

    elf = read_elf(path, EM_AARCH64)
    symbol, name = elf.find_function(function)
    code, regions, views, layout = (_relocated if elf.relocatable else _moved)(elf, symbol, name)
    _check_supported(code, name, path, layout.owner)
    program = disassemble(code, "arm_sme", CODE_BASE)
    instructions = list(program.instructions)
    for builtin in layout.builtins:  # each built-in a call reaches: one word, after the functions
        form = BUILTINS[builtin]
        instructions.append(make_instruction(form, {}, layout.builtin_address(builtin), form.word))
    labels = {f.symbol.name: f.address for f in layout.functions
              if f.symbol.name.isascii() and f.symbol.name.replace("_", "a").replace(".", "a").isalnum()
              and f.symbol.name not in BUILTINS}
    labels.update({builtin: layout.builtin_address(builtin) for builtin in layout.builtins})  # b memset, ...
    program = Program("arm_sme", CODE_BASE, instructions, labels, f"{path}:{name}")
    program.compiled_function = True  # the qemu backend runs it with its object harness (oracle/objects.py)

    regs["x30"] = program.end  # the RET of the function isasim runs comes here: the end of the run
    taken = [(CODE_BASE, max(program.end, CODE_BASE + 1), f"the code of {name}")] + [
        (a, a + len(d), shown(view.name) if view.name.startswith("section ") else f"section {shown(view.name)}")
        for (a, d, _w), view in zip(regions, views)]
    if "sp" not in regs:
        stack_base = STACK_TOP - STACK_SIZE
        stack = bytearray(STACK_SIZE)
        entry_sp = STACK_TOP - _align(8 * len(stack_args), 16)
        at = entry_sp - stack_base
        for n, value in enumerate(stack_args):
            stack[at + 8 * n:at + 8 * n + 8] = value.to_bytes(8, "little")
        regions.append((stack_base, bytes(stack), True))
        views.append(RegionView("stack", stack_base, "uint8", (1, STACK_SIZE), False))
        regs["sp"] = entry_sp
        taken.append((stack_base, STACK_TOP, "the stack"))
    _check_no_overlap(taken, path)
    for address, data, _writable in init.memory:
        for low, high, what in taken:
            if address < high and low < address + len(data):
                raise IsasimError(f"init.memory: the region at {address:#x} overlaps {what} ({low:#x}..{high:#x}); "
                                  "place it elsewhere")
    memory = sorted(list(init.memory) + regions, key=lambda region: region[0])
    return program, replace(init, regs=regs, memory=memory, views=list(init.views) + views, args=[])
