"""A damaged object file is refused in one line naming the file and what is wrong (exit 2), never an
internal error (exit 70): one test per way the loader used to crash, each on one named field of a g++
object or a linked program (tests/elf_mutations.py edits it), and the reader's own checks of the ELF header.

Before isasim.core.elf_file, most of these crashed inside pyelftools' lazy parsing (ELFParseError, an
AttributeError for a symbol table of another type, OverflowError for an offset of 2^63, ELFCompressionError
for SHF_COMPRESSED, MemoryError or OverflowError for a huge .bss); the others ran what the file did not say
(a function cut to nothing, section names read from beyond their table) or blamed the init file.  The
ELF header's tests are about the words: a 32-bit x86 file was "for EM_X86_64 (32-bit), not x86-64", a
big-endian one had "no symbol table".  tests/fuzz/test_fuzz_elf.py samples the rest of the mutants.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_harness import error_line
from elf_mutations import edited, field, layout

from isasim.core.elf_file import EM_X86_64, read_elf

ROOT = Path(__file__).resolve().parents[2]
COMPILED = ROOT / "examples" / "x86_amx" / "compiled"
# A function whose relocation reaches .bss (a static buffer): the loader maps the section's zeros
SCRATCH = """static char scratch[64];
extern "C" char* scratch_address() { return scratch; }
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, bytes]:
    if shutil.which("g++") is None:
        pytest.skip("no g++ on this machine to compile the object files these tests damage")
    where = tmp_path_factory.mktemp("corrupted")
    (where / "scratch.cpp").write_text(SCRATCH)
    for source, out, flags in ((COMPILED / "kernels.cpp", "kernels.o", ["-mamx-tile", "-mamx-int8", "-mamx-bf16"]),
                               (where / "scratch.cpp", "scratch.o", [])):
        done = subprocess.run(["g++", "-c", "-O2", *flags, str(source), "-o", str(where / out)], capture_output=True,
                              text=True, timeout=300)
        if done.returncode:
            pytest.skip(f"g++ cannot compile {source.name} here: {done.stderr.strip()[-200:]}")
    out = {"kernels": (where / "kernels.o").read_bytes(), "scratch": (where / "scratch.o").read_bytes()}
    if shutil.which("ld") is not None:  # a linked program, whose functions the loader finds by address
        subprocess.run(["ld", "-e", "amx_block", "--unresolved-symbols=ignore-all", str(where / "kernels.o"), "-o",
                        str(where / "kernels.elf")], check=True, timeout=60)
        out["linked"] = (where / "kernels.elf").read_bytes()
    return out


@pytest.fixture
def linked(compiled) -> bytes:
    if "linked" not in compiled:
        pytest.skip("GNU ld (binutils) is not installed to link the kernels")
    return compiled["linked"]


def refusal(capsys, tmp_path, data: bytes, function: str = "amx_block") -> str:
    """The one error line of `isasim run` on ``data`` as an object file; it names the file."""
    path = tmp_path / "damaged.o"
    path.write_bytes(data)
    line = error_line(capsys, ["run", path, "--function", function, "--no-color"])
    assert line.startswith(f"isasim: error: {path}: "), line
    return line[len(f"isasim: error: {path}: "):]


def label(data: bytes, owner: str, name: str) -> str:
    """How the message names the owner of a field: "section 2 (.rela.text)" (indices differ between g++
    versions, so the tests read them from the file)."""
    return field(data, owner, name).name.rsplit(".", 1)[0]


def test_a_relocation_table_whose_link_is_no_section(compiled, capsys, tmp_path):
    data = compiled["kernels"]
    line = refusal(capsys, tmp_path, edited(data, field(data, ".rela.text", "sh_link"), 0x7FFF))
    assert line.startswith(f"{label(data, '.rela.text', 'sh_link')}: sh_link 0x7fff is not a section (the file has ")


