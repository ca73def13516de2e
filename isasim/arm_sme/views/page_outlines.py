"""The trace page's outlines for arm_sme (``Isa.page_outlines``): the bytes of ZA, ZT0 and the Z and P registers
an instruction's operands address, worked out from the state before the step as the Operation selects them.

Everything comes from the form's operand declarations and its Operation text, not from a list of mnemonics:

- where: each ZA operand kind names its vectors as the Arm ARM's pseudocode does.  A vector group
  ``ZA.S[Wv, offs, VGx<n>]`` is vec = (UInt(Wv<31:0>) + offs) MOD vstride, vstride = SVL/8 DIV n, then vec + vstride
  ...; a vector select ``o:o+k-1`` names k consecutive vectors from vec - (vec MOD k) in each member
  (za_tiles.vector_group_rows and the multiply-adds' "ways"); a tile is its rows (za_tiles.tile_rows); a slice
  is one row of a tile (horizontal) or element ``index`` of each row (vertical), index = (UInt(Ws<31:0>) +
  offs) MOD SVL/esize; ``ZA[Wv, offs]`` is vector (UInt(Wv<31:0>) + offs) MOD SVL/8; ZERO's mask bit t is the
  vectors r with r MOD 8 = t.  Row r of ZA is bytes r*SVL/8 .. (r+1)*SVL/8 of the "za" array.
- role: a ZA or ZT0 operand is read where the Operation reads ZA/ZT0 (``... = ZAvector[...]``), written where it
  assigns one (``ZAtile[...] = ...``).  A Z or P operand's role is its encoding field's name in the Arm ARM:
  Zd/Pd written (read too where the governing predicate merges, /M); Zda, Zdn, Pdn, Pdm read and written;
  Zt/Pt (the transfer registers) written by a load, read by a store; Zn, Zm, Za, Pg ... read.
"""

from __future__ import annotations

import re

from ...core.isa import PageOutline
from ..semantics.za_tiles import ELEMENT_BYTES, tile_rows, vector_group_rows
from ..state import ZT0_BYTES

ZA_KINDS = ("za_group", "za_tile", "za_slice", "za_vector", "tile_list")
REGISTER_KINDS = ("z", "z_list", "z_indexed", "p", "p_governing", "p_indexed")
# the AdvSIMD and floating-point registers: V<n> is the low 128 bits of Z<n> (B/H/S/D/Q<n> its low bytes)
V_KINDS = ("v", "v_list", "v_element", "fp", "q")
V_BYTES = {"b": 1, "h": 2, "s": 4, "d": 8, "q": 16, "v": 16}

# what the Operation text (form.doc) reads and writes of ZA and ZT0
_ZA_READ = re.compile(r"=\s*ZA\w*\s*\[")
_ZA_WRITTEN = re.compile(r"\bZA\w*\s*\[[^\]]*\]\s*=(?!=)")
_ZT0_READ = re.compile(r"=\s*ZT0\b")
_ZT0_WRITTEN = re.compile(r"\bZT0\b(\s*\[[^\]]*\])?\s*=(?!=)")

_REGISTER = re.compile(r"\b(pn|p|z)(\d+)\b")
_V_REGISTER = re.compile(r"\b([bhsdqv])(\d+)\b")


def page_outlines(instruction, before) -> list[PageOutline]:
    """The outlines of ``instruction``'s ZA, ZT0, Z and P operands, from ``before`` (a core Machine, not changed)."""
    form = getattr(instruction, "form", None)
    fields = (getattr(instruction, "extra", None) or {}).get("fields")
    if form is None or fields is None or instruction.invalid is not None:
        return []
    state = before.state
    merging = any(getattr(operand, "kind", "") == "p_governing" and operand.text(fields).endswith("/m")
                  for operand in form.operands)
    outlines = []
    for index, (operand, value) in enumerate(zip(form.operands, instruction.operands)):
        kind = getattr(operand, "kind", "")
        if kind in ZA_KINDS:
            spans, where = _za_spans(operand, value, state)
            role = _array_role(form.doc, _ZA_READ, _ZA_WRITTEN, index)
            outlines.append(PageOutline("za", spans, f"{_arm_text(operand.text(fields))}{where}", role))
        elif kind == "zt0":
            role = _array_role(form.doc, _ZT0_READ, _ZT0_WRITTEN, index)
            if isinstance(value, int):  # MOVT's zt0[offs]: the 64 bits at byte offs
                outlines.append(PageOutline("zt0", ((value, value + 8),), f"ZT0[{value * 8} +: 64]: bytes "
                                            f"{value}-{value + 7}", role))
            else:
                outlines.append(PageOutline("zt0", ((0, ZT0_BYTES),), "ZT0: all 64 bytes", role))
        elif kind in REGISTER_KINDS or kind.startswith("mem"):
            role = "read" if kind.startswith("mem") else _register_role(form, index, operand, merging)
            outlines += _register_outlines(operand.text(fields), state, role)
        elif kind in V_KINDS:
            outlines += _v_register_outlines(form, index, operand.text(fields), state)
    return _merged(outlines)


