"""arm_sme's debugger view (isasim/arm_sme/debug_target.py), checked against gdb 18 itself and a real state.

gdb reads the description isasim serves (``set tdesc filename``) and says what it made of it: ``maint print
remote-registers`` lists every raw register with its size, the number the remote protocol uses for it and
its offset in a ``g`` packet, and every pseudo-register gdb derives (v0, d0, the ZA tiles and tile slices).
The expected sizes and names below come from the architecture at each SVL (a Z register is SVL bits, ZA is
SVL/8 vectors of SVL/8 bytes, a 32-bit tile ZAn.S has SVL/32 slices ...), not from the module under test.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import gdb_client
from isasim.core.journal import Location
from isasim.core.machine import Machine
from isasim.arm_sme.debug_target import debug_target
from isasim.core.debug_target import SIGBUS, SIGILL, SIGSEGV

def gdb_or_skip() -> str:
    return gdb_client.gdb_or_skip("wheel", "aarch64")


def run_gdb(directory, *commands: str) -> subprocess.CompletedProcess:
    arguments = [gdb_or_skip(), "-nx", "-batch", "-ex", "set tdesc filename target.xml"]
    for command in commands:
        arguments += ["-ex", command]
    return subprocess.run(arguments, cwd=directory, capture_output=True, text=True, timeout=120)


def write_documents(target, directory) -> None:
    for name, text in target.documents().items():
        (directory / name).write_text(text)


def register_table(output: str) -> dict[str, dict]:
    """``maint print remote-registers``: name -> its size, and (raw registers) remote number and g offset."""
    table = {}
    for line in output.splitlines():
        cells = line.split()
        if len(cells) >= 6 and cells[1].isdigit() and cells[4].isdigit():
            remote = cells[6:8] if len(cells) >= 8 and cells[6].isdigit() else None
            table[cells[0]] = {"size": int(cells[4]),
                               "remote": int(remote[0]) if remote else None,
                               "offset": int(remote[1]) if remote else None}
    return table


@pytest.mark.parametrize("svl", [128, 512, 2048])
def test_gdb_reads_the_description_as_aarch64_with_sve_sme_and_sme2(tmp_path, svl):
    target = debug_target({"svl": svl})
    write_documents(target, tmp_path)
    svlb = svl // 8
    last_d_slice = svlb // 8 - 1  # ZAn.D has SVL/64 slices
    ptypes = {"za": "$za", "zt0": "$zt0", "svcr": "$svcr", "z0": "$z0", "z0.q.u": "$z0.q.u",
              "z0.h.f": "$z0.h.f", "z0.b.s": "$z0.b.s", "p0": "$p0", "v0": "$v0", "cpsr": "$cpsr",
              "fpcr": "$fpcr", "za0s": "$za0s", "last d slice": f"$za7vd{last_d_slice}",
              "past the last": f"$za7vd{last_d_slice + 1}"}
    ptype_commands = [command for label, expression in ptypes.items()
                      for command in (f"echo @@{label}\\n", f"ptype {expression}")]
    result = run_gdb(tmp_path, "maint print remote-registers", "show architecture", "show osabi", *ptype_commands)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower() and "error" not in output.lower(), output
    assert 'currently "aarch64"' in output and 'currently "GNU/Linux"' in output

    table = register_table(result.stdout)
    # the raw registers: gdb numbers them for the remote protocol in the order served, and lays out a g packet
    # of their sizes one after the other
    expected = {**{f"x{n}": 8 for n in range(31)}, "sp": 8, "pc": 8, "cpsr": 4,
                **{f"z{n}": svlb for n in range(32)}, "fpsr": 4, "fpcr": 4,
                **{f"p{n}": svlb // 8 for n in range(16)}, "ffr": svlb // 8, "vg": 8,
                "tpidr": 8, "tpidr2": 8, "svg": 8, "svcr": 8, "za": svlb * svlb, "zt0": 64}
    offset = 0
    for number, register in enumerate(target.registers):
        assert table[register.name]["size"] == expected[register.name] == register.bitsize // 8, register.name
        assert table[register.name]["remote"] == number, register.name
        assert table[register.name]["offset"] == offset, register.name
        offset += register.bitsize // 8
    assert sorted(expected) == sorted(register.name for register in target.registers)

    # gdb derived the FP/SIMD views of the Z registers (sve without fpu) ...
    for name, size in (("v0", 16), ("v31", 16), ("q0", 16), ("d0", 8), ("s31", 4), ("h0", 2), ("b0", 1)):
        assert table[name]["size"] == size, name
    # ... and SME's tiles of ZA: ZA0.B, ZA0-1.H, ZA0-3.S, ZA0-7.D, ZA0-15.Q, each SVL/8 rows of its elements
    for letter, element_bytes in (("b", 1), ("h", 2), ("s", 4), ("d", 8), ("q", 16)):
        for tile in range(element_bytes):
            assert table[f"za{tile}{letter}"]["size"] == svlb * svlb // element_bytes, f"za{tile}{letter}"
            slices = svlb // element_bytes
            for direction in "hv":
                for index in (0, slices - 1):
                    assert table[f"za{tile}{direction}{letter}{index}"]["size"] == svlb
                assert f"za{tile}{direction}{letter}{slices}" not in table
        assert f"za{element_bytes}{letter}" not in table
    assert "za0hs0" in table

    types = dict(block.split("\n", 1) for block in result.stdout.split("@@")[1:])  # label -> gdb's ptype
    assert types["za"].startswith(f"type = uint8_t __attribute__ ((vector_size({svlb}))) "
                                  f"__attribute__ ((vector_size({svlb})))")
    assert types["zt0"].startswith("type = uint8_t __attribute__ ((vector_size(64)))")
    assert "bool SM @0;" in types["svcr"] and "bool ZA @1;" in types["svcr"]
    for field in ("union svevnq q;", "union svevnd d;", "union svevns s;", "union svevnh h;", "union svevnb b;"):
        assert field in types["z0"]
    assert types["z0.q.u"].startswith(f"type = uint128_t __attribute__ ((vector_size({svlb // 16})))")
    assert types["z0.h.f"].startswith(f"type = builtin_type_ieee_half __attribute__ ((vector_size({svlb // 2})))")
    assert types["z0.b.s"].startswith(f"type = int8_t __attribute__ ((vector_size({svlb})))")
    assert types["p0"].startswith(f"type = uint8_t __attribute__ ((vector_size({svlb // 8})))")
    assert "union __gdb_builtin_type_vnd d;" in types["v0"]  # gdb's own V register type: a pseudo-register
    assert "bool N @31;" in types["cpsr"] and "bool V @28;" in types["cpsr"]
    assert "uint32_t RMode @22-23;" in types["fpcr"] and "bool DN @25;" in types["fpcr"]
    assert types["za0s"].startswith(f"type = uint32_t __attribute__ ((vector_size({svlb // 4}))) "
                                    f"__attribute__ ((vector_size({svlb // 4})))")
    assert types["last d slice"].startswith(f"type = uint64_t __attribute__ ((vector_size({svlb // 8})))")
    assert types["past the last"].startswith("type = void")


def test_the_fault_kinds_reach_gdb_as_linux_signals():
    target = debug_target({"svl": 512})
    assert target.architecture == "aarch64" and target.osabi == "GNU/Linux"
    assert target.pc_register == "pc" and target.code_registers == ("x30",)
    assert target.signal("UNDEFINED") == SIGILL
    assert target.signal("TRANSLATION") == SIGSEGV
    assert target.signal("ALIGNMENT") == SIGBUS
    assert target.signal("abort") == 6  # SIGABRT: C's abort() and the SME ABI routines' aborts


def registers_of(machine) -> dict:
    return {register.name: register for register in debug_target(machine.config).registers}


def test_registers_read_the_state_and_writes_are_journalled():
    machine = Machine("arm_sme", {"svl": 512})
    state, journal = machine.state, machine.journal
    svlb = 64
    rng = np.random.default_rng(30)
    z1 = rng.integers(0, 256, svlb, dtype=np.uint8)
    p2 = rng.integers(0, 256, svlb // 8, dtype=np.uint8)
    row5 = rng.integers(0, 256, svlb, dtype=np.uint8)
    table = rng.integers(0, 256, 64, dtype=np.uint8)
    state.write_x(3, 0x0123456789ABCDEF)
    state.write_z(1, z1)
    state.write_p(2, p2)
    state.write_nzcv(0x60000000)  # Z and C
    state.write_tpidr2(0x4000)
    state.write_system("fpcr", 0x03000000)  # FZ and DN
    registers = registers_of(machine)
    # ZA is off: gdb expects it (and ZT0) to read as zeros
    assert registers["za"].read(state) == bytes(svlb * svlb)
    assert registers["svcr"].read(state) == bytes(8)
    state.set_modes(True, True)
    state.write_za_vector(5, row5)
    state.write_zt0(table)
    journal.take()

    expected_za = bytearray(svlb * svlb)
    expected_za[5 * svlb:6 * svlb] = row5.tobytes()
    assert registers["x3"].read(state) == bytes.fromhex("efcdab8967452301")
    assert registers["z1"].read(state) == bytes(z1)
    assert registers["p2"].read(state) == bytes(p2)
    assert registers["cpsr"].read(state) == bytes.fromhex("00000060")
    assert registers["fpcr"].read(state) == bytes.fromhex("00000003")
    assert registers["tpidr2"].read(state) == bytes.fromhex("0040000000000000")
    assert registers["svcr"].read(state) == bytes([3, 0, 0, 0, 0, 0, 0, 0])  # SM and ZA
    assert registers["vg"].read(state) == registers["svg"].read(state) == bytes([512 // 64, 0, 0, 0, 0, 0, 0, 0])
    assert registers["za"].read(state) == bytes(expected_za)
    assert registers["zt0"].read(state) == bytes(table)
    assert registers["tpidr"].read(state) == bytes(8)
    for register in registers.values():
        assert len(register.read(state)) == register.bitsize // 8, register.name

    # a write then a read gives the value back, as a journalled write of the register
    new_values = {"x3": bytes(range(8)), "sp": bytes.fromhex("f0ff000000000000"), "cpsr": bytes.fromhex("00000090"),
                  "z1": bytes(rng.integers(0, 256, svlb, dtype=np.uint8)), "p2": bytes([0xFF] * 8),
                  "ffr": bytes([0x11] * 8), "fpsr": bytes.fromhex("01000000"), "tpidr2": bytes.fromhex("0080"
                  "000000000000"), "zt0": bytes(range(64))}
    where = {"x3": Location("x3"), "sp": Location("sp"), "cpsr": Location("nzcv"), "z1": Location("z1"),
             "p2": Location("p2"), "ffr": Location("ffr"), "fpsr": Location("fpsr"),
             "tpidr2": Location("tpidr2_el0"), "zt0": Location("zt0")}
    for name, data in new_values.items():
        registers[name].write(state, data)
        assert registers[name].read(state) == data, name
        assert [write.where for write in journal.take()] == [where[name]], name

    za = bytearray(expected_za)
    za[9 * svlb:10 * svlb] = bytes([7] * svlb)
    registers["za"].write(state, bytes(za))
    assert registers["za"].read(state) == bytes(za)
    assert [write.where for write in journal.take()] == [Location("za", 9)]  # only the vector that changed

    # the registers a debugger may not set: the vector lengths and the thread pointer isasim does not model
    assert registers["vg"].write is None and registers["svg"].write is None and registers["tpidr"].write is None


def test_writing_za_while_za_is_off_turns_it_on_as_ptrace_does():
    machine = Machine("arm_sme", {"svl": 128})
    state, journal = machine.state, machine.journal
    registers = registers_of(machine)
    journal.take()
    registers["za"].write(state, bytes(16 * 16))  # zeros: ZA stays off, nothing written
    assert not state.za_enabled and journal.take() == []
    za = bytes(range(256))
    registers["za"].write(state, za)
    assert state.za_enabled and registers["za"].read(state) == za
    assert registers["svcr"].read(state)[0] == 2
    journal.take()
    registers["svcr"].write(state, bytes(8))  # MSR SVCR: ZA off, and a ZA that is off reads as zeros
    assert not state.za_enabled and registers["za"].read(state) == bytes(256)
    assert Location("svcr") in [write.where for write in journal.take()]
