"""Where gdb thinks the code is, and where isasim runs it.

An object file's function runs at the address its ISA's loader placed it (the function asked for at the
ISA's code base, the functions it calls after it, see x86_amx/elf.py and arm_sme/elf.py), while gdb, reading
the same file for its symbols and line tables, puts each function where the file says: a linked program's
at its link address, a relocatable object's at the address gdb gives its section (gdb lays the allocated
sections of a relocatable file out one after the other from 0, each at its alignment; symfile.c's
place_section).  :class:`AddressMap` translates between the two, one piece per placed function, so that
gdb's breakpoints by function and line, its pc and its disassembly agree with what runs.  An address no
piece covers (data, the stack, a program assembled from text) is the same in both.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from .elf_file import ElfFile, read_elf

SHF_ALLOC = 0x2
STT_FUNC = 2


@dataclass(frozen=True)
class Piece:
    sim: int  # where isasim runs it
    gdb: int  # where gdb, reading the file, puts it
    size: int
    name: str


class AddressMap:
    def __init__(self, pieces: list[Piece] = ()):
        self.pieces = sorted((piece for piece in pieces if piece.size > 0 and piece.sim != piece.gdb),
                             key=lambda piece: piece.sim)
        self._by_gdb = sorted(self.pieces, key=lambda piece: piece.gdb)
        self._sim_starts = [piece.sim for piece in self.pieces]
        self._gdb_starts = [piece.gdb for piece in self._by_gdb]

    @staticmethod
    def _find(address: int, starts: list[int], pieces: list[Piece], field: str) -> Piece | None:
        i = bisect_right(starts, address) - 1
        if i >= 0:
            piece = pieces[i]
            if getattr(piece, field) <= address < getattr(piece, field) + piece.size:
                return piece
        return None

    def to_gdb(self, address: int) -> int:
        piece = self._find(address, self._sim_starts, self.pieces, "sim")
        return address if piece is None else address - piece.sim + piece.gdb

    def to_sim(self, address: int) -> int:
        piece = self._find(address, self._gdb_starts, self._by_gdb, "gdb")
        return address if piece is None else address - piece.gdb + piece.sim

    def sim_spans(self, address: int, length: int) -> list[tuple[int, int]]:
        """gdb's [address, address+length) as isasim's (start, length) spans, in order."""
        spans: list[tuple[int, int]] = []
        end = address + length
        while address < end:
            piece = self._find(address, self._gdb_starts, self._by_gdb, "gdb")
            if piece is not None:
                take = min(end, piece.gdb + piece.size) - address
                spans.append((address - piece.gdb + piece.sim, take))
            else:  # up to the next piece's start, unmapped by any piece
                i = bisect_right(self._gdb_starts, address)
                next_start = self._gdb_starts[i] if i < len(self._gdb_starts) else end
                take = min(end, next_start) - address
                spans.append((address, take))
            address += take
        return spans


def gdb_section_addresses(elf: ElfFile) -> dict[int, int]:
    """Section index -> the address gdb gives it: its own in a linked file; in a relocatable one, the
    allocated sections one after the other from 0, each aligned (what gdb does for a .o it is given)."""
    if not elf.relocatable:
        return {section.index: section.address for section in elf.sections}
    addresses, next_free = {}, 0
    for section in elf.sections:
        if section.flags & SHF_ALLOC:
            alignment = max(1, section.alignment)
            start = -(-next_free // alignment) * alignment
            addresses[section.index] = start
            next_free = start + section.size
    return addresses


def address_map(path: str, machine: int, labels: dict[str, int], views=()) -> AddressMap:
    """The map for a program loaded from the ELF file at ``path``: each of its function symbols that the
    program placed (its labels: symbol name -> where it runs) at gdb's address for it, and each section the
    loader mapped as data (``views``, the init's region views, which the loaders name after the section) at
    gdb's address for that section, so that gdb's ``p some_global`` reads what the code reads."""
    elf = read_elf(path, machine)
    sections = gdb_section_addresses(elf)
    pieces = []
    for symbol in elf.symbols():
        if symbol.type != STT_FUNC or symbol.name not in labels or not symbol.in_section:
            continue
        if symbol.section not in sections:
            continue
        gdb = symbol.value + (sections[symbol.section] if elf.relocatable else 0)
        pieces.append(Piece(labels[symbol.name], gdb, symbol.size, symbol.name))
    named: dict[str, list] = {}
    for section in elf.sections:
        if section.index in sections and section.name:
            named.setdefault(section.name, []).append(section)
    for view in views:
        found = named.get(view.name, [])
        if len(found) == 1:  # a name two sections share (COMDAT groups) says nothing about which one it is
            section = found[0]
            pieces.append(Piece(view.address, sections[section.index], section.size, section.name))
    return AddressMap(pieces)
