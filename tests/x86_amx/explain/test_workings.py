"""The trace viewer's click-for-working of x86 AMX (ISA.element_workings): one account per element of C a
TMUL step writes, held to values nobody here computed with the simulator: the example traces' expected C
(made by an INT64 / exact reference when the examples were written) and numpy's products of the step's
own A and B bytes, read from the trace's init memory.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from isasim.core.explain import Check, Table
from isasim.core.machine import Machine
from isasim.core.trace import read_trace
from isasim.x86_amx import ISA

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "x86_amx"


def region(regions, address: int, size: int) -> bytes:
    """``size`` bytes at ``address`` of a trace's (address, bytes, ...) regions."""
    for start, data, *_ in regions:
        if start <= address and address + size <= start + len(data):
            return data[address - start:address - start + size]
    raise AssertionError(f"no region holds {address:#x}")


def around_tdp(trace_name: str):
    """The trace, the TDP instruction, and machines just before and just after it (two machines stepped
    together, as the page steps one a step behind the other)."""
    trace = read_trace(EXAMPLES / trace_name)
    instruction, before, after = machines_around_tdp(trace.program, trace.init, trace.config)
    return trace, instruction, before, after


def machines_around_tdp(lines, init, config):
    """The first TDP instruction of the program ``lines`` run from ``init``, with machines just before and just
    after it."""
    before, after = Machine("x86_amx", config), Machine("x86_amx", config)
    program = before.assemble("\n".join(lines))
    before.load_init(program, init)
    after.load_init(program, init)
    while not after.current_instruction().text.startswith("tdp"):
        before.step()
        after.step()
    instruction = after.current_instruction()
    assert after.step().fault is None
    return instruction, before, after


def the_check(working) -> Check:
    assert isinstance(working.blocks[-1], Check), "an account ends with the check of the machine's value"
    assert sum(isinstance(b, Check) for b in working.blocks) == 1
    return working.blocks[-1]


def cell_text(value) -> str:
    return getattr(value, "text", value) if not isinstance(value, str) else value


def test_tdpbusd_every_element_of_the_int8_block():
    trace, instruction, before, after = around_tdp("int8_block.trace.json")
    regs = trace.init.regs
    A = np.frombuffer(region(trace.init.memory, regs["rdi"], 1024), np.uint8).reshape(16, 64).astype(np.int64)
    B = np.frombuffer(region(trace.init.memory, regs["rsi"], 1024), np.int8).reshape(16, 64).astype(np.int64)
    expected = np.frombuffer(region(trace.expect["memory"], regs["rdx"], 1024), "<i4").reshape(16, 16)

    workings = ISA.element_workings(instruction, before, after)
    assert len(workings) == 256
    seen = set()
    for w in workings:
        m, n = map(int, re.match(r"C\[(\d+)\]\[(\d+)\]", w.title).groups())
        seen.add((m, n))
        assert (w.location, w.offset, w.size) == ("tmm0", 64 * m + 4 * n, 4)
        check = the_check(w)
        assert check.equal, (w.title, check)
        assert int(check.machine) == int(expected[m, n])  # C was zero before: the whole sum
        (table,) = [b for b in w.blocks if isinstance(b, Table)]
        products = table.columns.index("products")
        assert len(table.rows) == 16  # K = 16 dwords
        for k, row in enumerate(table.rows):
            listed = [int(x) for x in cell_text(row[products]).split()]
            assert listed == list(A[m, 4 * k:4 * k + 4] * B[k, 4 * n:4 * n + 4]), (m, n, k)
    assert seen == {(m, n) for m in range(16) for n in range(16)}


