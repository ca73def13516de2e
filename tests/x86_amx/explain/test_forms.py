"""isasim explain of x86_amx: every form explains from its definition, its encoding field by field.

Every section comes from the definitions, every worked number from the machine; the
worked elements are in test_tmul.py, the tile moves in test_tiles.py.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from isasim.core.explain import Code, Encoding, Table, render_html, render_markdown, render_svg, to_text
from isasim.x86_amx.forms import amx, amx_extensions, control, scalar, vector
from isasim.x86_amx.explain import reference_pages
from isasim.x86_amx.semantics import strings

from explain_helpers import blocks, ex, fields

PAGES = reference_pages()


@pytest.mark.parametrize("page", PAGES, ids=[p.slug for p in PAGES])
def test_every_form_explains_from_its_definition(page):
    expl = ex(page.example)
    titles = [s.title for s in expl.sections]
    for wanted in ("Encoding", "Operands", "Faults", "Worked example"):
        assert wanted in titles
    forms = amx.FORMS + scalar.FORMS + list(vector.FORMS) + list(control.FORMS) + list(control.BUILTINS.values())
    forms += list(amx_extensions.FORMS)  # issue 29's AMX extensions
    form = next(f for f in forms if f.mnemonic == page.slug or getattr(f, "slug", None) == page.slug)
    # the operation is the docstring of the semantics function the simulator runs
    code, *repeat = blocks(expl, "Operation (the semantics the simulator executes)", Code)
    assert code.text == form.doc
    # behind a repeat prefix (rep stos ...), the prefix's operation follows: the REP loop the simulator runs
    assert [c.text for c in repeat] == ([strings.repeat.__doc__.strip()] if page.example.startswith("rep") else [])
    # the encoding parts cover the instruction's bytes exactly, in order
    (encoding,) = blocks(expl, "Encoding", Encoding)
    assert b"".join(p.data for p in encoding.parts) == expl.encoding
    assert [p.offset for p in encoding.parts] == sorted(p.offset for p in encoding.parts)
    assert all(c.equal for c in expl.checks), [c for c in expl.checks if not c.equal]
    # every renderer accepts it
    assert page.slug.split("-")[0] in to_text(expl).lower()  # (jmp-indirect: jmp)
    if expl.figure is not None:
        ET.fromstring(render_svg(expl.figure))
    html = render_html(expl)
    assert html.startswith("<!DOCTYPE html>") and ("<svg" in html) == (expl.figure is not None)
    assert "## Worked example" in render_markdown(expl)


@pytest.mark.parametrize("page", PAGES, ids=[p.slug for p in PAGES])
def test_every_field_is_a_bit_range_of_its_unit(page):
    """A unit's binary fields are its bits, most significant first, with no gap or overlap."""
    (encoding,) = blocks(ex(page.example), "Encoding", Encoding)
    for unit in encoding.units:
        binary = [f for f in unit.fields if f.binary]
        if not binary:
            continue
        assert unit.fully_split, unit
        top = unit.width
        for f in binary:
            assert f.first + f.width == top, (unit.name, f.name)
            assert f.value == unit.bits_at(f.first, f.width), (unit.name, f.name)
            top = f.first
        assert top == 0


def test_amx_faults_come_from_the_form_declaration():
    for form in amx.FORMS:
        expl = ex(next(p.example for p in PAGES if p.slug == form.mnemonic))
        (table,) = blocks(expl, "Faults", Table)
        rules = [str(row[1]) for row in table.rows]
        for kind, rule in form.faults:
            assert rule in rules
        assert any(form.feature in r for r in rules)
        assert any(r.startswith("encoding:") for r in rules)


def test_tmul_operand_roles_come_from_the_form_declaration():
    for form in amx.FORMS:
        expl = ex(next(p.example for p in PAGES if p.slug == form.mnemonic))
        (table,) = blocks(expl, "Operands", Table)
        roles = [row[5].text if row[5] else "" for row in table.rows]
        assert roles == (list(form.operand_roles) or [""] * len(table.rows))


# ---------------------------------------------------------------------------
# The encoding, field by field
# ---------------------------------------------------------------------------


def test_vex_fields_of_tdpbusd_from_text_and_from_hex():
    a, b = ex("tdpbusd tmm0, tmm1, tmm2"), ex(code=bytes.fromhex("c4e2695ec1"))
    assert a.encoding == b.encoding == bytes.fromhex("c4e2695ec1") and a.text == b.text
    f = fields(a)
    assert f[("VEX byte 1", "m-mmmm")].bits == "00010" and "0F38" in f[("VEX byte 1", "m-mmmm")].meaning
    assert f[("VEX byte 2", "v̄v̄v̄v̄")].bits == "1101" and "tmm2" in f[("VEX byte 2", "v̄v̄v̄v̄")].meaning
    assert f[("VEX byte 2", "pp")].bits == "01" and "66" in f[("VEX byte 2", "pp")].meaning
    assert f[("ModRM", "reg")].bits == "000" and "tmm0" in f[("ModRM", "reg")].meaning
    assert f[("ModRM", "r/m")].bits == "001" and "tmm1" in f[("ModRM", "r/m")].meaning
    assert all(x.ok is not False for x in f.values())


def test_sib_and_displacement_of_a_tile_load():
    f = fields(ex("tileloadd tmm1, [rdi+r8*4+0x40]"))
    assert f[("SIB", "scale")].bits == "10" and "4" in f[("SIB", "scale")].meaning
    assert "r8" in f[("SIB", "index")].meaning and "rdi" in f[("SIB", "base")].meaning
    assert f[("VEX byte 1", "X̄")].bits == "0"  # r8 needs X = 1, stored inverted
    assert "0x40" in f[("disp8", "disp8")].meaning


def test_an_undefined_encoding_is_marked_and_faults_on_the_machine():
    expl = ex(code=bytes.fromhex("c4e27f49c0"))  # TILEZERO with VEX.L=1
    assert fields(expl)[("VEX byte 2", "L")].ok is False
    assert any("VEX.L=1" in v for k, v in expl.facts if k == "undefined")
    text = to_text(expl)
    assert "#UD" in text and "invalid encoding" in text


def test_scalar_encoding_follows_the_opcode_row():
    expl = ex("add rax, 5")
    f = fields(expl)
    assert f[("REX", "W")].bits == "1"
    assert f[("ModRM", "reg")].meaning == "opcode extension /0"
    assert ("imm8", "imm8") in f
    assert any(k == "opcode row" and v.startswith("o64 83 /0 ib") for k, v in expl.facts)
