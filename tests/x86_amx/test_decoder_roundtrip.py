"""Every decoded instruction re-assembles to its own bytes, or says why it cannot (issue 9, items 4 and 12).

The property, over the whole AMX encoding space (every VEX byte, ModRM, SIB and tile
combination of the four AMX opcode bytes) and over the scalar forms (every one- and
two-byte opcode with the prefixes a kernel meets and a spread of ModRM bytes):

* the text isasim prints assembles, with isasim's own assembler, to the very bytes it was
  decoded from; or
* the instruction is marked undefined (it raises #UD) and says which rule the bytes break; or
* the bytes are one of x86's redundant encodings (an ignored VEX.R/X/B bit, the other ModRM
  direction, a longer displacement or immediate or branch offset than needed) and the
  instruction carries a ``noncanonical`` note naming the bytes the text assembles to.

The third case is checked against the oracle: objdump must print the same text for the
decoded bytes and for the bytes the note names, and that text must be isasim's; otherwise
the "redundant encoding" would be a decoding mistake.  Every undefined AMX encoding of a
valid opcode must also be one objdump does not accept as that instruction.

The round trips themselves (marked ``consistency``) hold the decoder to isasim's own assembler; the
objdump tests here and the GNU as tests of the encoders (test_assembler_vs_gnu_as.py, forms/) are the
outside evidence.
"""

from __future__ import annotations

import functools

import pytest

from gnu_binutils import needs_binutils, objdump_decode_many, window_offsets
from isasim.core.errors import DecodeError, IsasimError
from isasim.core.isa import get_isa
from isasim.x86_amx.forms import amx
from isasim.x86_amx.decoder import decode_one, disassemble, listing
from isasim.x86_amx.operands import Reg, Target

ISA = get_isa("x86_amx")
ADDRESS = 0x400000
# Bytes after the instruction under test: a SIB (scale 1, index rsp=none, base rcx) and
# displacement bytes, so every ModRM has what it needs to decode.
TAIL = bytes([0x21, 0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE, 0x11, 0x22])

_ASSEMBLED: dict[tuple[str, int], bytes | str] = {}  # (text, address) -> bytes or error: texts repeat a lot


def reassemble(instructions: list) -> list[bytes | str]:
    """Each instruction's text assembled by isasim at the instruction's address: its bytes, or the error."""
    out = []
    for ins in instructions:
        key = (ins.text, ins.address)
        if key not in _ASSEMBLED:
            try:
                _ASSEMBLED[key] = ISA.assemble(ins.text, base=ins.address).instructions[0].encoding
            except IsasimError as error:
                _ASSEMBLED[key] = f"error: {error}"
        out.append(_ASSEMBLED[key])
    return out


def roundtrip_failures(windows: list[bytes], addresses: list[int] | None = None):
    """Decode every window; return (decoded, failures, noncanonical) for the re-assembly property."""
    decoded, failures, noncanonical = [], [], []
    for n, window in enumerate(windows):
        address = ADDRESS if addresses is None else addresses[n]
        try:
            ins = decode_one(window, 0, address)
        except DecodeError:
            continue
        decoded.append(ins)
        if ins.invalid is not None:
            if not ins.invalid.strip():
                failures.append((ins.encoding.hex(), ins.text, "undefined without a reason"))
            continue
    defined = [ins for ins in decoded if ins.invalid is None]
    for ins, again in zip(defined, reassemble(defined)):
        if again == ins.encoding:
            continue
        note = ins.extra.get("noncanonical")
        if note is None or ins.extra.get("canonical_encoding") != again:
            failures.append((ins.encoding.hex(), ins.text, again.hex() if isinstance(again, bytes) else again))
        else:
            noncanonical.append((ins, again))
    return decoded, failures, noncanonical


# ---- the encoding spaces ------------------------------------------------------------------------------

AMX_OPCODES = sorted(amx.AMX_OPCODE_BYTES)  # (map, opcode byte) of every AMX instruction


