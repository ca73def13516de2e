"""ascend_cube's page outlines (Isa.page_outlines): for each moving form, stepped from random buffers, the spans
outlined as written are exactly the bytes the step changed (taken over two random starts, so a byte that happens
to be rewritten with its old value is still seen; for an accumulating Mmad, the 4-byte elements it changed), and the bytes outside the spans outlined as read do not matter:
scrambling them leaves the step's result as it was, while scrambling a read byte changes it."""

from __future__ import annotations

import numpy as np
import pytest

from isasim.ascend_cube.config import CHIPS
from isasim.ascend_cube.numerics.quant_word import pack_scale
from isasim.core.isa import get_isa
from isasim.core.machine import Machine
from isasim.core.trace import Init

ISA = get_isa("ascend_cube")
GM = 0x10000


def _init(chip: str, seed: int, words_at: int | None = None) -> Init:
    rng = np.random.default_rng(seed)
    arrays = {name.lower(): rng.integers(0, 256, size, dtype=np.uint8) for name, size in CHIPS[chip].buffers.items()}
    if words_at is not None:  # valid per-channel quant words (random ones may be NaN or denormal scales)
        words = np.array([pack_scale(float(s)) for s in rng.uniform(-2, 2, 64)], dtype=np.uint64)
        arrays["fb"][words_at : words_at + words.nbytes] = words.view(np.uint8)
    gm = rng.integers(0, 256, 8192, dtype=np.uint8).tobytes()
    return Init(memory=[(GM, gm, True)], arrays={name: data.tobytes() for name, data in arrays.items()})


def _last_step(chip: str, text: str, init: Init):
    """(outlines of the program's last instruction, buffers before it, buffers after it)."""
    machine = Machine("ascend_cube", {"chip": chip})
    program = machine.assemble(text)
    machine.load_init(program, init)
    while machine.state.pc != program.instructions[-1].address:
        assert machine.step().fault is None
    outlines = ISA.page_outlines(machine.current_instruction(), machine)
    before = {name: data.copy() for name, data in machine.state.buffers.items()}
    record = machine.step()
    assert record.fault is None, record.fault
    return outlines, before, machine


def _bytes(spans) -> set[int]:
    return {at for start, end in spans for at in range(start, end)}


def _outlined(outlines, role_word: str) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for outline in outlines:
        assert outline.role in ("read", "written", "read and written")
        if role_word in outline.role:
            out.setdefault(outline.location, set()).update(_bytes(outline.spans))
    return out


CASES = {
    "mmad int8 from zero": ("910B", "Mmad(c=L0C[1024], a=L0A[512], b=L0B[0], aType=int8, bType=int8, m=20, n=24, "
                                    "k=40)"),
    "mmad accumulating": ("910B", "Mmad(c=L0C[0], a=L0A[0], b=L0B[512], aType=int8, bType=int8, m=17, n=33, k=32, "
                                  "cmatrixInitVal=false)"),
    "mmad from the bias": ("910B", "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=float16, bType=float16, m=16, n=20, "
                                   "k=16, cmatrixInitVal=false, cmatrixSource=true, bias=BT[64])"),
    "mmad gemv (950)": ("950", "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=1, n=16, k=64)"),
    "fixpipe to L1, ND": ("910B", "Fixpipe(dst=L1[64], src=L0C[0], srcType=int32, dstType=int32, nSize=20, mSize=18, "
                                  "srcStride=32, dstStride=24)"),
    "fixpipe to L1, Nz, per channel": ("910B", "SetFixPipeConfig(quantPre=FB[128])\n"
                                               "Fixpipe(dst=L1[0], src=L0C[0], srcType=int32, dstType=float16, "
                                               "nSize=40, mSize=5, srcStride=16, dstStride=8, quantPre=VDEQF16, "
                                               "nz2nd=false)"),
    "datacopy gm -> l1": ("910B", "DataCopy(dst=L1[96], src=GM[0x10040], blockCount=3, blockLen=2, srcStride=1, "
                                  "dstStride=3)"),
    "nd2nz": ("910B", "DataCopy(dst=L1[0], src=GM[0x10000], dtype=float16, ndNum=2, nValue=5, dValue=21, "
                      "srcDValue=24, dstNzC0Stride=8, dstNzNStride=1, srcNdMatrixStride=130, dstNzMatrixStride=512)"),
    "l1 -> bt": ("910B", "DataCopy(dst=BT[64], src=L1[32], srcType=float16, dstType=float32, blockCount=2, "
                         "blockLen=1, srcStride=1, dstStride=1)"),
    "l1 -> fb": ("910B", "DataCopy(dst=FB[64], src=L1[64], blockCount=2, blockLen=2, srcStride=1, dstStride=1)"),
    "loaddata transposed": ("910B", "LoadData(dst=L0B[512], src=L1[1024], dtype=float16, startIndex=1, "
                                    "repeatTimes=3, srcStride=2, dstGap=1, ifTranspose=true)"),
    "loaddata v2": ("950", "LoadData(dst=L0A[512], src=L1[0], dtype=int8, mStartPosition=1, kStartPosition=1, "
                           "mStep=2, kStep=3, srcStride=4, dstStride=3)"),
    "loaddata v2 transposed": ("950", "LoadData(dst=L0B[0], src=L1[512], dtype=int8, mStartPosition=0, "
                                      "kStartPosition=0, mStep=2, kStep=2, srcStride=3, dstStride=2, "
                                      "ifTranspose=true)"),
}


