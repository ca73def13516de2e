"""Reading an ELF file that may be damaged, for the ISAs' object-file loaders (isasim.x86_amx.elf now, an
AArch64 one next): the ELF header, the section headers and their names, the symbol table, relocation
tables and string tables.

Every offset, size, index and entry size is checked against the file before it is used, so a damaged or
hostile file is refused with an :class:`ElfFormatError`: one line naming the file, the structure and the
field with its value ("section 2 (.rela.text): sh_link 0x7fff is not a section (the file has 14)"), exit
status 2, never a traceback, a hang or a huge allocation.

The file is read here with ``struct``, eagerly, rather than through pyelftools: pyelftools parses lazily,
so any attribute access deep inside a loader could raise one of a dozen exception types (ELFParseError,
construct's errors, struct.error, KeyError, an AttributeError for a symbol table whose type was changed,
...), and a corrupted size or flag could make it read or decompress gigabytes.  A loader here only ever
sees plain values that have been checked, so there is nothing to catch.

Only what a loader of one function needs is read: 64-bit little-endian files (x86-64 and AArch64 are
both), relocatable objects and linked programs, the one SHT_SYMTAB, SHT_REL and SHT_RELA tables.  A
section is checked when a loader asks for it, beyond its header, so a damaged .debug_info does not stop a
kernel from running.  Nothing here knows an ISA: the loader says which machine it reads, and keeps its
relocation types, calling convention and decoding to itself.  A loader reads a function so:

    elf = read_elf(path, EM_AARCH64)
    symbol, name = elf.find_function(function)           # mangled, demangled or plain
    code = bytearray(elf.function_bytes(symbol, name))   # st_size bytes, checked to lie in its section
    for table in elf.relocation_tables(elf.sections[symbol.section]):
        for relocation in elf.relocations(table):        # offset, type, symbol (looked up), addend
            ...                                          # the ISA's relocation types; elf.contents(section)
                                                         # for the data a relocation reaches
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from dataclasses import dataclass, replace

from .errors import IsasimError
from .trace import MAX_REGION, printable

EM_X86_64, EM_AARCH64 = 62, 183
MACHINES = {3: "i386", 8: "MIPS", 20: "PowerPC", 21: "PowerPC 64", 40: "Arm (32-bit)", 62: "x86-64",
            183: "AArch64", 243: "RISC-V"}
ET_REL, ET_EXEC, ET_DYN = 1, 2, 3
_FILE_TYPES = {0: "no file type (ET_NONE)", 4: "a core dump (ET_CORE)"}

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 0, 1, 2, 3, 4, 8, 9
_SECTION_TYPES = {0: "SHT_NULL", 1: "SHT_PROGBITS", 2: "SHT_SYMTAB", 3: "SHT_STRTAB", 4: "SHT_RELA", 5: "SHT_HASH",
                  6: "SHT_DYNAMIC", 7: "SHT_NOTE", 8: "SHT_NOBITS", 9: "SHT_REL", 11: "SHT_DYNSYM"}
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR, SHF_COMPRESSED = 0x1, 0x2, 0x4, 0x800

SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_COMMON, SHN_XINDEX = 0, 0xFF00, 0xFFF1, 0xFFF2, 0xFFFF
_RESERVED_INDICES = {SHN_ABS: "SHN_ABS", SHN_COMMON: "SHN_COMMON", SHN_XINDEX: "SHN_XINDEX"}
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION = 0, 1, 2, 3

_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")  # the ELF64 header: e_ident, e_type, ... e_shstrndx
_SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")  # sh_name, sh_type, sh_flags, ... sh_entsize
_SYMBOL = struct.Struct("<IBBHQQ")  # st_name, st_info, st_other, st_shndx, st_value, st_size
_RELA = struct.Struct("<QQq")  # r_offset, r_info, r_addend
_REL = struct.Struct("<QQ")
# A section becomes one memory region of the run and of its recorded trace, which holds no region larger
# than this: a larger .bss is refused before its zeros are made (a corrupted sh_size can say 2^63).
MAX_SECTION_BYTES = MAX_REGION


NAME_SHOWN = 200  # characters of a name a message quotes: a damaged string table can hold a name of megabytes


def shown(name: str) -> str:
    """A name from the file as a message quotes it: control characters (a line break, an escape sequence)
    escaped, so that the message stays one line wherever it is printed, and at most NAME_SHOWN characters."""
    name = printable(name)
    return name if len(name) <= NAME_SHOWN else name[:NAME_SHOWN] + "..."


class ElfFormatError(IsasimError):
    """An ELF file isasim cannot read: damaged, truncated, or of a kind isasim does not load."""


@dataclass(frozen=True)
class Section:
    """A section header, as the file says it (checked only as far as the header table goes)."""

    index: int
    name: str
    type: int
    flags: int
    address: int
    offset: int
    size: int
    link: int
    info: int
    alignment: int
    entry_size: int

    def __str__(self) -> str:
        return f"section {self.index} ({shown(self.name)})" if self.name else f"section {self.index}"

    @property
    def type_name(self) -> str:
        return _SECTION_TYPES.get(self.type, f"{self.type:#x}")

    @property
    def holds_bytes(self) -> bool:
        """Whether the file holds the section's bytes (SHT_NOBITS, .bss, is zeros made at load time)."""
        return self.type != SHT_NOBITS

    @property
    def loaded(self) -> bool:
        return bool(self.flags & SHF_ALLOC)

    @property
    def writable(self) -> bool:
        return bool(self.flags & SHF_WRITE)

    @property
    def executable(self) -> bool:
        return bool(self.flags & SHF_EXECINSTR)