# ---- ZA ------------------------------------------------------------------------------------------------------

def _w(state, n: int) -> int:
    """Wn: the low 32 bits of Xn, as the vector and slice selects read them."""
    return state.x[n] & 0xFFFFFFFF


def _vectors(rows, svlb: int) -> tuple[tuple[int, int], ...]:
    return tuple((int(r) * svlb, (int(r) + 1) * svlb) for r in rows)


def _za_spans(operand, value, state) -> tuple[tuple[tuple[int, int], ...], str]:
    """The [start, end) byte ranges of ZA the operand addresses, and what they are, in words."""
    svlb = state.svlb
    kind = operand.kind
    if kind == "za_group":
        v, offset = value
        ways = getattr(operand, "ways", 1)
        first = vector_group_rows(svlb, _w(state, v), offset, operand.nreg)
        rows = [vec - vec % ways + i for vec in first for i in range(ways)]
        return _vectors(rows, svlb), f" (w{v} = {_w(state, v)}): {_vector_words(rows)}"
    if kind == "za_tile":
        esize = 8 * ELEMENT_BYTES[operand.suffix]
        rows = [int(r) for r in tile_rows(value, esize, svlb)]
        return _vectors(rows, svlb), f": {_vector_words(rows)}"
    if kind == "za_slice":
        tile, vertical, s, offset = value
        eb = ELEMENT_BYTES[operand.suffix]
        dim = svlb // eb
        nreg = getattr(operand, "nreg", 1)
        base = (_w(state, s) + offset) % dim
        base -= base % nreg  # a range of nreg slices starts at a multiple of nreg
        indices = [(base + r) % dim for r in range(nreg)]
        rows = [int(r) for r in tile_rows(tile, 8 * eb, svlb)]
        which = f"slice{'s' * (nreg > 1)} {_list(indices)}"
        if not vertical:
            chosen = [rows[i] for i in indices]
            return _vectors(chosen, svlb), f" (w{s} = {_w(state, s)}): horizontal {which} = {_vector_words(chosen)}"
        spans = tuple((row * svlb + i * eb, row * svlb + (i + 1) * eb) for i in indices for row in rows)
        columns = ", ".join(f"{i * eb}-{(i + 1) * eb - 1}" for i in indices)
        return spans, (f" (w{s} = {_w(state, s)}): vertical {which} = bytes {columns} of ZA vectors {_list(rows)}")
    if kind == "za_vector":
        v, offset = value
        vec = (_w(state, v) + offset) % svlb
        return _vectors([vec], svlb), f" (w{v} = {_w(state, v)}): ZA vector {vec}"
    # tile_list: ZERO's mask, one bit per 64-bit tile ZA0.D-ZA7.D (vector r is in ZA(r MOD 8).D)
    rows = [r for r in range(svlb) if value >> (r % 8) & 1]
    return _vectors(rows, svlb), f": {_vector_words(rows)}" if rows else ": no ZA vector"


def _vector_words(rows: list[int]) -> str:
    return f"ZA vector{'s' * (len(rows) > 1)} {_list(rows)}"


def _list(numbers: list[int]) -> str:
    """Numbers as a reader takes them in: all of a few, else an evenly spaced run as its ends and step."""
    if len(numbers) <= 8:
        return ", ".join(map(str, numbers))
    step = numbers[1] - numbers[0]
    if all(b - a == step for a, b in zip(numbers, numbers[1:])):
        return f"{numbers[0]}, {numbers[1]}, ..., {numbers[-1]} (every {step})" if step > 1 else \
            f"{numbers[0]}-{numbers[-1]}"
    return ", ".join(map(str, numbers[:6])) + f", ... ({len(numbers)} in all)"