def test_a_relocation_table_whose_link_is_not_the_symbol_table(compiled, capsys, tmp_path):
    data = compiled["kernels"]
    text = field(data, ".text", "sh_name").name.split(" ")[1]  # the index of .text
    line = refusal(capsys, tmp_path, edited(data, field(data, ".rela.text", "sh_link"), int(text)))
    assert f"sh_link names section {text} (.text), not the symbol table" in line


@pytest.mark.parametrize("section_type", [1, 3, 8, 0x70000001], ids=["PROGBITS", "STRTAB", "NOBITS", "X86_64_UNWIND"])
def test_a_symbol_table_of_another_type(compiled, capsys, tmp_path, section_type):
    data = compiled["kernels"]
    line = refusal(capsys, tmp_path, edited(data, field(data, ".symtab", "sh_type"), section_type))
    assert line.startswith("the ELF file has no symbol table"), line


def rodata(data: bytes) -> str:
    """The name of the read-only data section amx_block's constants are in (.rodata.cst16 from g++ 11 to 14)."""
    return next(name for name, _type, _offset, _size in layout(data).sections if name.startswith(".rodata"))


# each section the loader reads: names, symbols and their names, the function's code, its relocations, its data
READ_SECTIONS = [".shstrtab", ".symtab", ".strtab", ".text", ".rela.text", ".rodata"]


@pytest.mark.parametrize("section", READ_SECTIONS)
@pytest.mark.parametrize("offset", [1 << 63, (1 << 64) - 1, 0x7FFF])
def test_a_section_at_an_offset_past_the_file(compiled, capsys, tmp_path, section, offset):
    """Reading at 2^63 overflowed (OverflowError), past the end raised ELFParseError."""
    data = compiled["kernels"]
    section = rodata(data) if section == ".rodata" else section
    line = refusal(capsys, tmp_path, edited(data, field(data, section, "sh_offset"), offset))
    assert line.endswith(f"runs past the end of the file ({len(data)} bytes)"), line
    assert f": sh_offset {offset:#x} + sh_size " in line


@pytest.mark.parametrize("section", [".symtab", ".rela.text"])
def test_a_table_that_runs_past_the_end_of_the_file(compiled, capsys, tmp_path, section):
    data = compiled["kernels"]
    line = refusal(capsys, tmp_path, edited(data, field(data, section, "sh_size"), 24 * len(data)))
    assert line.startswith(f"{label(data, section, 'sh_size')}: sh_offset ")
    assert line.endswith(f"runs past the end of the file ({len(data)} bytes)")


@pytest.mark.parametrize("section", [".text", ".rodata"])
def test_a_compressed_section(compiled, capsys, tmp_path, section):
    """SHF_COMPRESSED made pyelftools read a compression header from the section and inflate what followed
    (ELFCompressionError here; a well-formed zlib stream would have been inflated to whatever size it holds)."""
    data = compiled["kernels"]
    section = rodata(data) if section == ".rodata" else section
    flags = field(data, section, "sh_flags")
    value = int.from_bytes(data[flags.offset:flags.offset + 8], "little") | 0x800
    line = refusal(capsys, tmp_path, edited(data, flags, value))
    assert line == f"{label(data, section, 'sh_flags')} is compressed (SHF_COMPRESSED), which isasim does not read"


def test_a_symbol_in_no_section(compiled, capsys, tmp_path):
    """st_shndx past the section headers, of a symbol the relocations reach (.LC0) and of the function."""
    data = compiled["kernels"]
    for symbol in (".LC0", "amx_block"):
        line = refusal(capsys, tmp_path, edited(data, field(data, f"symbol {symbol}", "st_shndx"), 0x7FF))
        assert f"symbol {field(data, f'symbol {symbol}', 'st_shndx').name.split(' ')[4]} ({symbol}) of " in line
        assert "st_shndx 0x7ff is not a section" in line


def test_a_function_that_runs_past_its_section(compiled, capsys, tmp_path):
    data = compiled["kernels"]
    line = refusal(capsys, tmp_path, edited(data, field(data, "symbol amx_block", "st_size"), 1 << 63))
    assert line.startswith("'amx_block' (0x8000000000000000 bytes at offset 0x0) does not lie inside section ")


