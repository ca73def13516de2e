"""Every fault the Ascend cube documents: raised by the instruction that breaks the rule, with its index
and the rule in words, before anything is written; and through the CLI, exit 3 naming the fault."""

from __future__ import annotations

import json

import numpy as np
import pytest

from isasim import cli
from isasim.core.machine import Machine
from isasim.ascend_cube.numerics.quant_word import pack_scale

SETUP = "SetAtomicNone()"  # index 0, so the faulting line is instruction 1
GM = [(0x100000, bytes(range(256)) * 16, True), (0x300000, bytes(8192), True)]

FAULTS = [
    # (line, chip, kind, words of the rule)
    ("DataCopy(dst=L1[0], src=GM[0x9000], blockLen=1)", "910B", "GM_FAULT", ["0x9000", "not mapped"]),
    ("DataCopy(dst=L1[16], src=GM[0x100000], blockLen=1)", "910B", "ALIGNMENT", ["L1[16]", "32"]),
    ("DataCopy(dst=L1[524256], src=GM[0x100000], blockLen=2)", "910B", "BUFFER_OVERFLOW", ["L1", "524288"]),
    ("LoadData(dst=L0A[256], src=L1[0], dtype=int8)", "910B", "ALIGNMENT", ["L0A[256]", "512"]),
    ("LoadData(dst=L0B[65024], src=L1[0], dtype=int8, repeatTimes=2)", "910B", "BUFFER_OVERFLOW", ["L0B", "65536"]),
    ("LoadData(dst=L0A[0], src=L1[0], dtype=int8, ifTranspose=true)", "910B", "UNSUPPORTED", ["transpose", "int8"]),
    ("Mmad(c=L0C[512], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32)", "910B", "ALIGNMENT",
     ["L0C[512]", "1024"]),
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=4096, n=16, k=32)", "910B", "PARAM_RANGE",
     ["m=4096", "4095"]),
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=4096)", "910B", "PARAM_RANGE",
     ["k=4096"]),
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=float8_e4m3fn, bType=float8_e5m2, m=16, n=16, k=32)", "910B",
     "UNSUPPORTED", ["float8_e4m3fn x float8_e5m2", "910B"]),
    ("Mmad(c=L0C[130048], a=L0A[0], b=L0B[0], aType=float16, bType=float16, m=32, n=16, k=16)", "910B",
     "BUFFER_OVERFLOW", ["L0C", "131072"]),
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32, bias=BT[32])", "910B",
     "ALIGNMENT", ["BT[32]", "64"]),
    ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=bfloat16, nSize=16, mSize=16, srcStride=16, "
     "dstStride=16, quantPre=QS322BF16_PRE)", "910B", "UNSUPPORTED", ["QS322BF16_PRE", "910B"]),
    ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=bfloat16, nSize=16, mSize=16, srcStride=16, "
     "dstStride=16, quantPre=NoQuant)", "910B", "UNSUPPORTED", ["int32 -> bfloat16", "910B"]),
    ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=float32, dstType=float16, nSize=16, mSize=16, srcStride=16, "
     "dstStride=16, quantPre=DEQF16)", "910B", "UNSUPPORTED", ["DEQF16 converts int32"]),
    ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=int8, nSize=257, mSize=1, srcStride=16, "
     "dstStride=257, quantPre=VREQ8)", "910B", "QUANT_PARAM", ["257", "256"]),
    ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=int8, nSize=1025, mSize=1, srcStride=16, "
     "dstStride=1025, quantPre=VREQ8)", "950", "QUANT_PARAM", ["1025", "1024"]),
    ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=int32, nSize=16, mSize=16, srcStride=8, "
     "dstStride=16)", "910B", "PARAM_RANGE", ["srcStride 8"]),
    ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=int32, nSize=16, mSize=16, srcStride=16, "
     "dstStride=8)", "910B", "PARAM_RANGE", ["dstStride 8"]),
    ("Fixpipe(dst=GM[0x9000], src=L0C[0], srcType=int32, dstType=int32, nSize=16, mSize=16, srcStride=16, "
     "dstStride=16)", "910B", "GM_FAULT", ["0x9000"]),
    ("SetFixPipeConfig(quantPre=FB[8])", "910B", "ALIGNMENT", ["FB[8]", "64"]),
    ("DataCopy(dst=BT[0], src=L1[0], srcType=bfloat16, dstType=float32, blockLen=1)", "910B", "UNSUPPORTED",
     ["bfloat16 to float32", "910B"]),
]


