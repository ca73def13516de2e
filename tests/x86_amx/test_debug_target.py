"""x86_amx's debugger view (isasim/x86_amx/debug_target.py), checked against gdb itself and a real state.

gdb reads the description isasim serves (``set tdesc filename``) and says what it made of it: ``maint print
remote-registers`` lists every raw register with its size and the number the remote protocol uses for it, and
every pseudo-register gdb's amd64 code derives (eax, ax, al, ymm0, zmm0 ...), which it does only when it has
recognised the features as its own.  Both the distribution's gdb (13 on Debian) and gdb 18 (the gdb-for-pwndbg
wheel) read it.  The sizes expected below are the architecture's (an x87 register is 80 bits, TILECFG 64 bytes,
a tile 16 rows of 64 bytes ...), and the values read from a state are the values set, as little-endian bytes.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import gdb_client
from isasim.core.debug_target import SIGBUS, SIGFPE, SIGILL, SIGSEGV
from isasim.core.journal import Location, Write
from isasim.core.machine import Machine
from isasim.x86_amx import config as x86_config
from isasim.x86_amx.config import CpuModel
from isasim.x86_amx.debug_target import debug_target
from isasim.x86_amx.faults import KINDS
from isasim.x86_amx.state import TileConfig

def gdb_or_skip(which: str) -> str:
    return gdb_client.gdb_or_skip(which, "i386:x86-64")


GDBS = ["system", "wheel"]

# Models isasim does not have, for the layouts without AVX-512 and without AVX (every AMX Xeon has both)
NO_AVX512 = CpuModel("test-avx2", "AMX without AVX-512 (test only)",
                     frozenset(f for f in x86_config.CPU_MODELS["sapphire-rapids"].features if not f.startswith("AVX512")))
NO_AVX = CpuModel("test-sse", "AMX with SSE only (test only)",
                  frozenset(f for f in NO_AVX512.features if f not in ("AVX", "AVX2", "FMA", "F16C", "AVX_VNNI")))
MODELS = {"sapphire-rapids": "avx512", "granite-rapids": "avx512", NO_AVX512.name: "avx", NO_AVX.name: "sse"}


@pytest.fixture(params=sorted(MODELS))
def cpu(request, monkeypatch):
    for model in (NO_AVX512, NO_AVX):
        monkeypatch.setitem(x86_config.CPU_MODELS, model.name, model)
    return request.param


def run_gdb(gdb: str, directory, *commands: str) -> subprocess.CompletedProcess:
    arguments = [gdb, "-nx", "-batch", "-ex", "set tdesc filename target.xml"]
    for command in commands:
        arguments += ["-ex", command]
    return subprocess.run(arguments, cwd=directory, capture_output=True, text=True, timeout=120)


def register_table(output: str) -> dict[str, dict]:
    """``maint print remote-registers``: name -> its size in bytes and (raw registers) its remote number."""
    table = {}
    for line in output.splitlines():
        cells = line.split()
        if len(cells) >= 6 and cells[1].isdigit() and cells[4].isdigit():
            remote = int(cells[6]) if len(cells) >= 8 and cells[6].isdigit() else None
            table[cells[0]] = {"size": int(cells[4]), "remote": remote}
    return table


# Byte sizes from the architecture (SDM, gdb's i386 features), for registers every model has
ARCHITECTURAL_SIZES = {"rax": 8, "r15": 8, "rip": 8, "eflags": 4, "cs": 4, "gs": 4, "st0": 10, "st7": 10,
                       "fctrl": 4, "fop": 4, "xmm0": 16, "xmm15": 16, "mxcsr": 4, "orig_rax": 8, "fs_base": 8,
                       "gs_base": 8, "tilecfg_raw": 64, "tiledata": 8 * 16 * 64, "tmm0": 16 * 64, "tmm7": 16 * 64}
AVX_SIZES = {"ymm0h": 16, "ymm15h": 16}
AVX512_SIZES = {"xmm16": 16, "xmm31": 16, "ymm16h": 16, "ymm31h": 16, "k0": 8, "k7": 8, "zmm0h": 32, "zmm31h": 32}
# pseudo-registers gdb's amd64 code makes of the raw ones, by the features they need
CORE_PSEUDO = {"eax": 4, "r15d": 4, "ax": 2, "al": 1, "ah": 1, "r8l": 1}
AVX_PSEUDO = {"ymm0": 32, "ymm15": 32}
AVX512_PSEUDO = {"ymm16": 32, "ymm31": 32, "zmm0": 64, "zmm31": 64}


@pytest.mark.parametrize("which", GDBS)
def test_gdb_reads_the_description_as_amd64_linux(tmp_path, which, cpu):
    gdb = gdb_or_skip(which)
    target = debug_target({"cpu": cpu})
    for name, text in target.documents().items():
        (tmp_path / name).write_text(text)
    result = run_gdb(gdb, tmp_path, "maint print remote-registers", "show architecture", "show osabi",
                     "ptype $tmm0", "ptype $tmm0.i32", "ptype $tmm0.u8", "ptype $tmm0.bf16", "ptype $tmm0.f32",
                     "ptype $tiledata", "ptype $eflags", "ptype $mxcsr", "ptype $xmm0", "ptype $zmm0")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower() and "error" not in output.lower(), output
    assert 'currently "i386:x86-64"' in output and 'currently "GNU/Linux"' in output

    table = register_table(result.stdout)
    # every raw register: the remote number is its place in the description, the size its bitsize
    for number, register in enumerate(target.registers):
        assert table[register.name] == {"size": register.bitsize // 8, "remote": number}, register.name
    level = MODELS[cpu]
    expected = dict(ARCHITECTURAL_SIZES, **CORE_PSEUDO)
    absent = set()
    for sizes, needs in ((AVX_SIZES, "avx"), (AVX_PSEUDO, "avx"), (AVX512_SIZES, "avx512"),
                         (AVX512_PSEUDO, "avx512")):
        if level == needs or (level == "avx512" and needs == "avx"):
            expected.update(sizes)
        else:
            absent.update(sizes)
    for name, size in expected.items():
        assert name in table and table[name]["size"] == size, (name, table.get(name))
    assert not absent & set(table), absent & set(table)

    # the types resolved as written: a tile is a union of 16 typed rows, gdb's own flags for eflags and MXCSR
    text = result.stdout
    assert "type = union tile {" in text
    for field in ("i8", "u8", "i16", "u16", "i32", "u32", "bf16", "f16", "f32"):
        assert f"rows_{field} {field};" in text
    # (gdb prints a vector of vectors with the row count first: 16 rows of N elements)
    assert "type = int32_t __attribute__ ((vector_size(16))) __attribute__ ((vector_size(16)))" in text
    assert "type = uint8_t __attribute__ ((vector_size(16))) __attribute__ ((vector_size(64)))" in text
    assert "bfloat16 __attribute__ ((vector_size(16))) __attribute__ ((vector_size(32)))" in text
    assert "ieee_single __attribute__ ((vector_size(16))) __attribute__ ((vector_size(16)))" in text
    assert "type = union tiledata_type {" in text
    assert "flag i386_eflags {" in text and "bool ZF @6;" in text
    assert "flag i386_mxcsr {" in text and "bool FZ @15;" in text
    assert "v4_int32" in text  # xmm0's union
    assert ("v16_int32" in text) == (level == "avx512")  # zmm0: gdb's own 512-bit union


def state_machine(cpu: str) -> Machine:
    machine = Machine("x86_amx", {"cpu": cpu})
    machine.journal.take()
    return machine


def le(value: int, size: int) -> bytes:
    return (value % (1 << (8 * size))).to_bytes(size, "little")


def test_registers_read_the_state_as_little_endian_bytes(cpu):
    machine = state_machine(cpu)
    state = machine.state
    registers = {register.name: register for register in debug_target({"cpu": cpu}).registers}
    rng = np.random.default_rng(30)
    zmm5 = int.from_bytes(rng.bytes(64), "little")
    state.write_register("rax", 0x1122334455667788)
    state.write_register("r13", -2)
    state.write_vector(5, zmm5)
    state.write_opmask(3, 0xF0F0_0000_1234_5678)
    state.set_rflags(0x2C7)  # CF PF ZF SF and bit 1 (reserved 1)
    state.set_segment_base("fs_base", 0x7FFF_F7D8_A740)
    state.rip = 0x401234
    # TILECFG palette 1: tmm0 16 rows x 64 bytes, tmm1 3 rows x 12 bytes (the SDM's layout, written by hand)
    image = bytearray(64)
    image[0] = 1
    image[16:18], image[18:20] = (64).to_bytes(2, "little"), (12).to_bytes(2, "little")
    image[48], image[49] = 16, 3
    state.set_tilecfg(TileConfig.from_bytes(bytes(image)))
    tmm0 = rng.integers(0, 256, (16, 64), dtype=np.uint8)
    tmm1 = rng.integers(0, 256, (16, 64), dtype=np.uint8)  # beyond its shape too: what gdb sees there is 0
    state.write_tile(0, tmm0)
    state.write_tile(1, tmm1)
    expected_tmm1 = np.zeros((16, 64), dtype=np.uint8)
    expected_tmm1[:3, :12] = tmm1[:3, :12]

    def read(name: str) -> bytes:
        return registers[name].read(state)

    assert read("rax") == bytes.fromhex("8877665544332211")
    assert read("r13") == b"\xfe" + b"\xff" * 7
    assert read("rip") == le(0x401234, 8)
    assert read("eflags") == le(0x2C7, 4)
    assert read("fs_base") == le(0x7FFF_F7D8_A740, 8) and read("gs_base") == bytes(8)
    assert read("cs") == le(0x33, 4) and read("ss") == le(0x2B, 4) and read("ds") == bytes(4)
    assert read("st0") == bytes(10) and read("fctrl") == le(0x37F, 4) and read("ftag") == le(0xFFFF, 4)
    assert read("mxcsr") == le(0x1F80, 4) and read("orig_rax") == b"\xff" * 8
    assert read("xmm5") == le(zmm5, 16)
    assert read("tilecfg_raw") == bytes(image)
    assert read("tmm0") == tmm0.tobytes() and read("tmm1") == expected_tmm1.tobytes()
    assert read("tmm2") == bytes(1024)
    assert read("tiledata") == tmm0.tobytes() + expected_tmm1.tobytes() + bytes(6 * 1024)
    if MODELS[cpu] != "sse":
        assert read("ymm5h") == le(zmm5 >> 128, 16)
    if MODELS[cpu] == "avx512":
        assert read("zmm5h") == le(zmm5 >> 256, 32)
        assert read("k3") == le(0xF0F0_0000_1234_5678, 8)
        state.write_vector(20, zmm5)
        assert read("xmm20") == le(zmm5, 16) and read("ymm20h") == le(zmm5 >> 128, 16)
    for register in registers.values():
        assert len(register.read(state)) == register.bitsize // 8, register.name


def test_writes_round_trip_and_are_journalled(cpu):
    machine = state_machine(cpu)
    state = machine.state
    registers = {register.name: register for register in debug_target({"cpu": cpu}).registers}
    rng = np.random.default_rng(31)
    zmm7 = int.from_bytes(rng.bytes(64), "little")
    state.write_vector(7, zmm7)
    machine.journal.take()

    def write(name: str, data: bytes) -> list:
        registers[name].write(state, data)
        assert registers[name].read(state) == data, name
        return machine.journal.take()

    assert write("rbx", le(0xDEAD_BEEF_0BAD_F00D, 8)) == [
        Write("reg", Location("rbx"), 0, 0xDEAD_BEEF_0BAD_F00D)]
    assert write("eflags", le(0x246, 4)) == [Write("flags", Location("rflags"), 0x202, 0x246)]
    assert write("gs_base", le(0x1000, 8)) == [Write("reg", Location("gs_base"), 0, 0x1000)]
    new_low = int.from_bytes(rng.bytes(16), "little")
    low_mask = (1 << 128) - 1
    merged = (zmm7 & ~low_mask) | new_low  # xmm7 written: zmm7's upper 384 bits kept
    assert write("xmm7", le(new_low, 16)) == [Write("reg", Location("zmm7"), zmm7, merged)]
    assert state.read_vector(7) == merged
    if MODELS[cpu] != "sse":
        high = int.from_bytes(rng.bytes(16), "little")
        after = (merged & ~(low_mask << 128)) | (high << 128)
        assert write("ymm7h", le(high, 16)) == [Write("reg", Location("zmm7"), merged, after)]
        merged = after
    if MODELS[cpu] == "avx512":
        upper = int.from_bytes(rng.bytes(32), "little")
        after = (merged & ((1 << 256) - 1)) | (upper << 256)
        assert write("zmm7h", le(upper, 32)) == [Write("reg", Location("zmm7"), merged, after)]
        assert write("k1", le(0xFF00, 8)) == [Write("reg", Location("k1"), 0, 0xFF00)]

    # TILECFG: a configuration LDTILECFG accepts (tmm2: 4 rows x 8 bytes); each field journalled
    image = bytearray(64)
    image[0], image[20:22], image[50] = 1, (8).to_bytes(2, "little"), 4
    writes = write("tilecfg_raw", bytes(image))
    assert {(w.kind, str(w.where), w.new) for w in writes} == {
        ("tilecfg", "palette", 1), ("tilecfg", "tmm2.colsb", 8), ("tilecfg", "tmm2.rows", 4)}
    tile = np.zeros((16, 64), dtype=np.uint8)
    tile[:4, :8] = rng.integers(1, 256, (4, 8), dtype=np.uint8)
    writes = write("tmm2", tile.tobytes())
    assert [(w.kind, str(w.where), w.new) for w in writes] == [
        ("tile", f"tmm2[{r}]", tile[r].tobytes()) for r in range(4)]
    tile[3, 7] ^= 0xFF
    data = bytearray(registers["tiledata"].read(state))
    data[2 * 1024 + 3 * 64 + 7] = tile[3, 7]
    assert [(w.kind, str(w.where)) for w in write("tiledata", bytes(data))] == [("tile", "tmm2[3]")]

    # refused, changing nothing: data beyond a tile's shape, a TILECFG LDTILECFG refuses, the constants
    outside = tile.copy()
    outside[4, 0] = 1
    with pytest.raises(ValueError, match="4 rows x 8 bytes"):
        registers["tmm2"].write(state, outside.tobytes())
    with pytest.raises(ValueError, match="4 rows x 8 bytes"):
        registers["tiledata"].write(state, bytes(2 * 1024) + outside.tobytes() + bytes(5 * 1024))
    reserved = bytearray(image)
    reserved[40] = 1
    with pytest.raises(ValueError, match="reserved byte 40"):
        registers["tilecfg_raw"].write(state, bytes(reserved))
    with pytest.raises(ValueError):
        registers["orig_rax"].write(state, le(0, 8))
    registers["orig_rax"].write(state, b"\xff" * 8)  # what gdb writes with every pc change: accepted
    for name in ("cs", "ss", "st0", "fctrl", "ftag", "mxcsr"):
        assert registers[name].write is None, name
    assert machine.journal.take() == []
    assert registers["tmm2"].read(state) == tile.tobytes()

    # palette 0 releases the tiles: TILECFG and all tile data back to zero
    writes = write("tilecfg_raw", bytes(64))
    assert ("tilecfg", "palette", 0) in {(w.kind, str(w.where), w.new) for w in writes}
    assert ("tile", "tmm2[0]") in {(w.kind, str(w.where)) for w in writes}
    assert registers["tiledata"].read(state) == bytes(8192)


def test_faults_reach_gdb_as_the_signals_linux_sends():
    target = debug_target({"cpu": "sapphire-rapids"})
    linux = {"#UD": SIGILL, "#GP": SIGSEGV, "#PF": SIGSEGV, "#DE": SIGFPE, "#AC": SIGBUS, "#XM": SIGFPE,
             "#MF": SIGFPE}
    for kind, signal in linux.items():
        assert target.signal(kind) == signal, kind
    assert set(KINDS) <= set(target.signals)  # every fault isasim raises is named, none left to the default
    assert target.pc_register == "rip" and target.code_registers == ()
    assert target.architecture == "i386:x86-64" and target.osabi == "GNU/Linux"


def test_the_isa_object_serves_the_target():
    from isasim.core.isa import get_isa

    target = get_isa("x86_amx").debug_target({"cpu": "emerald-rapids"})
    assert [feature.name for feature in target.features] == [
        "org.gnu.gdb.i386.core", "org.gnu.gdb.i386.sse", "org.gnu.gdb.i386.linux", "org.gnu.gdb.i386.segments",
        "org.gnu.gdb.i386.avx", "org.gnu.gdb.i386.avx512", "org.gnu.gdb.i386.amx", "org.isasim.amx.tiles"]