@functools.cache
def amx_windows() -> tuple[bytes, ...]:
    """The AMX encoding space, ~390,000 encodings.

    * every VEX byte 2 (W, vvvv, L, pp) with every ModRM byte, R/X/B clear, for each opcode;
    * every R/X/B combination with the canonical W/L/pp of each form, three vvvv values
      (unused, tmm1, tmm8) and every ModRM byte;
    * every SIB byte with each memory ModRM mode, three reg fields and X/B for the memory forms.
    """
    windows = []
    for map_, opcode in AMX_OPCODES:
        byte1 = 0xE0 | map_  # R̄X̄B̄ = 111: no extension bits
        for byte2 in range(256):
            for modrm in range(256):
                windows.append(bytes([0xC4, byte1, byte2, opcode, modrm]) + TAIL)
    for form in amx.FORMS:
        op = form.opcode
        for rxb in range(8):
            byte1 = (rxb << 5) | op.map
            for vvvv_inverted in (0b1111, 0b1110, 0b0111):  # no operand there, tmm1, tmm8
                byte2 = (op.W << 7) | (vvvv_inverted << 3) | (op.L << 2) | op.pp
                for modrm in range(256):
                    windows.append(bytes([0xC4, byte1, byte2, op.opcode, modrm]) + TAIL)
        if not op.modrm.register_form:
            byte2 = (op.W << 7) | (0b1111 << 3) | (op.L << 2) | op.pp
            for xb in range(4):
                byte1 = 0x80 | (xb << 5) | op.map  # R̄ = 1; X̄, B̄ vary
                for mod in range(3):
                    for reg in (0, 1, 7):  # the fixed /0, and tiles tmm1 and tmm7
                        for sib in range(256):
                            modrm = (mod << 6) | (reg << 3) | 0b100
                            windows.append(bytes([0xC4, byte1, byte2, op.opcode, modrm, sib]) + TAIL[1:])
    return tuple(windows)


# no prefix; REX.W, REX.WR, REX.B, plain REX; data16, addr32, rep; data16 with REX.W either side
SCALAR_PREFIXES = (b"", b"\x48", b"\x4c", b"\x41", b"\x40", b"\x66", b"\x67", b"\xf3", b"\x66\x48", b"\x48\x66")


@functools.cache
def scalar_windows() -> tuple[bytes, ...]:
    """Every one- and two-byte opcode after each prefix above, with every 5th ModRM byte (~260,000)."""
    opcodes = [bytes([b]) for b in range(256) if b not in (0x0F, 0xC4, 0xC5)] + [bytes([0x0F, b]) for b in range(256)]
    return tuple(prefix + opcode + bytes([modrm]) + TAIL
                 for prefix in SCALAR_PREFIXES for opcode in opcodes for modrm in range(0, 256, 5))


@functools.cache
def amx_roundtrip():
    return roundtrip_failures(amx_windows())


@functools.cache
def scalar_roundtrip():
    windows = scalar_windows()
    return roundtrip_failures(windows, [ADDRESS] * len(windows))


# ---- the regressions ----------------------------------------------------------------------------------


def test_a_tmul_naming_a_tile_twice_decodes_as_ud():
    # Issue 9 item 4: c4e2695ec0 printed as a valid "tdpbusd tmm0,tmm0,tmm2"; objdump marks it (bad).
    ins = decode_one(bytes.fromhex("c4e2695ec0"), 0, ADDRESS)
    assert ins.invalid is not None and "tdpbusd tmm0,tmm0,tmm2" in ins.invalid
    assert "must differ" in ins.invalid
    for mnemonic in ("tdpbssd", "tdpbsud", "tdpbusd", "tdpbuud", "tdpbf16ps", "tdpfp16ps"):
        (form,) = amx.FORMS.of_mnemonic(mnemonic)
        for tiles in ((1, 1, 2), (1, 2, 1), (2, 1, 1), (3, 3, 3)):
            code = form.encode(tuple(Reg(f"tmm{t}") for t in tiles))
            assert decode_one(code, 0, ADDRESS).invalid, (mnemonic, tiles)


def test_prefixes_the_text_would_hide_are_not_decoded():
    # 66 c3 is retw (a 16-bit return) and 66 e9 a 16-bit jump on AMD; a stray REX or data16 is
    # shown by objdump ("rex.W ret"); isasim printed all of them as the bare instruction.
    for code in ("66c3", "48c3", "4090", "48400524102030", "66488b00", "66e900000000", "660f8400000000", "670524102030"):
        with pytest.raises(DecodeError):
            decode_one(bytes.fromhex(code), 0, ADDRESS)
    # the prefixes that belong to the instruction still decode
    assert decode_one(bytes.fromhex("40b424"), 0, ADDRESS).text == "mov spl,0x24"
    assert decode_one(bytes.fromhex("4d01c8"), 0, ADDRESS).text == "add r8,r9"
    assert decode_one(bytes.fromhex("4903c1"), 0, ADDRESS).text == "add rax,r9"