@pytest.mark.parametrize("index", [14, 0xFFFFFFFF], ids=["just-past", "all-ones"])
def test_a_relocation_naming_a_symbol_past_the_table(compiled, capsys, tmp_path, index):
    data = compiled["kernels"]
    symbols = len([f for f in layout(data).fields if f.name.endswith(".st_name") and "(.symtab)" in f.name])
    index = symbols if index == 14 else index
    relocation = next(f for f in layout(data).fields if ".rela.text) relocation 0.r_sym" in f.name)
    line = refusal(capsys, tmp_path, edited(data, relocation, index))
    assert line.startswith(f"relocation 0 of {relocation.name.split(' relocation')[0]}: symbol index {index:#x} is "
                           f"past the end of "), line
    assert line.endswith(f"({symbols} symbols)")


@pytest.mark.parametrize("size", [1 << 63, 1 << 40])
def test_a_huge_bss_is_refused_before_its_zeros_are_made(compiled, capsys, tmp_path, size):
    data = compiled["scratch"]
    line = refusal(capsys, tmp_path, edited(data, field(data, ".bss", "sh_size"), size), "scratch_address")
    assert line.startswith(f"{label(data, '.bss', 'sh_size')} (SHT_NOBITS) is {size:#x} bytes, more than the ")


def test_a_bss_within_the_limit_is_zeros(compiled, tmp_path):
    from isasim.core.trace import Init
    from isasim.x86_amx.elf import load_object

    path = tmp_path / "scratch.o"
    path.write_bytes(compiled["scratch"])
    _program, init = load_object(str(path), "scratch_address", Init())
    [bss] = [data for (address, data, writable), view in zip(init.memory, init.views) if view.name == ".bss"]
    assert bss == bytes(64)


def test_a_linked_function_in_no_section(linked, capsys, tmp_path):
    line = refusal(capsys, tmp_path, edited(linked, field(linked, "symbol amx_block", "st_shndx"), 0x7FF))
    assert "(amx_block) of " in line and "st_shndx 0x7ff is not a section" in line


def test_a_linked_function_outside_its_section(linked, capsys, tmp_path):
    """.text moved away from the function's address: the code was cut to nothing and ran as a program of no
    instructions (explain said 'there is no instruction #1 (the program has 0)', naming no file)."""
    line = refusal(capsys, tmp_path, edited(linked, field(linked, ".text", "sh_addr"), 1))
    assert line.startswith("'amx_block' (0x70 bytes at address ") and "does not lie inside " in line, line
    assert line.endswith("(.text) (at 0x1..0x58a)"), line


@pytest.mark.parametrize("field_name, value", [("sh_offset", 1 << 63), ("sh_flags", 0x806)],
                         ids=["offset-2^63", "compressed"])
def test_a_linked_programs_code_that_cannot_be_read(linked, capsys, tmp_path, field_name, value):
    line = refusal(capsys, tmp_path, edited(linked, field(linked, ".text", field_name), value))
    assert line.startswith(label(linked, ".text", field_name)), line


def test_an_object_file_that_says_it_is_linked(compiled, capsys, tmp_path):
    """e_type ET_EXEC on a .o: its sections all say address 0, so they land on one another.  Memory refused
    that after the loader, blaming the init file ("region 0x0..0x10 overlaps region 0x0..0x2")."""
    data = compiled["kernels"]
    line = refusal(capsys, tmp_path, edited(data, field(data, "", "e_type"), 2))
    assert " overlap in memory (from 0x0)" in line and line.startswith("section .rodata"), line


def test_section_names_past_their_table(compiled, capsys, tmp_path):
    data = compiled["kernels"]
    line = refusal(capsys, tmp_path, edited(data, field(data, ".text", "sh_name"), 0xFFFFFFFF))
    assert "name (sh_name) 0xffffffff is past the end of section " in line and "(the section names)" in line