def _words_at(text: str) -> int | None:
    return 128 if "FB[128]" in text else None


@pytest.mark.parametrize("case", CASES)
def test_the_written_outlines_are_the_bytes_the_step_changed(case):
    chip, text = CASES[case]
    changed: dict[str, set[int]] = {}
    for seed in (1, 2):
        outlines, before, machine = _last_step(chip, text, _init(chip, seed, _words_at(text)))
        for buffer, old in before.items():
            moved = set(np.flatnonzero(old != machine.state.buffers[buffer]).tolist())
            if moved:
                changed.setdefault(buffer.lower(), set()).update(moved)
    if any(outline.role == "read and written" for outline in outlines):
        # an accumulating Mmad adds small sums to random int32s: their high bytes seldom carry, so the changed
        # elements (any of their four bytes) are the measure
        changed["l0c"] = {at - at % 4 + b for at in changed["l0c"] for b in range(4)}
    assert _outlined(outlines, "written") == changed
    assert all(outline.label for outline in outlines)


@pytest.mark.parametrize("case", ["mmad from the bias", "mmad accumulating", "fixpipe to L1, Nz, per channel",
                                  "loaddata v2", "loaddata transposed", "l1 -> bt"])
def test_bytes_outside_the_read_outlines_do_not_matter(case):
    chip, text = CASES[case]
    outlines, _before, reference = _last_step(chip, text, _init(chip, 1, _words_at(text)))
    read = _outlined(outlines, "read")
    assert read
    base = _init(chip, 1, _words_at(text))
    rng = np.random.default_rng(7)
    for inside in (False, True):
        arrays = {}
        for name, data in base.arrays.items():
            image = np.frombuffer(data, dtype=np.uint8).copy()
            mask = np.zeros(image.size, dtype=bool)
            mask[sorted(read.get(name, ()))] = True
            scramble = mask if inside else ~mask
            if name == "fb" and _words_at(text) is not None and inside:
                continue  # scrambled quant words may be invalid scales: the L0C read shows the point
            image[scramble] = rng.integers(0, 256, int(scramble.sum()), dtype=np.uint8)
            arrays[name] = image.tobytes()
        _o, _b, machine = _last_step(chip, text, Init(memory=base.memory, arrays=arrays))
        written = _outlined(outlines, "written")
        same = all(np.array_equal(machine.state.buffers[b][sorted(spans)], reference.state.buffers[b][sorted(spans)])
                   for b, spans in ((name.upper(), s) for name, s in written.items()))
        assert same != inside, (case, "scrambled the read bytes" if inside else "scrambled the others")


def test_an_instruction_with_no_buffer_operand_and_a_nop_have_no_outline():
    machine = Machine("ascend_cube", {"chip": "910B"})
    program = machine.assemble("SetAtomicNone()\nMmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=0, "
                               "n=16, k=32)")
    machine.load_init(program, Init())
    assert [ISA.page_outlines(ins, machine) for ins in program.instructions] == [[], []]


def test_a_fixpipe_to_gm_outlines_what_it_reads_only():
    text = ("SetFixPipeConfig(quantPre=FB[128])\nFixpipe(dst=GM[0x10000], src=L0C[0], srcType=int32, dstType=float16, "
            "nSize=40, mSize=5, srcStride=16, dstStride=40, quantPre=VDEQF16)")
    outlines, _before, _machine = _last_step("910B", text, _init("910B", 1, 128))
    assert [(o.location, o.role, o.spans) for o in outlines] == [("l0c", "read", ((0, 3 * 16 * 16 * 4),)),
                                                                 ("fb", "read", ((128, 128 + 8 * 40),))]