def bf16_values(halves: np.ndarray) -> np.ndarray:
    """bf16 bit patterns as float64: the top half of an fp32."""
    return (halves.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def exact(note: str) -> float:
    """'exact product a*b = -37209 * 2**-14' as a float (exact for bf16 x bf16)."""
    n, e = re.search(r"exact product a\*b = (-?\d+) \* 2\*\*(-?\d+)", note).groups()
    return int(n) * 2.0 ** int(e)


def test_tdpbf16ps_every_element_of_the_bf16_block():
    trace, instruction, before, after = around_tdp("bf16_block.trace.json")
    regs = trace.init.regs
    A = bf16_values(np.frombuffer(region(trace.init.memory, regs["rdi"], 1024), "<u2").reshape(16, 32))
    B = bf16_values(np.frombuffer(region(trace.init.memory, regs["rsi"], 1024), "<u2").reshape(16, 32))
    expected = np.frombuffer(region(trace.expect["memory"], regs["rdx"], 1024), "<u4").reshape(16, 16)

    workings = ISA.element_workings(instruction, before, after)
    assert len(workings) == 256
    for w in workings:
        m, n = map(int, re.match(r"C\[(\d+)\]\[(\d+)\]", w.title).groups())
        assert (w.location, w.offset, w.size) == ("tmm0", 64 * m + 4 * n, 4)
        check = the_check(w)
        assert check.equal, (w.title, check)
        machine_bits = int(re.search(r"\((0x[0-9a-f]{8})\)", check.machine).group(1), 16)
        assert machine_bits == int(expected[m, n])
        fma = next(b for b in w.blocks if isinstance(b, Table) and "lane" in b.columns)
        a_col = next(i for i, c in enumerate(fma.columns) if c.startswith("a = "))
        b_col = next(i for i, c in enumerate(fma.columns) if c.startswith("b = "))
        note_col = next(i for i, c in enumerate(fma.columns) if c.startswith("FMA32"))
        assert len(fma.rows) == 32  # K = 16 dwords, an even and an odd lane each
        for row in fma.rows:
            k = int(cell_text(row[0]))
            odd = cell_text(row[1]) == "O"
            a, b = A[m, 2 * k + odd], B[k, 2 * n + odd]
            assert float(cell_text(row[a_col])) == a and float(cell_text(row[b_col])) == b
            if a and b:
                assert exact(cell_text(row[note_col])) == a * b


def fp16_bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float16).view("<u2")


def test_an_extension_tmul_tcmmrlfp16ps():
    """AMX-COMPLEX's real part, C[m][n] += Σ a.re·b.re − a.im·b.im, on small integers (every sum exact)."""
    M, K, N = 2, 3, 2
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 5, (M, 2 * K))  # (re, im) pairs
    b = rng.integers(-4, 5, (K, 2 * N))
    c = rng.integers(-50, 50, (M, N))
    cfg = bytearray(64)
    cfg[0] = 1  # palette 1; colsb (u16) at 16 + 2t, rows at 48 + t: the SDM's TILECFG layout
    for t, (rows, colsb) in {0: (M, 4 * N), 1: (M, 4 * K), 2: (K, 4 * N)}.items():
        cfg[16 + 2 * t:18 + 2 * t] = colsb.to_bytes(2, "little")
        cfg[48 + t] = rows
    arrays = {"tilecfg": bytes(cfg), "tmm0": c.astype(np.float32).tobytes(),
              "tmm1": fp16_bits(a).tobytes(), "tmm2": fp16_bits(b).tobytes()}
    config = {"cpu": "granite-rapids-d"}
    before, after = Machine("x86_amx", config), Machine("x86_amx", config)
    program = before.assemble("tcmmrlfp16ps tmm0, tmm1, tmm2")
    before.load(program, arrays=arrays)
    after.load(program, arrays=arrays)
    instruction = after.current_instruction()
    assert after.step().fault is None
    workings = ISA.element_workings(instruction, before, after)
    assert len(workings) == M * N
    for w in workings:
        m, n = map(int, re.match(r"C\[(\d+)\]\[(\d+)\]", w.title).groups())
        assert (w.location, w.offset, w.size) == ("tmm0", 4 * N * m + 4 * n, 4)
        check = the_check(w)
        assert check.equal
        want = c[m, n] + sum(a[m, 2 * k] * b[k, 2 * n] - a[m, 2 * k + 1] * b[k, 2 * n + 1] for k in range(K))
        assert float(check.machine.split()[0]) == want