def test_a_branch_offset_that_looks_like_a_modrm_and_sib_still_decodes():
    # The no-index-SIB check read the rel32 of "0f 85 9c e7 ff ff" (jne, backwards) as ModRM 9c
    # with a SIB: a 500-iteration loop then failed to assemble.  Only memory operands have a ModRM.
    branches = []
    for byte in range(256):
        for code in (bytes([0x0F, 0x85, byte, 0xE7, 0xFF, 0xFF]), bytes([0xE9, byte, 0x24, 0x00, 0x00]),
                     bytes([0x75, byte])):
            branches.append(decode_one(code, 0, ADDRESS + 0x100000))
    assert {ins.mnemonic for ins in branches} == {"jne", "jmp"}
    for ins, again in zip(branches, reassemble(branches)):
        assert again == ins.encoding or ins.extra.get("canonical_encoding") == again, ins.text
    loop = "top:\n" + "\n".join(["mov rbx, QWORD PTR [rcx+rdx*8+0x40]", "tileloadd tmm1, [rsi+rdi*1]",
                                   "dec r9", "jne top"] * 300)
    assert len(ISA.assemble(loop).instructions) == 1200


def test_a_redundant_encoding_says_what_the_text_assembles_to():
    ins = decode_one(bytes.fromhex("c4a2784900"), 0, ADDRESS)  # VEX.X set without an index register
    assert ins.text == "ldtilecfg [rax]" and ins.invalid is None
    assert ins.extra["canonical_encoding"] == bytes.fromhex("c4e2784900")
    assert "VEX.X is ignored" in ins.extra["noncanonical"]
    assert "c4 e2 78 49 00" in ins.extra["noncanonical"]


@pytest.mark.consistency
def test_the_amx_encoding_space_reassembles_or_is_ud():
    windows = amx_windows()
    decoded, failures, noncanonical = amx_roundtrip()
    assert len(windows) > 250_000 and len(decoded) > 250_000
    assert not failures, f"{len(failures)} of {len(decoded)} decoded AMX encodings: {failures[:10]}"
    assert noncanonical  # ignored VEX bits and long displacements exist: the note is exercised


@pytest.mark.consistency
def test_the_scalar_forms_reassemble():
    decoded, failures, noncanonical = scalar_roundtrip()
    assert len(decoded) > 5_000 and noncanonical
    assert not failures, f"{len(failures)} of {len(decoded)} decoded scalar encodings: {failures[:10]}"


def _objdump_agrees(instructions_and_canonical):
    """objdump reads a redundant encoding and the canonical one as the same text, and as isasim's."""
    windows = []
    for ins, canonical in instructions_and_canonical:
        windows += [ins.encoding, canonical]
    texts = objdump_decode_many(windows)
    disagreements = []
    for n, (ins, canonical) in enumerate(instructions_and_canonical):
        mine, theirs = texts[2 * n], texts[2 * n + 1]
        if mine is None or theirs is None or mine[1] != theirs[1] or mine[0] != len(ins.encoding):
            disagreements.append((ins.encoding.hex(), ins.text, mine, canonical.hex(), theirs))
    return disagreements


@needs_binutils
def test_objdump_reads_each_redundant_amx_encoding_as_the_canonical_one():
    _decoded, _failures, noncanonical = amx_roundtrip()
    # one of each distinct text is enough for objdump (AMX has no branches: the address does not matter)
    by_text = {}
    for ins, canonical in noncanonical:
        by_text.setdefault((ins.text, ins.extra["noncanonical"].split(";")[0]), (ins, canonical))
    sample = list(by_text.values())
    disagreements = _objdump_agrees(sample)
    assert not disagreements, f"{len(disagreements)} of {len(sample)}: {disagreements[:10]}"
    # and isasim's text is objdump's
    texts = objdump_decode_many([ins.encoding for ins, _ in sample])
    assert [t[1] for t in texts] == [ins.text for ins, _ in sample]


@needs_binutils
def test_objdump_reads_each_redundant_scalar_encoding_as_the_canonical_one():
    _decoded, _failures, noncanonical = scalar_roundtrip()
    disagreements = []
    for start in range(0, len(noncanonical), 4000):
        batch = noncanonical[start:start + 4000]
        # both copies of a pair must sit at the same address for a branch: re-decode at the pair's offsets
        windows_of_batch = [w for ins, canonical in batch for w in (ins.encoding, canonical)]
        offsets_of_batch = window_offsets(windows_of_batch)
        texts = objdump_decode_many(windows_of_batch)
        for n, (ins, canonical) in enumerate(batch):
            mine = decode_one(ins.encoding, 0, offsets_of_batch[2 * n])
            theirs = decode_one(canonical, 0, offsets_of_batch[2 * n + 1])
            # objdump's text of each copy must be isasim's of the same copy, length included
            for ours, got in ((mine, texts[2 * n]), (theirs, texts[2 * n + 1])):
                if got != (len(ours.encoding), ours.text):
                    disagreements.append((ours.encoding.hex(), ours.text, got))
            # the same instruction: the same text (a branch's, at its own address, names its own target)
            if not any(isinstance(o, Target) for o in mine.operands) and mine.text != theirs.text:
                disagreements.append((mine.encoding.hex(), mine.text, theirs.encoding.hex(), theirs.text))
    assert not disagreements, f"{len(disagreements)} of {len(noncanonical)}: {disagreements[:10]}"