def _arm_text(text: str) -> str:
    """An operand as the Arm ARM writes it: ZA1H.S[w12, 0], ZA.S[w8, 0, VGx4] (llvm prints them in lower case)."""
    text = re.sub(r"\bza\d*[hv]?(\.[bhsdq])?", lambda m: m.group(0).upper(), text)
    return text.replace("vgx", "VGx")


def _array_role(doc: str, read: re.Pattern, written: re.Pattern, index: int) -> str:
    reads, writes = bool(read.search(doc or "")), bool(written.search(doc or ""))
    if not (reads or writes):  # no Operation text: the first operand is the destination, as A64 writes them
        reads, writes = index > 0, index == 0
    return "read and written" if reads and writes else "written" if writes else "read"


# ---- Z and P registers -----------------------------------------------------------------------------------------

def _register_role(form, index: int, operand, merging: bool) -> str:
    """The role the Arm ARM's field name gives a Z or P operand (see the module docstring)."""
    name = getattr(operand, "field", None) or ("Zt" if index == 0 else "")  # a strided list: the transfer list
    if name in ("Zt", "Pt"):
        return "read" if form.mnemonic.startswith("st") else "written"
    m = re.fullmatch(r"(?:Z|P|PN)d(\w*)", name)
    if m is None:
        return "read"
    return "read and written" if m.group(1) or merging else "written"


def _register_outlines(text: str, state, role: str) -> list[PageOutline]:
    """One outline per Z or P register the operand's text names ({ z0.s - z3.s } is four; pn8 is p8)."""
    names = _REGISTER.findall(text)
    numbers = [(kind, int(n)) for kind, n in names]
    if len(numbers) == 2 and re.search(r"z\d+\.\w\s*-\s*z\d+", text):  # a range: every register from first to last
        (_, a), (_, b) = numbers
        numbers = [("z", (a + i) % 32) for i in range((b - a) % 32 + 1)]
    outlines = []
    for kind, n in numbers:
        location = f"{'z' if kind == 'z' else 'p'}{n}"
        size = state.svlb if kind == "z" else state.svlb // 8
        own = f"{kind}{n}"
        label = text if text == own or len(numbers) == 1 and text.startswith(own) else f"{text}: {location}"
        outlines.append(PageOutline(location, ((0, size),), label, role))
    return outlines


def _v_register_outlines(form, index: int, text: str, state) -> list[PageOutline]:
    """A V, Q, D, S, H or B register as bytes of its Z register: a destination (the first operand, a load's
    transfer register) is written as the whole Z register, since writing V<n> zeroes the bits of Z<n> above
    its own; a source is read as its own low bytes.  A store's first operand is a source."""
    numbers = [(letter, int(n)) for letter, n in _V_REGISTER.findall(text)]
    if len(numbers) == 2 and re.search(r"v\d+\.\w+\s*-\s*v\d+", text):
        (letter, a), (_, b) = numbers
        numbers = [(letter, (a + i) % 32) for i in range((b - a) % 32 + 1)]
    written = index == 0 and not form.mnemonic.startswith("st") or \
        index == 1 and form.mnemonic.startswith("ldp")  # LDP's second transfer register
    outlines = []
    for letter, n in numbers:
        size = state.svlb if written else V_BYTES[letter]
        label = text if len(numbers) == 1 else f"{text}: {letter}{n}"
        outlines.append(PageOutline(f"z{n}", ((0, size),), f"{label} (Z{n}'s low {V_BYTES[letter]} bytes)" if
                                    not written else f"{label} (Z{n}: the bytes above V{n} are zeroed)",
                                    "written" if written else "read"))
    return outlines


def _merged(outlines: list[PageOutline]) -> list[PageOutline]:
    """One outline per location and bytes: a register both read and written (Zdn written twice, a store's
    source also a governing operand) is one outline whose role says both."""
    merged: dict[tuple, PageOutline] = {}
    for outline in outlines:
        key = (outline.location, outline.spans)
        if key not in merged:
            merged[key] = outline
            continue
        first = merged[key]
        roles = {first.role, outline.role}
        role = first.role if len(roles) == 1 else "read and written"
        label = first.label if outline.label == first.label else f"{first.label}; {outline.label}"
        merged[key] = PageOutline(first.location, first.spans, label, role)
    return list(merged.values())