def test_a_faulting_tdp_has_none():
    machine = Machine("x86_amx", {"cpu": "sapphire-rapids"})
    program = machine.assemble("mov rax, 5\ntdpbusd tmm0, tmm1, tmm2")
    before, after = Machine("x86_amx", {"cpu": "sapphire-rapids"}), Machine("x86_amx", {"cpu": "sapphire-rapids"})
    before.load(program)
    after.load(program)
    mov = after.current_instruction()
    after.step()
    (working,) = ISA.element_workings(mov, before, after)  # a scalar write: the register's account
    assert (working.location, working.offset, working.size) == ("rax", 0, 8) and the_check(working).machine == "0x5"
    before.step()
    tdp = after.current_instruction()
    record = after.step()
    assert record.fault is not None, "TDPBUSD with the tiles not configured faults"
    assert ISA.element_workings(tdp, before, after) == []


@pytest.mark.parametrize("mnemonic", ["tdpbssd", "tdpbsud", "tdpbuud", "tdpfp16ps"])
def test_the_other_tdp_forms_check_equal(mnemonic):
    """The other forms' accounts on the int8 example's tiles (their checks against the machine)."""
    trace = read_trace(EXAMPLES / "int8_block.trace.json")
    lines = [line.replace("tdpbusd", mnemonic) for line in trace.program]
    config = {"cpu": "granite-rapids"}  # has AMX-FP16
    instruction, before, after = machines_around_tdp(lines, trace.init, config)
    workings = ISA.element_workings(instruction, before, after)
    assert len(workings) == 256 and all(the_check(w).equal for w in workings)


# ---- the data-movement instructions: each element against the trace's own init and expect -------------------

def steps_of(trace_name: str):
    """Each step of a trace's program: (trace, instruction, machine before, machine after), as the page steps."""
    trace = read_trace(EXAMPLES / trace_name)
    before, after = Machine(trace.isa, trace.config), Machine(trace.isa, trace.config)
    program = before.assemble("\n".join(trace.program))
    before.load_init(program, trace.init)
    after.load_init(program, trace.init)
    while not after.finished:
        instruction = after.current_instruction()
        assert after.step().fault is None
        yield trace, instruction, before, after
        before.step()


def check_bytes(check: Check) -> bytes:
    """The bytes a data-movement check names ('04 11 1e 2b = int32 ...' or '0x40')."""
    return bytes.fromhex(check.machine.split(" = ")[0].replace(" ", ""))


