"""Structure-aware mutants of an ELF64 little-endian file, one field at a time, for the corrupted-object tests.

``fields(data)`` walks the file as a reader would (the ELF header, the program headers, the section
headers, every symbol of each symbol table, every relocation of each relocation table) and lists each
field with its place in the file; ``mutants(data)`` edits one field at a time to hostile values (0, 1,
all ones, 2^31, 2^32, 2^63, the file's size and its neighbours, other sections' indices, every section
type, misaligned and zero entry sizes, reserved section indices, unknown relocation types, ...), cuts the
file at every structure boundary and breaks string tables.  Each mutant says what it changed, so that a
failure names a reproducible case.

The parser here is deliberately separate from isasim's reader (isasim.core.elf_file): a mistake shared
by both would hide the very crashes these mutants look for.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Iterator


@dataclass(frozen=True)
class Field:
    """One field of the file: what it is (``section 11 (.symtab).sh_link``), where and how wide."""

    name: str
    offset: int
    width: int
    kind: str  # which hostile values fit it: the field's own name without its owner (sh_link, st_shndx, ...)
    structure: str  # the structure it belongs to: "ELF header", "section header", "symbol", ...


@dataclass(frozen=True)
class Mutant:
    """One change to ``original``: ``patch`` written at ``offset``, or the file cut to ``offset`` bytes when
    ``patch`` is None.  The mutated bytes are made when asked for, so a campaign holds one file at a time."""

    what: str  # the change, e.g. "section 2 (.rela.text).sh_link = 0x7fff (was 0xb)"
    structure: str  # what it damages: "ELF header", "section header", "symbol", "relocation", ...
    original: bytes
    offset: int
    patch: bytes | None

    @property
    def data(self) -> bytes:
        if self.patch is None:
            return self.original[:self.offset]
        return self.original[:self.offset] + self.patch + self.original[self.offset + len(self.patch):]


_EHDR = (("e_type", 16, 2), ("e_machine", 18, 2), ("e_version", 20, 4), ("e_entry", 24, 8), ("e_phoff", 32, 8),
         ("e_shoff", 40, 8), ("e_flags", 48, 4), ("e_ehsize", 52, 2), ("e_phentsize", 54, 2), ("e_phnum", 56, 2),
         ("e_shentsize", 58, 2), ("e_shnum", 60, 2), ("e_shstrndx", 62, 2))
_IDENT = (("EI_MAG0", 0), ("EI_MAG3", 3), ("EI_CLASS", 4), ("EI_DATA", 5), ("EI_VERSION", 6), ("EI_OSABI", 7))
_SHDR = (("sh_name", 0, 4), ("sh_type", 4, 4), ("sh_flags", 8, 8), ("sh_addr", 16, 8), ("sh_offset", 24, 8),
         ("sh_size", 32, 8), ("sh_link", 40, 4), ("sh_info", 44, 4), ("sh_addralign", 48, 8), ("sh_entsize", 56, 8))
_PHDR = (("p_type", 0, 4), ("p_flags", 4, 4), ("p_offset", 8, 8), ("p_vaddr", 16, 8), ("p_paddr", 24, 8),
         ("p_filesz", 32, 8), ("p_memsz", 40, 8), ("p_align", 48, 8))
_SYM = (("st_name", 0, 4), ("st_info", 4, 1), ("st_other", 5, 1), ("st_shndx", 6, 2), ("st_value", 8, 8),
        ("st_size", 16, 8))
# r_info is two fields for a reader: the symbol index in its high 32 bits, the type in its low 32
_RELA = (("r_offset", 0, 8), ("r_type", 8, 4), ("r_sym", 12, 4), ("r_addend", 16, 8))
_REL = _RELA[:3]

SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL, SHT_DYNSYM = 2, 3, 4, 8, 9, 11
SECTION_TYPES = tuple(range(20)) + (0x60000000, 0x6FFFFFF6, 0x70000001, 0xFFFFFFFF)
RESERVED_INDICES = (0xFF00, 0xFFF1, 0xFFF2, 0xFFFF)  # SHN_LORESERVE, SHN_ABS, SHN_COMMON, SHN_XINDEX
SYMBOL_TYPES = (0, 1, 2, 3, 4, 5, 6, 10, 15)  # NOTYPE OBJECT FUNC SECTION FILE COMMON TLS GNU_IFUNC, HIPROC
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR, SHF_COMPRESSED = 0x1, 0x2, 0x4, 0x800


@dataclass(frozen=True)
class Layout:
    """Where an ELF file's structures are: the boundaries a truncation cuts at, the sections' ranges."""

    fields: tuple[Field, ...]
    boundaries: tuple[int, ...]
    section_count: int
    sections: tuple[tuple[str, int, int, int], ...]  # (name, type, offset, size)


def _u(data: bytes, offset: int, width: int) -> int:
    return int.from_bytes(data[offset:offset + width], "little")


def layout(data: bytes) -> Layout:
    """The fields of a well-formed ELF64 little-endian file (the compilers' output these tests start from)."""
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "an ELF64 little-endian file"
    out = [Field(f"e_ident[{name}]", offset, 1, name, "ELF header") for name, offset in _IDENT]
    out += [Field(name, offset, width, name, "ELF header") for name, offset, width in _EHDR]
    boundaries = {0, 4, 16, 52, 63, 64, len(data) - 1}
    phoff, phentsize, phnum = _u(data, 32, 8), _u(data, 54, 2), _u(data, 56, 2)
    for i in range(phnum):
        base = phoff + i * phentsize
        boundaries.add(base)
        out += [Field(f"program header {i}.{name}", base + offset, width, name, "program header")
                for name, offset, width in _PHDR]
    shoff, shentsize, shnum, shstrndx = _u(data, 40, 8), _u(data, 58, 2), _u(data, 60, 2), _u(data, 62, 2)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4] if shstrndx < shnum else 0

    def name_of(index: int) -> str:
        start = names_at + headers[index][0]
        return data[start:data.index(b"\0", start)].decode("ascii", "replace")

    sections = []
    for i, (_name, kind, _flags, _addr, offset, size, link, _info, _align, entsize) in enumerate(headers):
        label = f"section {i} ({name_of(i) or 'null'})"
        sections.append((name_of(i), kind, offset, size))
        boundaries |= {shoff + i * shentsize, offset, offset + size}
        out += [Field(f"{label}.{name}", shoff + i * shentsize + at, width, name, "section header")
                for name, at, width in _SHDR]
        if kind in (SHT_SYMTAB, SHT_DYNSYM) and entsize:
            strings = headers[link][4]
            for n in range(size // entsize):
                base = offset + n * entsize
                boundaries.add(base)
                start = strings + _u(data, base, 4)
                symbol = data[start:data.index(b"\0", start)].decode("ascii", "replace")
                entry = f"{label} symbol {n}" + (f" ({symbol})" if symbol else "")
                out += [Field(f"{entry}.{name}", base + at, width, name, "symbol") for name, at, width in _SYM]
        elif kind in (SHT_RELA, SHT_REL) and entsize:
            for n in range(size // entsize):
                base = offset + n * entsize
                boundaries.add(base)
                out += [Field(f"{label} relocation {n}.{name}", base + at, width, name, "relocation")
                        for name, at, width in (_RELA if kind == SHT_RELA else _REL)]
    boundaries.add(shoff + shnum * shentsize)
    return Layout(tuple(out), tuple(sorted(b for b in boundaries if 0 <= b < len(data))), shnum, tuple(sections))


def hostile_values(field: Field, original: int, file_size: int, section_count: int,
                   symbol_count: int) -> list[int]:
    """The values one field is set to: the extremes of its width, the file's size and its neighbours, and
    what is wrong for its kind in particular (another section's index, a type that does not fit, ...)."""
    bits = field.width * 8
    values = {0, 1, 2, original + 1, original - 1, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1,
              0x7FFF, 0xFFFF, 1 << 31, (1 << 32) - 1, 1 << 32, 1 << 63, file_size - 1, file_size, file_size + 1,
              file_size - original, file_size - original + 1}
    kind = field.kind
    if kind in ("sh_link", "sh_info", "e_shstrndx", "st_shndx"):
        values |= set(range(section_count + 2)) | set(RESERVED_INDICES)
    if kind == "sh_type":
        values |= set(SECTION_TYPES)
    if kind == "sh_flags":
        values |= {original | SHF_COMPRESSED, original ^ SHF_ALLOC, original ^ SHF_WRITE, original ^ SHF_EXECINSTR,
                   SHF_ALLOC | SHF_EXECINSTR}
    if kind == "sh_entsize":
        values |= {7, 8, 16, 23, 24, 25, 48}
    if kind == "sh_addralign":
        values |= {3, 4096, 1 << 40}
    if kind == "st_info":
        values |= {(original & 0xF0) | t for t in SYMBOL_TYPES} | {(b << 4) | (original & 0xF) for b in (0, 1, 2, 10)}
    if kind == "r_type":
        values |= set(range(43)) | {0xFF}
    if kind == "r_sym":
        values |= {symbol_count - 1, symbol_count, symbol_count + 1}
    if kind == "r_addend":
        values |= {(1 << 64) - 4, (1 << 64) - (1 << 31) - 1, (1 << 31) - 4}
    if kind == "e_ident[EI_CLASS]" or kind == "EI_CLASS":
        values |= {3}
    if kind == "EI_DATA":
        values |= {3}
    if kind == "e_machine":
        values |= {3, 40, 62, 183, 243}  # 386, ARM, X86_64, AARCH64, RISCV
    if kind == "e_type":
        values |= {3, 4, 0xFE00}
    if kind in ("e_shentsize", "e_phentsize", "e_ehsize"):
        values |= {32, 40, 56, 63, 64, 65, 128}
    if kind == "e_shnum":
        values |= {section_count - 1, section_count + 1, 0xFF00}
    return sorted({v % (1 << bits) for v in values if v >= 0} - {original})


def mutants(data: bytes) -> Iterator[Mutant]:
    """Every one-field edit of ``data`` (in the order of its fields), every cut at a structure boundary, and
    the string tables' breakages, each once (edits that leave the file as it was are skipped)."""
    plan = layout(data)
    symbol_count = max([size // 24 for _n, kind, _o, size in plan.sections if kind == SHT_SYMTAB] or [0])
    for field in plan.fields:
        original = _u(data, field.offset, field.width)
        for value in hostile_values(field, original, len(data), plan.section_count, symbol_count):
            # fields do not overlap and each value differs from the original: every edit is a new file
            yield Mutant(f"{field.name} = {value:#x} (was {original:#x})", field.structure, data, field.offset,
                         value.to_bytes(field.width, "little"))
    for cut in plan.boundaries:
        yield Mutant(f"truncated to {cut} bytes (of {len(data)})", "truncation", data, cut, None)
    for name, kind, offset, size in plan.sections:
        if kind != SHT_STRTAB or not size:
            continue
        table = data[offset:offset + size]
        for what, broken in ((f"{name}: its last NUL replaced by 'x' (an unterminated string)",
                              table[:-1] + b"x"),
                             (f"{name}: every NUL replaced by 'x' (no string ends)", table.replace(b"\0", b"x")),
                             (f"{name}: its names in invalid UTF-8 (0xff)",
                              bytes(b if b == 0 else 0xFF for b in table)),
                             (f"{name}: its names made of escape characters",
                              bytes(b if b == 0 else 0x1B for b in table)),
                             (f"{name}: its names made of line breaks", bytes(b if b == 0 else 0x0A for b in table))):
            yield Mutant(what, "string table", data, offset, broken)


def field(data: bytes, owner: str, name: str) -> Field:
    """The field ``name`` (sh_link, st_shndx, ...) of ``owner``: a section's name (".rela.text"), a symbol's
    ("symbol amx_block"), or "" for the ELF header; e.g. field(data, ".strtab", "sh_offset")."""
    if not owner:
        wanted = re.compile(re.escape(name))
    elif owner.startswith("symbol "):
        symbol = re.escape(owner[len("symbol "):])
        wanted = re.compile(r"section \d+ \(\.symtab\) symbol \d+ \(" + symbol + r"\)\." + re.escape(name))
    else:
        wanted = re.compile(r"section \d+ \(" + re.escape(owner) + r"\)\." + re.escape(name))
    [found] = [f for f in layout(data).fields if wanted.fullmatch(f.name)]
    return found


def edited(data: bytes, where: Field, value: int) -> bytes:
    """``data`` with field ``where`` set to ``value`` (modulo its width): one named mutant, for a regression test."""
    patch = (value % (1 << 8 * where.width)).to_bytes(where.width, "little")
    return data[:where.offset] + patch + data[where.offset + where.width:]