def test_a_string_table_without_its_last_nul(compiled, capsys, tmp_path):
    data = compiled["kernels"]
    strings = field(data, ".strtab", "sh_offset")
    offset = int.from_bytes(data[strings.offset:strings.offset + 8], "little")
    size = int.from_bytes(data[strings.offset + 8:strings.offset + 16], "little")
    damaged = data[:offset + size - 1] + b"x" + data[offset + size:]
    assert "the string runs past the end of" in refusal(capsys, tmp_path, damaged)


@pytest.mark.parametrize("name", ["kernels", "scratch"])
def test_the_reader_agrees_with_pyelftools_on_a_sound_file(compiled, tmp_path, name):
    """What the checks let through is what the file says: sections, symbols and relocations as pyelftools
    reads them from the compiler's own object file."""
    from elftools.elf.elffile import ELFFile

    path = tmp_path / f"{name}.o"
    path.write_bytes(compiled[name])
    elf = read_elf(str(path), EM_X86_64)
    with open(path, "rb") as file:
        reference = ELFFile(file)
        assert [(s.name, s.size, s.offset, s.link, s.info, s.flags) for s in elf.sections] == [
            (s.name, s["sh_size"], s["sh_offset"], s["sh_link"], s["sh_info"], s["sh_flags"])
            for s in reference.iter_sections()]
        symbols = reference.get_section_by_name(".symtab")
        assert [(s.name, s.value, s.size, s.section if s.in_section else s.where) for s in elf.symbols()] == [
            (s.name, s["st_value"], s["st_size"], s["st_shndx"]) for s in symbols.iter_symbols()]
        for table in reference.iter_sections():
            if table["sh_type"] != "SHT_RELA":
                continue
            ours = elf.relocations(elf.sections[reference.get_section_index(table.name)])
            assert [(r.offset, r.type, r.symbol.index, r.addend) for r in ours] == [
                (r["r_offset"], r["r_info_type"], r["r_info_sym"], r["r_addend"]) for r in table.iter_relocations()]


# ---- the ELF header, from bytes made here (no compiler needed) --------------------------------------


def header(elf_class: int = 2, encoding: int = 1, machine: int = EM_X86_64, file_type: int = 1) -> bytes:
    order = "little" if encoding == 1 else "big"
    return (b"\x7fELF" + bytes([elf_class, encoding, 1]) + bytes(9) + file_type.to_bytes(2, order)
            + machine.to_bytes(2, order) + bytes(44))


@pytest.mark.parametrize("data, words", [
    (header(elf_class=1, machine=3), "an ELF file for i386, not x86-64"),
    (header(elf_class=1), "a 32-bit little-endian ELF file: isasim reads 64-bit little-endian ones"),
    (header(encoding=2), "a 64-bit big-endian ELF file"),
    (header(machine=183), "the ELF file has no symbol table"),  # AArch64: arm_sme's loader reads it (issue 28)
    (header(elf_class=3), "EI_CLASS 3 is neither 32-bit (1) nor 64-bit (2)"),
    (header(encoding=0), "EI_DATA 0 is neither little-endian (1) nor big-endian (2)"),
    (header(file_type=4), "a core dump (ET_CORE): isasim loads relocatable objects (.o) and linked programs"),
    (header()[:40], "the file ends at byte 40, inside the ELF header (64 bytes)"),
    (header(), "the ELF file has no symbol table"),
], ids=["i386", "32-bit", "big-endian", "aarch64", "bad-class", "bad-data", "core", "cut", "no-sections"])
def test_the_elf_header(capsys, tmp_path, data, words):
    assert words in refusal(capsys, tmp_path, data)


def test_the_reader_knows_no_isa():
    """isasim.core.elf_file serves every ISA's loader: it imports nothing from an ISA package."""
    tree = ast.parse((ROOT / "isasim" / "core" / "elf_file.py").read_text())
    modules = [(node.level, node.module or "") for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    modules += [(0, alias.name) for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    # from . import (core) and the standard library only: not from .. (isasim's ISA packages), nor isasim.*
    outside_core = [name for level, name in modules if level > 1 or level == 0 and name.split(".")[0] == "isasim"]
    assert not outside_core, outside_core