def test_the_int8_blocks_data_movement_every_element():
    """LDTILECFG, MOV, TILEZERO, both TILELOADDs and TILESTORED of the seed block: every check equal, and each
    element's bytes equal to numpy's slicing of the trace's init memory (A at rdi, B at rsi, row stride 64 as
    the program's mov r8, 64 sets) or, stored, to the trace's expected C at rdx."""
    accounts = {}
    for trace, instruction, before, after in steps_of("int8_block.trace.json"):
        accounts[instruction.text] = ISA.element_workings(instruction, before, after)
    regs = trace.init.regs
    for workings in accounts.values():
        for w in workings:
            assert the_check(w).equal, (w.title, the_check(w))

    # LDTILECFG: the SDM's TILECFG layout (palette byte 0, start_row 1, colsb[t] u16 at 16+2t, rows[t] at 48+t)
    image = region(trace.init.memory, regs["rcx"], 64)
    cfg = accounts["ldtilecfg [rcx]"]
    assert [(w.location, w.offset, w.size) for w in cfg] == [("tilecfg", i, 1) for i in range(64)]
    sdm_names = {0: "palette", 1: "start_row"} | {16 + 2 * t + h: f"colsb[{t}]" for t in range(8) for h in (0, 1)} \
        | {48 + t: f"rows[{t}]" for t in range(8)}
    for i, w in enumerate(cfg):
        assert w.title == f"tilecfg byte {i}: {sdm_names.get(i, 'reserved')}"
        assert int(the_check(w).machine, 16) == image[i]

    (mov,) = accounts["mov r8,0x40"]
    assert (mov.location, mov.offset, mov.size) == ("r8", 0, 8) and int(the_check(mov).machine, 16) == 64

    zero = accounts["tilezero tmm0"]
    assert [(w.location, w.offset, w.size) for w in zero] == [("tmm0", 4 * i, 4) for i in range(256)]
    assert all(check_bytes(the_check(w)) == bytes(4) for w in zero)

    for tile, register in (("tmm1", "rdi"), ("tmm2", "rsi")):
        source = np.frombuffer(region(trace.init.memory, regs[register], 1024), np.uint8).reshape(16, 64)
        loads = accounts[f"tileloadd {tile},[{register}+r8*1]"]
        assert [(w.location, w.offset, w.size) for w in loads] == [(tile, 4 * i, 4) for i in range(256)]
        for w in loads:
            r, n = divmod(w.offset // 4, 16)
            assert w.title.endswith(f"memory {regs[register] + 64 * r + 4 * n:#x}")
            assert check_bytes(the_check(w)) == source[r, 4 * n:4 * n + 4].tobytes(), w.title

    expected = region(trace.expect["memory"], regs["rdx"], 1024)
    stores = accounts["tilestored [rdx+r8*1],tmm0"]
    assert [(w.location, w.offset, w.size) for w in stores] == [("memory", regs["rdx"] + 4 * i, 4)
                                                                 for i in range(256)]
    for i, w in enumerate(stores):
        assert check_bytes(the_check(w)) == expected[4 * i:4 * i + 4], w.title


def test_the_microkernels_loads_with_a_stride_and_its_scalar_adds():
    """The 2x256 microkernel's tile loads (a stride other than 64 where it has one) and its ADD/DEC: each loaded
    dword equals the init memory at base + r*stride + 4n with base and stride read from the trace's own register
    values, and each scalar write's check equals the register after."""
    seen = set()
    for trace, instruction, before, after in steps_of("int8_microkernel_2x256.trace.json"):
        mnemonic = instruction.form.mnemonic
        workings = ISA.element_workings(instruction, before, after)
        for w in workings:
            assert the_check(w).equal, (instruction.text, w.title, the_check(w))
        if mnemonic.startswith("tileload"):
            mem = next(o for o in instruction.operands if hasattr(o, "base"))
            base = before.state.read_register(mem.base) + mem.disp
            stride = before.state.read_register(mem.index) * mem.scale
            colsb = before.state.tilecfg.colsb[int(instruction.operands[0].name[3:])]
            for w in workings:
                r, n = divmod(w.offset, colsb)
                address = base + r * stride + n
                memory = np.frombuffer(region(trace.init.memory, address, 4), np.uint8)  # read-only inputs
                assert check_bytes(the_check(w)) == memory.tobytes(), (instruction.text, w.title)
            seen.add(mnemonic)
        elif mnemonic in ("add", "dec", "mov"):
            (w,) = [w for w in workings if w.location != "rflags"]  # (ADD and DEC also account for RFLAGS)
            assert w.location == instruction.operands[0].name
            assert int(the_check(w).machine, 16) == after.state.read_register(w.location)
            seen.add(mnemonic)
    assert {"tileloadd", "tileloaddt1", "add", "dec", "mov"} <= seen


def test_scalar_writes_at_each_width():
    """32-bit writes zero the upper half, 16- and 8-bit writes keep the rest; LEA computes the address."""
    program_text = "mov eax, -1\nadd ax, 2\nlea rbx, [rax+rcx*4+8]\ndec bh\nsub rbx, rcx"
    before, after = Machine("x86_amx", {"cpu": "sapphire-rapids"}), Machine("x86_amx", {"cpu": "sapphire-rapids"})
    program = before.assemble(program_text)
    regs = {"rax": 0x1234_5678_9ABC_DEF0, "rcx": 3}
    before.load(program, regs=regs)
    after.load(program, regs=regs)
    results = []
    while not after.finished:
        instruction = after.current_instruction()
        after.step()
        w, *flags = ISA.element_workings(instruction, before, after)
        before.step()
        assert the_check(w).equal, (instruction.text, the_check(w))
        assert [f.location for f in flags] == (["rflags"] if instruction.form.mnemonic not in ("mov", "lea") else [])
        results.append((w.location, w.offset, w.size, int(the_check(w).machine, 16)))
    # eax := 0xffffffff (rax zero-extended); ax + 2 wraps to 0x0001, so rax = 0xffff0001; rbx := rax + 3*4 + 8
    # = 0xffff0015; bh (0x00) - 1 = 0xff, so rbx = 0xffffff15; minus rcx (3) = 0xffffff12
    assert results == [("rax", 0, 8, 0xFFFF_FFFF), ("rax", 0, 2, 0x0001), ("rbx", 0, 8, 0xFFFF_0015),
                       ("rbx", 1, 1, 0xFF), ("rbx", 0, 8, 0xFFFF_FF12)]