@dataclass(frozen=True)
class Symbol:
    """A symbol table entry; ``section`` is st_shndx as written (SHN_UNDEF, a section's index, SHN_ABS, ...),
    checked to be a section of the file where it is below SHN_LORESERVE."""

    index: int
    name: str
    type: int
    binding: int
    section: int
    value: int
    size: int

    @property
    def defined(self) -> bool:
        return self.section != SHN_UNDEF

    @property
    def in_section(self) -> bool:
        """Whether ``section`` is the index of one of the file's sections (not undefined, absolute, common)."""
        return SHN_UNDEF < self.section < SHN_LORESERVE

    @property
    def where(self) -> str:
        """st_shndx for a message: SHN_ABS, SHN_COMMON, ... or the index."""
        if self.section == SHN_UNDEF:
            return "SHN_UNDEF"
        return _RESERVED_INDICES.get(self.section, f"section index {self.section:#x}")


@dataclass(frozen=True)
class Relocation:
    """One entry of a SHT_REL or SHT_RELA table, its symbol looked up (index 0 is the null symbol: none)."""

    index: int
    offset: int
    type: int
    symbol: Symbol
    addend: int | None  # None in a SHT_REL table, whose addend is in the bytes it patches


def read_elf(path: str, machine: int) -> ElfFile:
    """The ELF file at ``path``, which must be a 64-bit little-endian file for ``machine`` (EM_X86_64,
    EM_AARCH64): its header and section headers checked, its section names read."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        raise IsasimError(f"cannot read ({error.strerror})", source=path) from None
    return ElfFile(path, data, machine)


class ElfFile:
    """A checked view of an ELF file's bytes.  Every method refuses what it cannot read with an
    ElfFormatError naming the file; what it returns has been checked against the file."""

    def __init__(self, path: str, data: bytes, machine: int):
        self.path, self.data = path, data
        self._contents: dict[int, bytes] = {}
        self._symbols: tuple[Symbol, ...] | None = None
        self._read_header(machine)
        self.sections: tuple[Section, ...] = self._read_section_headers()

    def error(self, message: str) -> ElfFormatError:
        return ElfFormatError(message, source=self.path)

    # ---- the ELF header and the section header table ------------------------------------------------

    def _read_header(self, machine: int) -> None:
        data, unreadable = self.data, "not an ELF file isasim can read"
        if data[:4] != b"\x7fELF":
            raise self.error(f"{unreadable} (it does not start with the ELF magic 7f 45 4c 46)")
        if len(data) < 20:
            raise self.error(f"{unreadable} (the file ends at byte {len(data)}, inside the ELF header)")
        elf_class, encoding = data[4], data[5]
        if encoding not in (1, 2):
            raise self.error(f"{unreadable} (EI_DATA {encoding} is neither little-endian (1) nor big-endian (2))")
        if elf_class not in (1, 2):
            raise self.error(f"{unreadable} (EI_CLASS {elf_class} is neither 32-bit (1) nor 64-bit (2))")
        found = int.from_bytes(data[18:20], "little" if encoding == 1 else "big")  # e_machine, where both put it
        if found != machine:
            raise self.error(f"an ELF file for {MACHINES.get(found, f'machine {found}')}, not "
                             f"{MACHINES.get(machine, f'machine {machine}')}")
        if elf_class != 2 or encoding != 1:
            raise self.error(f"a {'32' if elf_class == 1 else '64'}-bit {'big' if encoding == 2 else 'little'}-endian "
                             f"ELF file: isasim reads 64-bit little-endian ones")
        if len(data) < _HEADER.size:
            raise self.error(f"the file ends at byte {len(data)}, inside the ELF header ({_HEADER.size} bytes)")
        (_ident, self.file_type, self.machine, _version, _entry, _phoff, self._shoff, _flags, _ehsize,
         _phentsize, _phnum, self._shentsize, self._shnum, self._shstrndx) = _HEADER.unpack_from(data)
        if self.file_type not in (ET_REL, ET_EXEC, ET_DYN):
            what = _FILE_TYPES.get(self.file_type, f"e_type {self.file_type:#x}")
            raise self.error(f"{what}: isasim loads relocatable objects (.o) and linked programs")

    def _read_section_headers(self) -> tuple[Section, ...]:
        if self._shoff == 0:
            return ()  # no section header table: symbols() says there is no symbol table
        if self._shentsize != _SECTION_HEADER.size:
            raise self.error(f"e_shentsize {self._shentsize}: an ELF64 section header is {_SECTION_HEADER.size} bytes")
        count = self._shnum
        if count == 0:  # SHN_LORESERVE sections or more: section 0's sh_size counts them
            if not self._fits(self._shoff, _SECTION_HEADER.size):
                raise self.error(f"e_shoff {self._shoff:#x}: the section header table starts past the end of the "
                                 f"file ({len(self.data)} bytes)")
            count = self._header_fields(0)[5]
            if count == 0:
                return ()
        if not self._fits(self._shoff, count * _SECTION_HEADER.size):
            raise self.error(f"the section header table (e_shoff {self._shoff:#x}, {count} headers of "
                             f"{_SECTION_HEADER.size} bytes) runs past the end of the file ({len(self.data)} bytes)")
        headers = [self._header_fields(i) for i in range(count)]
        names_index = headers[0][6] if self._shstrndx == SHN_XINDEX else self._shstrndx
        nameless = tuple(Section(i, "", *fields[1:]) for i, fields in enumerate(headers))
        if names_index == SHN_UNDEF:
            return nameless  # the file has no section names
        if names_index >= count:
            raise self.error(f"e_shstrndx {names_index:#x} is not a section (the file has {count})")
        names = replace(nameless[names_index], name="the section names")  # its own name is not read yet
        if names.type != SHT_STRTAB:
            raise self.error(f"e_shstrndx names section {names_index}, of type {names.type_name}, not a string table")
        return tuple(Section(i, self._string(names, fields[0], f"section {i}'s name (sh_name)"), *fields[1:])
                     for i, fields in enumerate(headers))

    def _header_fields(self, index: int) -> tuple[int, ...]:
        return _SECTION_HEADER.unpack_from(self.data, self._shoff + index * _SECTION_HEADER.size)

    def _fits(self, offset: int, size: int) -> bool:
        return offset + size <= len(self.data)

    @property
    def relocatable(self) -> bool:
        """A compiler's object file (ET_REL), whose addresses are offsets into sections, as opposed to a
        linked program (ET_EXEC, ET_DYN), whose addresses are where its sections are loaded."""
        return self.file_type == ET_REL

    def section(self, index: int, what: str) -> Section:
        """Section ``index``, which ``what`` (a field, for the message) names."""
        if not 0 <= index < len(self.sections):
            raise self.error(f"{what} {index:#x} is not a section (the file has {len(self.sections)})")
        return self.sections[index]

    def alignment(self, section: Section) -> int:
        """sh_addralign, at least 1: ELF allows 0 or 1 (no constraint) or a power of two."""
        if section.alignment > 1 and section.alignment & (section.alignment - 1):
            raise self.error(f"{section}: sh_addralign {section.alignment:#x} is not a power of two")
        return max(section.alignment, 1)

    # ---- a section's bytes ----------------------------------------------------------------------------

    def contents(self, section: Section) -> bytes:
        """The section's bytes as loaded: the file's (checked to lie inside it), or zeros for SHT_NOBITS (.bss),
        no more than MAX_SECTION_BYTES of them."""
        if section.index not in self._contents:
            if section.flags & SHF_COMPRESSED:
                raise self.error(f"{section} is compressed (SHF_COMPRESSED), which isasim does not read")
            if not section.holds_bytes:
                if section.size > MAX_SECTION_BYTES:
                    raise self.error(f"{section} (SHT_NOBITS) is {section.size:#x} bytes, more than the "
                                     f"{MAX_SECTION_BYTES >> 20} MiB isasim maps for a section")
                self._contents[section.index] = bytes(section.size)
            elif not self._fits(section.offset, section.size):
                raise self.error(f"{section}: sh_offset {section.offset:#x} + sh_size {section.size:#x} runs past "
                                 f"the end of the file ({len(self.data)} bytes)")
            else:
                self._contents[section.index] = self.data[section.offset:section.offset + section.size]
        return self._contents[section.index]

    def _string(self, table: Section, offset: int, what: str) -> str:
        """The NUL-terminated string at ``offset`` of string table ``table``, which ``what`` names."""
        strings = self.contents(table)
        if offset >= len(strings):
            raise self.error(f"{what} {offset:#x} is past the end of {table} ({len(strings)} bytes)")
        end = strings.find(b"\0", offset)
        if end < 0:
            raise self.error(f"{what} {offset:#x}: the string runs past the end of {table} (no NUL ends it)")
        # a name is bytes to ELF; one that is not UTF-8 is still shown (and matched) with its bytes escaped
        return strings[offset:end].decode("utf-8", "backslashreplace")

    # ---- symbols and relocations ------------------------------------------------------------------------

    def symbol_table(self) -> Section:
        tables = [s for s in self.sections if s.type == SHT_SYMTAB]
        if not tables:
            raise self.error("the ELF file has no symbol table (stripped?): isasim finds functions by name")
        if len(tables) > 1:
            raise self.error(f"{len(tables)} symbol tables ({', '.join(map(str, tables))}): ELF allows one")
        return tables[0]

    def symbols(self) -> tuple[Symbol, ...]:
        """Every entry of the symbol table (the null symbol first), names read and section indices checked."""
        if self._symbols is None:
            table = self.symbol_table()
            self._check_entries(table, _SYMBOL.size, "an ELF64 symbol")
            strings = self.section(table.link, f"{table}: sh_link")
            if strings.type != SHT_STRTAB:
                raise self.error(f"{table}: sh_link names {strings}, of type {strings.type_name}, not a string table")
            entries = self.contents(table)
            symbols = []
            for n in range(len(entries) // _SYMBOL.size):
                name_at, info, _other, shndx, value, size = _SYMBOL.unpack_from(entries, n * _SYMBOL.size)
                what = f"symbol {n} of {table}"
                name = self._string(strings, name_at, f"{what}: st_name")
                if name:
                    what = f"symbol {n} ({shown(name)}) of {table}"
                if shndx == SHN_XINDEX:
                    raise self.error(f"{what}: st_shndx SHN_XINDEX (an extended section index), which isasim "
                                     f"does not read")
                if SHN_UNDEF < shndx < SHN_LORESERVE and shndx >= len(self.sections):
                    raise self.error(f"{what}: st_shndx {shndx:#x} is not a section (the file has "
                                     f"{len(self.sections)})")
                symbols.append(Symbol(n, name, info & 0xF, info >> 4, shndx, value, size))
            self._symbols = tuple(symbols)
        return self._symbols

    def _check_entries(self, table: Section, entry_size: int, entry: str) -> None:
        if table.entry_size != entry_size:
            raise self.error(f"{table}: sh_entsize {table.entry_size:#x}, not the {entry_size} bytes of {entry}")
        if table.size % entry_size:
            raise self.error(f"{table}: sh_size {table.size:#x} is not a whole number of {entry_size}-byte entries")

    def relocation_tables(self, target: Section) -> list[Section]:
        """The SHT_REL and SHT_RELA sections whose sh_info says they patch ``target``."""
        return [s for s in self.sections if s.type in (SHT_REL, SHT_RELA) and s.info == target.index]

    def relocations(self, table: Section) -> list[Relocation]:
        """The entries of a SHT_REL or SHT_RELA table, each with its symbol (which must exist)."""
        layout = _RELA if table.type == SHT_RELA else _REL
        self._check_entries(table, layout.size, f"an ELF64 {'Rela' if table.type == SHT_RELA else 'Rel'} entry")
        symbols_table = self.symbol_table()
        if table.link != symbols_table.index:
            named = self.section(table.link, f"{table}: sh_link")
            raise self.error(f"{table}: sh_link names {named}, not the symbol table ({symbols_table})")
        symbols = self.symbols()
        entries = self.contents(table)
        out = []
        for n in range(len(entries) // layout.size):
            offset, info, *addend = layout.unpack_from(entries, n * layout.size)
            index, kind = info >> 32, info & 0xFFFFFFFF
            if index >= len(symbols):
                raise self.error(f"relocation {n} of {table}: symbol index {index:#x} is past the end of "
                                 f"{symbols_table} ({len(symbols)} symbols)")
            out.append(Relocation(n, offset, kind, symbols[index], addend[0] if addend else None))
        return out

    # ---- functions ---------------------------------------------------------------------------------------

    def function_bytes(self, symbol: Symbol, name: str) -> bytes:
        """The bytes of function ``symbol`` (``name`` as messages show it): st_size of them at st_value, an
        offset into its section in an object file, an address in a linked program."""
        if not symbol.in_section:
            raise self.error(f"'{name}' is not in a section of the file ({symbol.where})")
        if symbol.size == 0:
            raise self.error(f"'{name}' has no size in the symbol table: isasim cannot tell where it ends")
        section = self.sections[symbol.section]
        if not section.holds_bytes:
            raise self.error(f"'{name}' is in {section}, which holds no bytes in the file ({section.type_name})")
        start = symbol.value if self.relocatable else symbol.value - section.address
        if start < 0 or start + symbol.size > section.size:
            where = (f"offset {symbol.value:#x}" if self.relocatable else f"address {symbol.value:#x}")
            span = (f"{section.size:#x} bytes" if self.relocatable
                    else f"at {section.address:#x}..{section.address + section.size:#x}")
            raise self.error(f"'{name}' ({symbol.size:#x} bytes at {where}) does not lie inside {section} ({span})")
        return self.contents(section)[start:start + symbol.size]

    def function_at(self, value: int, section: int | None = None) -> Symbol | None:
        """The named function whose bytes hold ``value`` (an offset into ``section`` in an object file, an
        address in a linked program), if one does."""
        for symbol in self.symbols():
            if (symbol.type == STT_FUNC and symbol.name and (section is None or symbol.section == section)
                    and symbol.value <= value < symbol.value + max(symbol.size, 1)):
                return symbol
        return None

    def find_function(self, function: str) -> tuple[Symbol, str]:
        """The symbol named ``function`` (mangled, demangled with or without its parameters, or plain) and the
        name messages call it by (demangled where c++filt is at hand, and shortened if very long)."""
        symbols = [s for s in self.symbols() if s.name and s.type in (STT_FUNC, STT_NOTYPE) and s.section != SHN_ABS]
        names = demangle([s.name for s in symbols])
        wanted = function.strip()

        def readable(symbol: Symbol) -> str:
            return names.get(symbol.name, symbol.name)

        wanted_shown = shown(wanted)

        found = [s for s in symbols if wanted in (s.name, readable(s)) or readable(s).split("(", 1)[0] == wanted]
        defined = [s for s in found if s.defined]
        if not defined:
            if found:
                raise IsasimError(f"function '{wanted_shown}' is not defined in this file (only called from it)",
                                  source=self.path)
            functions = sorted(shown(readable(s)) for s in symbols if s.type == STT_FUNC and s.defined)
            listed = ", ".join(functions[:12]) + (f" and {len(functions) - 12} more" if len(functions) > 12 else "")
            raise IsasimError(f"no function '{wanted_shown}' in this file (its functions: {listed or 'none'})",
                              source=self.path)
        if len({(s.section, s.value) for s in defined}) > 1:
            raise IsasimError(f"'{wanted_shown}' names {len({(s.section, s.value) for s in defined})} functions ("
                              + ", ".join(sorted(shown(readable(s)) for s in defined))
                              + "): give the mangled name or the full signature", source=self.path)
        symbol = next((s for s in defined if s.type == STT_FUNC), defined[0])
        return symbol, shown(readable(symbol))


def demangle(names: list[str]) -> dict[str, str]:
    """Mangled C++ name -> its demangled form, through binutils' c++filt (empty without it).  c++filt reads
    one name a line, so a name holding a line break (only a damaged file has one) is left as it is."""
    mangled = [n for n in names if n.startswith("_Z") and "\n" not in n and "\r" not in n]
    tool = shutil.which("c++filt")
    if not mangled or tool is None:
        return {}
    try:
        done = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True, text=True,
                              errors="backslashreplace", timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return {}
    lines = done.stdout.split("\n")[:-1]  # not splitlines: that also splits at \x1c, \x85, U+2028, ...
    return dict(zip(mangled, lines)) if len(lines) == len(mangled) else {}
