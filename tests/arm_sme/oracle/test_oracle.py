"""The SME2 oracles themselves: clang's encodings and QEMU's execution through isasim.arm_sme.oracle.

These check the oracle plumbing (tool discovery, the harness's state round trip, faults, vector
groups landing on the rows the ASL names), not isasim's semantics: where an instruction changes
ZA, only which rows changed is asserted, since a value computed here by hand from the same
reading of the Arm ARM would be no evidence.
"""

from __future__ import annotations

import random

import pytest

from isasim.arm_sme.oracle import (MEMORY_BASE, AsmError, Fault, OracleFault, encode, encode_many, run,
                                   run_many)
from isasim.arm_sme.oracle.tools import qemu_problem_at

# The examples in the facts file, agreed between zig clang 22 and llvm-mc 19.
KNOWN_ENCODINGS = {
    "udot za.s[w8, 0, vgx4], {z0.h-z3.h}, z4.h": 0xC1741418,
    "udot za.s[w9, 7, vgx2], {z2.b-z3.b}, z15.b": 0xC12F3457,
    "smstart": 0xD503477F,
    "zero {za}": 0xC00800FF,
    "umopa za0.s, p0/m, p1/m, z0.b, z1.b": 0xA1A12000,
}


@pytest.mark.needs_clang
def test_encode_gives_the_known_words():
    assert {line: encode(line) for line in KNOWN_ENCODINGS} == KNOWN_ENCODINGS


@pytest.mark.needs_clang
def test_encode_many_keeps_each_word_with_its_line_when_others_are_rejected():
    lines = list(KNOWN_ENCODINGS)
    lines[1:1] = ["udot za.s[w12, 0, vgx4], {z0.h-z3.h}, z4.h",  # Wv must be w8-w11
                  "udot za.s[w8, 8, vgx4], {z0.h-z3.h}, z4.h"]   # the offset is at most 7
    results = encode_many(lines)
    assert all(isinstance(r, AsmError) for r in results[1:3])
    assert "w8, w11" in str(results[1])
    assert [r for r in results if not isinstance(r, AsmError)] == list(KNOWN_ENCODINGS.values())
    with pytest.raises(AsmError):
        encode("sudot za.s[w8, 0, vgx2], {z0.b-z1.b}, {z2.b-z3.b}")  # there is no multi-vector SUDOT


