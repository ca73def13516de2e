"""The ISA-neutral program model: forms keyed by id, instructions with or without bytes,
and the journal's structured locations."""

from __future__ import annotations

import copy
import json
import pickle
from dataclasses import dataclass

import pytest

from isasim.core.journal import Location, Write
from isasim.core.program import Form, FormTable, Instruction, NoEncodingError, Program, syntax_id


@dataclass(frozen=True)
class ToyForm:
    """A form of an imaginary text-only ISA: two forms share the mnemonic 'dot'."""

    syntax: str
    summary: str = ""

    @property
    def id(self) -> str:
        return syntax_id(self.syntax)

    @property
    def mnemonic(self) -> str:
        return self.syntax.split()[0].lower()


DOT_B = ToyForm("DOT za.s, z.b, z.b", "bytes")
DOT_H = ToyForm("DOT za.d, z.h, z.h", "halves")


def test_syntax_id_joins_mnemonic_and_operand_names():
    assert syntax_id("TILELOADD tmm1, sibmem") == "TILELOADD_tmm1_sibmem"
    assert syntax_id("TILERELEASE") == "TILERELEASE"
    assert syntax_id("DOT za.s, z.b, z.b") == "DOT_za.s_z.b_z.b"


def test_a_form_table_keys_forms_by_id_and_finds_every_form_of_a_mnemonic():
    table = FormTable()
    table.add(DOT_B)
    table.add(DOT_H)
    assert list(table) == [DOT_B, DOT_H] and len(table) == 2
    assert table["DOT_za.d_z.h_z.h"] is DOT_H and table.get("nothing") is None
    assert table.of_mnemonic("dot") == (DOT_B, DOT_H) and table.of_mnemonic("udot") == ()
    assert DOT_B in table and ToyForm("DOT za.s, z.b, z.b") not in table  # the object, not an equal one
    assert isinstance(DOT_B, Form)
    with pytest.raises(ValueError, match="two instruction forms have the id"):
        table.add(ToyForm("DOT za.s, z.b, z.b"))


def test_the_x86_forms_are_core_forms_with_unique_ids():
    from isasim.x86_amx.forms import amx, scalar

    forms = amx.FORMS + scalar.FORMS
    assert all(isinstance(form, Form) for form in forms)
    assert len({form.id for form in forms}) == len(forms)
    (tdpbusd,) = amx.FORMS.of_mnemonic("tdpbusd")
    assert tdpbusd.id == "TDPBUSD_tmm1_tmm2_tmm3" and tdpbusd.element_types == ("int32", "uint8", "int8")
    assert amx.FORMS["TILELOADD_tmm1_sibmem"].mnemonic == "tileloadd"
    assert scalar.FORMS["JE_rel"].mnemonic == "je"


def test_a_text_only_program_steps_by_size_and_says_it_has_no_code():
    ins = [Instruction(DOT_B, (), 0x100 + 4 * i, None, "dot za.s, z0.b, z1.b", size=4) for i in range(3)]
    program = Program("toy", 0x100, ins, labels={"top": 0x104})
    assert [i.next_address for i in program.instructions] == [0x104, 0x108, 0x10C]
    assert program.end == 0x10C and program.at(0x108) is ins[2] and not program.has_encoding
    with pytest.raises(NoEncodingError, match="toy instructions have no binary encoding"):
        program.code
    listing = program.listing()
    assert listing.splitlines()[0] == "(toy has no binary encoding: text only)"
    assert "top:" in listing and "     2  0x108  dot za.s, z0.b, z1.b" in listing


def test_an_instruction_needs_bytes_or_a_size_and_they_must_agree():
    assert Instruction(DOT_B, (), 0, b"\x90\x90", "nop").size == 2
    with pytest.raises(ValueError, match="needs a size"):
        Instruction(DOT_B, (), 0, None, "dot")
    with pytest.raises(ValueError, match="size 3 but 2 encoding bytes"):
        Instruction(DOT_B, (), 0, b"\x90\x90", "nop", size=3)


def test_an_x86_program_keeps_its_bytes_and_listing():
    from isasim.x86_amx import ISA

    program = ISA.assemble("tilezero tmm0\nret\n")
    assert program.has_encoding and program.code == bytes.fromhex("c4e27b49c0c3")
    assert [i.size for i in program.instructions] == [5, 1] and program.end == program.base + 6
    assert program.listing().splitlines()[0].split() == ["0", "0x400000", "c4", "e2", "7b", "49", "c0", "tilezero",
                                                         "tmm0"]


def test_a_location_is_its_trace_text_with_its_parts():
    row, field, reg = Location("tmm0", 3), Location("tmm2", field="colsb"), Location("rax")
    assert (str(row), str(field), str(reg)) == ("tmm0[3]", "tmm2.colsb", "rax")
    assert (row.name, row.subscript, row.field) == ("tmm0", 3, None)
    assert (field.name, field.subscript, field.field) == ("tmm2", None, "colsb")
    assert row == "tmm0[3]" and {reg: 1}["rax"] == 1 and json.dumps([row]) == '["tmm0[3]"]'
    assert row.index("[") == 4  # still a str
    for again in (pickle.loads(pickle.dumps(row)), copy.deepcopy(row)):
        assert (again.name, again.subscript, str(again)) == ("tmm0", 3, "tmm0[3]")
    with pytest.raises(AttributeError):
        row.name = "tmm1"
    assert Write("tile", row, b"\x00\x01", b"\x02\x03").describe() == "tile tmm0[3]: 0001 -> 0203"
    assert Write("mem", 0x20000, b"\x00", b"\xff").describe() == "mem 0x20000: 00 -> ff"
    assert Write("reg", reg, 0, 255).describe() == "reg rax: 0x0 -> 0xff"


def test_x86_writes_are_structured_locations():
    from isasim.core.machine import Machine

    m = Machine("x86_amx", {})
    cfg = (bytes([1, 0]) + bytes(14) + (4).to_bytes(2, "little") + bytes(30) + bytes([2]) + bytes(15))
    m.load(m.assemble("ldtilecfg [rdi]\ntilezero tmm0\nmov rax, 5\n"), regs={"rdi": 0x20000},
           memory=[(0x20000, cfg, True)])
    first = m.step().writes
    assert {(w.where.name, w.where.field) for w in first} == {("palette", None), ("tmm0", "colsb"), ("tmm0", "rows")}
    m.state.write_tile(0, m.state.tile(0) + 1)  # rows to zero, so that TILEZERO writes them
    m.journal.take()
    rows = m.step().writes
    assert [(w.kind, w.where.name, w.where.subscript) for w in rows] == [("tile", "tmm0", r) for r in range(16)]
    (mov,) = m.step().writes
    assert (mov.kind, str(mov.where), mov.old, mov.new) == ("reg", "rax", 0, 5)