@pytest.mark.parametrize("line, chip, kind, words", FAULTS)
def test_each_fault_names_the_instruction_its_index_and_the_rule(line, chip, kind, words):
    machine = Machine("ascend_cube", {"chip": chip})
    machine.load(machine.assemble(SETUP + "\n" + line), regs={}, memory=GM)
    before = {name: data.copy() for name, data in machine.state.buffers.items()}
    gm_before = machine.memory.read(0x300000, 8192)
    machine.run()
    fault = machine.fault
    assert fault is not None and fault.kind == kind and fault.index == 1, fault
    for word in words:
        assert word in fault.rule, (word, fault.rule)
    assert all((machine.state.buffers[n] == before[n]).all() for n in before)  # nothing written
    assert machine.memory.read(0x300000, 8192) == gm_before


def test_a_bad_quant_word_is_a_quant_param_fault_on_950():
    """The 950 docs: M1 'cannot be inf/nan'. An M1 of inf (exponent all ones) faults the Fixpipe that reads it."""
    word = (0x7F800000 & 0xFFFFE000) | (1 << 46)
    program = (f"SetFixpipePreQuantFlag(config={word:#x})\nFixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, "
               "dstType=float16, nSize=16, mSize=16, srcStride=16, dstStride=16, quantPre=DEQF16)")
    machine = Machine("ascend_cube", {"chip": "950"})
    machine.load(machine.assemble(program), regs={}, memory=GM)
    machine.run()
    assert machine.fault is not None and machine.fault.kind == "QUANT_PARAM" and machine.fault.index == 1


def test_the_sign_bit_must_agree_with_the_output_type():
    word = pack_scale(0.5) & ~(1 << 46)  # bit 46 clear: uint8
    program = (f"SetFixpipePreQuantFlag(config={word:#x})\nFixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, "
               "dstType=int8, nSize=16, mSize=16, srcStride=16, dstStride=16, quantPre=REQ8)")
    machine = Machine("ascend_cube", {"chip": "910B"})
    machine.load(machine.assemble(program), regs={}, memory=GM)
    machine.run()
    assert machine.fault.kind == "QUANT_PARAM" and "uint8" in machine.fault.rule


def test_the_cli_reports_a_fault_with_exit_3(tmp_path, capsys):
    program, init = tmp_path / "p.s", tmp_path / "i.json"
    program.write_text("SetAtomicNone()\nLoadData(dst=L0A[256], src=L1[0], dtype=int8)\n")
    init.write_text(json.dumps({}))
    code = cli.main(["run", str(program), "--init", str(init), "--isa", "ascend_cube", "--no-color"])
    out = capsys.readouterr().out
    assert code == 3 and "fault ALIGNMENT" in out and "512" in out


def test_a_mode_of_the_950_runs_there():
    """QS322BF16_PRE exists on the 950 only: there it runs (int32 -> bf16, M1 = 1: numpy-checkable for small ints)."""
    c = np.arange(256, dtype=np.int32) - 128
    program = (f"SetFixpipePreQuantFlag(config={pack_scale(1.0):#x})\n"
               "Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=bfloat16, nSize=16, mSize=16, "
               "srcStride=16, dstStride=16, quantPre=QS322BF16_PRE)")
    machine = Machine("ascend_cube", {"chip": "950"})
    machine.load(machine.assemble(program), regs={}, memory=GM)
    machine.state.write_buffer("L0C", 0, c.view(np.uint8))
    machine.run()
    assert machine.fault is None, machine.fault
    got = np.frombuffer(machine.memory.read(0x300000, 512), dtype=np.uint16)
    # L0C holds one 16x16 fractal: element (i, j) is word i*16 + j, so ND equals the fractal order here
    assert (got == (c.astype(np.float32).view(np.uint32) >> 16)).all()  # small ints: bf16 exact (truncation = RNE)