def _random_state(rng: random.Random, svl_bits: int) -> dict:
    svlb = svl_bits // 8
    return {"x": [rng.getrandbits(64) for _ in range(31)], "sp": rng.getrandbits(60) << 4,
            "nzcv": rng.getrandbits(4) << 28,
            "z": [rng.randbytes(svlb) for _ in range(32)],
            "p": [rng.randbytes(svlb // 8) for _ in range(16)],
            "za": rng.randbytes(svlb * svlb),
            "zt0": rng.randbytes(64),
            "memory": rng.randbytes(256)}


def _rows(za: bytes, svl_bits: int) -> list[bytes]:
    svlb = svl_bits // 8
    return [za[i * svlb:(i + 1) * svlb] for i in range(svlb)]


@pytest.mark.needs_clang
@pytest.mark.needs_qemu
@pytest.mark.parametrize("svl", [128, 2048])
def test_a_snippet_that_does_nothing_gives_back_the_whole_state(svl):
    state = _random_state(random.Random(svl), svl)
    after = run("nop", state, svl)
    assert after.pop("svcr") == 3  # streaming mode and ZA on, as the harness entered them
    assert after == state | {"memory_base": MEMORY_BASE}


@pytest.mark.needs_clang
@pytest.mark.needs_qemu
@pytest.mark.parametrize("svl", [128, 256, 512])
def test_zero_za_clears_a_non_zero_za(svl):
    state = _random_state(random.Random(1), svl) | {"za": b"\xa5" * (svl // 8) ** 2}
    after = run("zero {za}", state, svl)
    assert after["za"] == bytes((svl // 8) ** 2)
    assert after["z"] == state["z"] and after["x"] == state["x"]


@pytest.mark.needs_clang
@pytest.mark.needs_qemu
@pytest.mark.parametrize("svl", [128, 256, 512])
def test_udot_vgx4_changes_exactly_the_rows_of_its_vector_group(svl):
    # ASL: vstride = (SVL/8) / 4 rows; vec = (W8 + offs) MOD vstride; rows vec + r * vstride.
    # Only the low 32 bits of X8 count, so junk in its upper half must not move the group.
    rng = random.Random(svl)
    svlb = svl // 8
    vstride = svlb // 4
    snippet = "udot za.s[w8, 3, vgx4], {z0.h-z3.h}, z4.h"
    cases, expected = [], []
    for w8 in (0, 1, vstride - 1, vstride, 0x7FFFFFFF, 0xFFFFFFFF):
        state = _random_state(rng, svl)
        state["x"][8] = (rng.getrandbits(32) << 32) | w8
        state["z"][:5] = [b"\x01" * svlb] * 5  # every product 0x0101 * 0x0101: no row can sum to zero
        cases.append((snippet, state))
        vec = (w8 + 3) % vstride
        expected.append({vec + r * vstride for r in range(4)})
    for (_, before), after, rows in zip(cases, run_many(cases, svl), expected):
        changed = {i for i, (old, new) in enumerate(zip(_rows(before["za"], svl), _rows(after["za"], svl)))
                   if old != new}
        assert changed == rows


@pytest.mark.needs_clang
@pytest.mark.needs_qemu
def test_snippets_see_memory_at_its_base_and_faults_name_the_instruction():
    memory = bytes(range(64))
    load_store = "ldr x5, [x0]\nadd x5, x5, #1\nstr x5, [x0, #8]"
    undefined = "mov x1, #1\n.inst 0x00000000\nmov x2, #2"  # UDF #0 is permanently UNDEFINED
    unmapped = "ldr x3, [x4]"
    base = 0x20000000
    results = run_many([
        (load_store, {"x": [base], "memory": memory, "memory_base": base}),
        (undefined, {}),
        (unmapped, {"x": [0] * 4 + [0x8]}),
        (load_store, {"x": [MEMORY_BASE], "memory": memory}),  # the run goes on after faults
    ], 128)
    assert results[0]["x"][5] == int.from_bytes(memory[:8], "little") + 1
    assert results[0]["memory"][8:16] == results[0]["x"][5].to_bytes(8, "little")
    assert results[0]["memory"][16:] == memory[16:]
    assert results[1] == Fault("SIGILL", 1, results[1].address, results[1].pc)
    assert isinstance(results[2], Fault) and (results[2].signal, results[2].index, results[2].address) == (
        "SIGSEGV", 0, 0x8)
    assert results[3]["memory"][8:16] == results[3]["x"][5].to_bytes(8, "little")
    with pytest.raises(OracleFault, match="SIGILL at instruction 1"):
        run(undefined, {}, 256)


@pytest.mark.needs_clang
def test_a_snippet_that_does_not_assemble_is_named_with_its_line():
    from isasim.arm_sme.oracle import OracleError, build

    with pytest.raises(OracleError, match=r"snippet 0 line 2: .*w8, w11"):
        build(["nop\nudot za.s[w12, 0, vgx4], {z0.h-z3.h}, z4.h"])


@pytest.mark.needs_clang
@pytest.mark.needs_qemu
def test_a_snippet_owns_every_register_and_ends_at_ret_or_its_last_line():
    ends_at_ret = "mov x19, #19\nmov x29, #29\nmov x18, #18\nret\nmov x19, #0"
    falls_off = "mov x30, #30\nmov x0, #1\nsub sp, sp, #32"
    first, second = run_many([(ends_at_ret, {"x": [0] * 30 + [77]}), (falls_off, {"sp": 0x1000})], 256)
    assert (first["x"][18], first["x"][19], first["x"][29], first["x"][30]) == (18, 19, 29, 77)
    assert (second["x"][0], second["x"][30], second["sp"]) == (1, 30, 0x1000 - 32)


@pytest.mark.needs_clang
@pytest.mark.needs_qemu
def test_the_starting_modes_follow_svcr_and_smstart_from_off_zeroes_what_the_architecture_says():
    svl = 256
    state = _random_state(random.Random(7), svl)
    from_off = run("smstart", state | {"svcr": 0}, svl)  # entering SM zeroes Z and P; entering ZA zeroes ZA
    assert from_off["svcr"] == 3
    assert set(b"".join(from_off["z"] + from_off["p"])) == {0} and set(from_off["za"]) == {0}
    redundant = run("smstart", state, svl)  # already on: nothing changes
    assert (redundant["z"], redundant["za"]) == (state["z"], state["za"])
    assert run("smstop za", state, svl)["svcr"] == 1


def _fake_qemu(tmp_path, version: str, status: int) -> str:
    script = tmp_path / "qemu-aarch64"
    script.write_text(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo "qemu-aarch64 version {version}"; exit 0; }}\n'
                      f"exit {status}\n")
    script.chmod(0o755)
    return str(script)


def test_qemu_probe_refuses_10_0_and_one_that_cannot_run_sme2(tmp_path):
    assert "is 10.0; SME2 needs qemu-aarch64 >= 10.1" in qemu_problem_at(_fake_qemu(tmp_path, "10.0.13", 0))
    assert "did not run an SME2 UDOT (exit status 132" in qemu_problem_at(_fake_qemu(tmp_path, "11.1.3", 132))


@pytest.mark.needs_clang
@pytest.mark.needs_qemu
def test_regions_map_at_their_addresses_and_a_read_only_one_refuses_writes():
    table, out = 0x30001000, 0x30008000
    state = {"x": [table, out], "regions": [(table, bytes(range(16)), False), (out, bytes(16), True)]}
    after = run("ldr x2, [x0, #8]\nstr x2, [x1]", state, 128)
    assert after["regions"] == [(table, bytes(range(16)), False), (out, bytes(range(8, 16)) + bytes(8), True)]
    (fault,) = run_many([("str x0, [x0]", state)], 128)
    assert (fault.signal, fault.index, fault.address) == ("SIGSEGV", 0, table)


@pytest.mark.needs_clang
@pytest.mark.needs_qemu
def test_the_qemu_backend_reports_a_fault_with_its_index_and_the_state_before_it():
    from isasim.arm_sme.oracle.backend import QemuBackend
    from isasim.core.isa import get_isa
    from isasim.core.trace import Init

    isa = get_isa("arm_sme")
    program = isa.assemble("mov x0, #5\nzero {za}\nmov x1, #1\n")  # a trace starts with ZA off
    init = Init(regs={"x1": 9}, memory=[(0x20000, bytes(range(16)), True)])
    outcome = QemuBackend().run("arm_sme", isa.configure({"svl": 256}), program, init)
    assert (outcome.fault.kind, outcome.fault.index) == ("UNDEFINED", 1)
    assert (outcome.observed["regs"]["x0"], outcome.observed["regs"]["x1"]) == (5, 9)
    assert outcome.read_memory(0x20000, 16) == bytes(range(16))
