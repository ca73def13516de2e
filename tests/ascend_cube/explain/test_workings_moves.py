"""ascend_cube's click-for-working of the data movement forms workings_moves covers (DataCopy GM -> L1 bursts,
L1 -> FB, L1 -> BT, LoadData with LoadData2DParamsV2): every byte a step with random data changed has an account,
each account's Check agrees with the machine and with what numpy makes of the same inputs in the layout the docs
describe (slices of the bursts; numpy's float16 -> float32 and bf16 widening; fractal tiles reshaped and
transposed), and tampering with one destination byte after the step makes that account's check unequal."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from isasim.core.explain.model import Check, Table
from isasim.core.isa import get_isa
from isasim.core.machine import Machine
from isasim.core.trace import Init

ISA = get_isa("ascend_cube")
GM = 0x10000
RNG_SEED = 31


def _random_init(chip: str, gm_bytes: int = 4096, finite_halves: bool = False) -> tuple[Init, dict]:
    """Every buffer and a GM region random (so a move changes nearly every byte it writes)."""
    from isasim.ascend_cube.config import CHIPS

    rng = np.random.default_rng(RNG_SEED)
    arrays = {name.lower(): rng.integers(0, 256, size, dtype=np.uint8).tobytes()
              for name, size in CHIPS[chip].buffers.items()}
    if finite_halves:  # halves and bf16 below 0x7C00 / 0x7F80 in magnitude: no inf or NaN to compare
        arrays["l1"] = (rng.integers(0, 0x7800, CHIPS[chip].buffers["L1"] // 2, dtype=np.uint16)
                        | (rng.integers(0, 2, CHIPS[chip].buffers["L1"] // 2, dtype=np.uint16) << 15)).tobytes()
    gm = rng.integers(0, 256, gm_bytes, dtype=np.uint8).tobytes()
    return Init(memory=[(GM, gm, True)], arrays=arrays), {**arrays, "gm": gm}


def _step(chip: str, line: str, init: Init):
    """(workings, before, after) of the one instruction ``line``."""
    config = {"chip": chip}
    before, after = Machine("ascend_cube", config), Machine("ascend_cube", config)
    program = before.assemble(line)
    for machine in (before, after):
        machine.load_init(program, init)
    record = after.step()
    assert record.fault is None, record.fault
    return ISA.element_workings(record.instruction, before, after), before, after


def _checks(working) -> list[Check]:
    return [b for b in working.blocks if isinstance(b, Check)]


def _agree(workings, before, after, buffer: str, expected: dict[int, int], memory_order: bool = True):
    """Every account's checks equal; the accounts cover every changed byte and only bytes ``expected`` (the
    test's own {offset: byte} of the destination) names; with ``memory_order`` (the byte moves' accounts, which
    show the bytes as hex in memory order) each explained byte is the expected one."""
    old = np.frombuffer(before.state.buffers[buffer].tobytes(), dtype=np.uint8)
    new = np.frombuffer(after.state.buffers[buffer].tobytes(), dtype=np.uint8)
    covered = set()
    for working in workings:
        assert working.location == buffer.lower()
        checks = _checks(working)
        assert checks and all(c.equal for c in checks), working.title
        span = range(working.offset, working.offset + working.size)
        assert not covered.intersection(span), working.title
        covered.update(span)
        if memory_order:
            assert bytes.fromhex(checks[-1].explained) == bytes(expected[at] for at in span), working.title
    changed = set(np.flatnonzero(old != new).tolist())
    assert changed <= covered <= set(expected)
    assert len(changed) > 0.9 * len(expected)  # random data: the move did change what it wrote
    assert all(new[at] == value for at, value in expected.items())
    return covered


def _tamper(workings, after, buffer: str):
    """Flip one byte of the first and of the last account's destination after the step: their checks become
    unequal (the accounts read the after state, so a wrong store would show)."""
    for working in (workings[0], workings[-1]):
        at = working.offset + working.size - 1
        after.state.buffers[buffer][at] ^= 0x5A
        try:
            again = ISA.element_workings(_instruction(after), _before_of(after), after)
        finally:
            after.state.buffers[buffer][at] ^= 0x5A
        (redone,) = [w for w in again if w.offset == working.offset]
        assert not _checks(redone)[-1].equal, working.title


# element_workings needs the before machine and the instruction; the tests keep them beside the after machine
_CONTEXT: dict[int, tuple] = {}


def _instruction(after):
    return _CONTEXT[id(after)][0]


def _before_of(after):
    return _CONTEXT[id(after)][1]


def _run(chip: str, line: str, init: Init):
    workings, before, after = _step(chip, line, init)
    _CONTEXT[id(after)] = (after.program.instructions[0], before)
    return workings, before, after


def test_datacopy_gm_to_l1_bursts():
    init, data = _random_init("910B")
    line = "DataCopy(dst=L1[64], src=GM[0x10020], blockCount=3, blockLen=2, srcStride=1, dstStride=2)"
    workings, before, after = _run("910B", line, init)
    gm = np.frombuffer(data["gm"], dtype=np.uint8)
    # burst i: 64 bytes from GM 0x10020 + i*96, to L1[64 + i*128]
    expected = {64 + i * 128 + b: int(gm[0x20 + i * 96 + b]) for i in range(3) for b in range(64)}
    _agree(workings, before, after, "L1", expected)
    assert workings[0].title.startswith("L1[64]") and "GM 0x10020" in str(
        next(b for b in workings[0].blocks if isinstance(b, Table)).rows)
    _tamper(workings, after, "L1")


def test_datacopy_l1_to_fb_quant_words():
    init, data = _random_init("910B")
    line = "DataCopy(dst=FB[64], src=L1[32], blockCount=2, blockLen=1, srcStride=1, dstStride=1)"
    workings, before, after = _run("910B", line, init)
    l1 = np.frombuffer(data["l1"], dtype=np.uint8)
    expected = {64 + i * 64 + b: int(l1[32 + i * 64 + b]) for i in range(2) for b in range(32)}
    assert len(workings) == 8 and all(w.size == 8 for w in workings)  # one account per 64-bit word
    _agree(workings, before, after, "FB", expected, memory_order=False)
    for working in workings:
        word = int.from_bytes(bytes(expected[working.offset + b] for b in range(8)), "little")
        assert int(_checks(working)[-1].explained, 16) == word
        table = next((b for b in working.blocks if isinstance(b, Table)), None)
        if table is not None:  # the fields as the 910B reads them: M1 is bits 31..13
            m1 = next(row for row in table.rows if row[1] == "M1")
            assert int(m1[2]) == (word >> 13) & 0x7FFFF
    _tamper(workings, after, "FB")


@pytest.mark.parametrize("chip,src_type,dst_type", [("910B", "float16", "float32"), ("950", "bfloat16", "float32"),
                                                    ("910B", "int32", "int32"), ("950", "float32", "float32")])
def test_datacopy_l1_to_bt_widens_as_numpy_does(chip, src_type, dst_type):
    init, data = _random_init(chip, finite_halves=True)
    line = (f"DataCopy(dst=BT[128], src=L1[64], srcType={src_type}, dstType={dst_type}, blockCount=2, blockLen=1, "
            f"srcStride=1, dstStride=1)")
    workings, before, after = _run(chip, line, init)
    l1 = np.frombuffer(data["l1"], dtype=np.uint8)
    numpy_type = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "int32": np.int32, "float32": np.float32}
    source = [l1[64 + i * 64 : 64 + i * 64 + 32].view(numpy_type[src_type]) for i in range(2)]
    widened = [s.astype(np.float32 if dst_type == "float32" else np.int32) for s in source]
    scale = 4 // np.dtype(numpy_type[src_type]).itemsize
    # burst i's destination: BT[128 + i*(1 + 1)*32*scale], its 32 source bytes now 32*scale bytes
    expected = {128 + i * 64 * scale + b: int(v) for i in range(2)
                for b, v in enumerate(np.frombuffer(widened[i].tobytes(), dtype=np.uint8))}
    assert len(workings) == 2 * 32 // np.dtype(numpy_type[src_type]).itemsize
    for working in workings:
        bits = bytes(expected[working.offset + b] for b in range(4))
        assert _checks(working)[-1].explained == bits[::-1].hex()
    _agree(workings, before, after, "BT", expected, memory_order=False)
    _tamper(workings, after, "BT")


def _v2_expected(l1: np.ndarray, p: dict, size: int) -> dict[int, int]:
    """The docs' LoadData2DParamsV2 by numpy: gather the mStep x kStep source fractals (each 16 rows x 32 B),
    tile them into X ((mStep*16) x (kStep*C0) elements of ``size`` bytes), transpose if asked, and cut the result
    into 16 x C0 fractals, fractal (a, b) to dst + (b*dstStride + a)*512."""
    c0 = 32 // size
    tiles = [[l1[p["src"] + ((p["kStartPosition"] + k) * p["srcStride"] + p["mStartPosition"] + m) * 512:][:512]
              .reshape(16, c0, size) for k in range(p["kStep"])] for m in range(p["mStep"])]
    x = np.concatenate([np.concatenate(row, axis=1) for row in tiles], axis=0)  # (mStep*16, kStep*C0, size)
    if p["ifTranspose"]:
        x = x.transpose(1, 0, 2)
    rows, cols = x.shape[0] // 16, x.shape[1] // c0
    out = {}
    for a in range(rows):
        for b in range(cols):
            fractal = x[a * 16 : (a + 1) * 16, b * c0 : (b + 1) * c0].reshape(-1)
            base = p["dst"] + (b * p["dstStride"] + a) * 512
            out.update({base + i: int(v) for i, v in enumerate(fractal)})
    return out


@pytest.mark.parametrize("buffer,dtype,m_step,k_step,transpose", [
    ("L0A", "int8", 3, 2, False), ("L0B", "int8", 2, 3, True), ("L0A", "float16", 2, 2, False),
    ("L0B", "float32", 1, 2, True)])
def test_loaddata_v2_moves_the_block_as_numpys_tiles(buffer, dtype, m_step, k_step, transpose):
    init, data = _random_init("950")
    size = {"int8": 1, "float16": 2, "float32": 4}[dtype]
    p = {"src": 1024, "dst": 512, "mStartPosition": 1, "kStartPosition": 2, "mStep": m_step, "kStep": k_step,
         "srcStride": 5, "dstStride": 4, "ifTranspose": transpose}
    line = (f"LoadData(dst={buffer}[{p['dst']}], src=L1[{p['src']}], dtype={dtype}, "
            + ", ".join(f"{k}={str(v).lower()}" for k, v in p.items() if k not in ("src", "dst")) + ")")
    workings, before, after = _run("950", line, init)
    expected = _v2_expected(np.frombuffer(data["l1"], dtype=np.uint8), p, size)
    _agree(workings, before, after, buffer, expected)
    # each element's value as numpy reads its bytes (random bytes: NaNs and infinities among them)
    numpy_type = {"int8": np.int8, "float16": np.float16, "float32": np.float32}[dtype]
    for working in workings:
        table = next(b for b in working.blocks if isinstance(b, Table))
        column = table.columns.index(f"value ({dtype})")
        for k, row in enumerate(table.rows):
            at = working.offset + k * size
            want = float(np.frombuffer(bytes(expected[at + b] for b in range(size)), dtype=numpy_type)[0])
            assert float(row[column]) == want or (np.isnan(want) and np.isnan(float(row[column]))), row
    _tamper(workings, after, buffer)


def test_a_loaddata_v2_with_no_steps_has_no_account():
    init, _data = _random_init("950")
    workings, _before, _after = _run("950", "LoadData(dst=L0A[0], src=L1[0], dtype=int8, mStartPosition=0, mStep=0, kStep=2)", init)
    assert workings == []


def test_a_large_nd2nz_whose_rows_end_mid_group_gets_one_account_per_byte_there():
    """Nd2Nz of 300 x 70 int8 (more than 4096 bytes, so grouped by 4): each row's last column block holds 6
    bytes, so some groups of 4 are not adjacent in L1 and fall back to one account per byte (as a flat list)."""
    init, data = _random_init("910B", gm_bytes=300 * 70)
    line = ("DataCopy(dst=L1[0], src=GM[0x10000], dtype=int8, nValue=300, dValue=70, srcDValue=70, "
            "dstNzC0Stride=304)")
    workings, before, after = _run("910B", line, init)
    gm = np.frombuffer(data["gm"], dtype=np.uint8).reshape(300, 70)
    # Nz: column block d / 32 holds 304 rows of 32 bytes; element (r, d) at ((d / 32)*304 + r)*32 + d MOD 32
    expected = {((d // 32) * 304 + r) * 32 + d % 32: int(gm[r, d]) for r in range(300) for d in range(70)}
    _agree(workings, before, after, "L1", expected)
    assert {w.size for w in workings} == {1, 4}