@needs_binutils
def test_undefined_amx_encodings_are_bad_for_objdump_too():
    # Where isasim says #UD, objdump must not decode the same bytes as a valid instance of
    # the instruction (it prints "(bad)" somewhere in the text, or decodes other bytes).
    windows = amx_windows()[::7]
    undefined = []
    for window in windows:
        try:
            ins = decode_one(window, 0, ADDRESS)
        except DecodeError:
            continue
        if ins.invalid:
            undefined.append(ins)
    texts = objdump_decode_many([ins.encoding for ins in undefined])
    # objdump does not check the fixed ModRM.reg (/0) of LDTILECFG, STTILECFG and TILEZERO's
    # r/m; those are the SDM's rules alone (and the #UD every other rule gives must agree).
    accepted = [(ins.encoding.hex(), ins.invalid, got) for ins, got in zip(undefined, texts)
                if got is not None and got[0] == len(ins.encoding) and "(bad)" not in got[1]
                and not all(rule.startswith("ModRM.") for rule in ins.invalid.split("; "))]
    assert len(undefined) > 10_000
    assert not accepted, f"{len(accepted)} of {len(undefined)}: {accepted[:10]}"


# ---- isasim disasm ------------------------------------------------------------------------------------


def test_listing_goes_on_past_undecodable_bytes():
    # Issue 9 item 12: disasm stopped at the first byte it could not decode.
    code = bytes.fromhex("90" "0f05" "06" "c3" "c4e2695ec0" "c4e2")
    rows = list(listing(code, ADDRESS))
    assert [(hex(a), e.hex(), t, d) for a, e, t, _note, d in rows] == [
        ("0x400000", "90", "nop", True),
        ("0x400001", "0f05", ".byte 0x0f,0x05", False),  # syscall: valid x86, outside isasim's subset
        ("0x400003", "06", "(bad)", False),  # no x86-64 instruction at all
        ("0x400004", "c3", "ret", True),
        ("0x400005", "c4e2695ec0", "(bad)", True),  # decoded, #UD
        ("0x40000a", "c4", "(bad)", False),
        ("0x40000b", "e2", ".byte 0xe2", False),  # the bytes end inside an instruction
    ]
    assert "must differ" in rows[4][3]
    with pytest.raises(DecodeError):  # the Program API still refuses what it cannot decode
        disassemble(code, ADDRESS)


def _cli(*args):
    """Run ``isasim ARGS`` in-process: (exit status, stdout, stderr)."""
    import contextlib
    import io

    from isasim import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(list(args))
        except SystemExit as done:
            status = done.code
    return status, out.getvalue(), err.getvalue()


def test_disasm_prints_the_tmul_ud_note():
    status, out, _err = _cli("disasm", "c4e2695ec0")
    assert status == 0
    assert "(bad)" in out and "#UD" in out and "must differ" in out


def test_disasm_lists_everything_and_exits_2_when_bytes_did_not_decode():
    status, out, err = _cli("disasm", "90", "0f05", "c3")
    assert status == 2
    assert [line.split()[0] for line in out.splitlines()] == ["0x400000:", "0x400001:", "0x400003:"]
    assert ".byte 0x0f,0x05" in out and "ret" in out
    assert len(err.strip().splitlines()) == 1 and "cannot decode 1" in err


@pytest.mark.parametrize("base, words", [
    ("-1", "-0x1 is not a 64-bit address"),
    ("0x10000000000000000", "0x10000000000000000 is not a 64-bit address"),
    ("0xffffffffffffffff", "run past the top"),  # two bytes: the second would sit at 2^64
])
def test_disasm_rejects_a_base_that_is_no_64_bit_address(base, words):
    status, out, err = _cli("disasm", "--base", base, "9090")
    assert status == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in err


def test_disasm_at_the_top_of_the_address_space():
    status, out, _err = _cli("disasm", "--base", "0xfffffffffffffffe", "9090")
    assert status == 0
    assert out.splitlines()[-1].startswith("0xffffffffffffffff:")
