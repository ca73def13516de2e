"""A program for the other chip is refused before it runs, in one line naming the file, the line and
the rule (the chip lacks the Fixpipe mode, the Mmad types, the bias pair or the transpose); the same
program on the chip that has them runs."""

from __future__ import annotations

import pytest

from isasim.cli import main

FIXPIPE_950 = ("Fixpipe(dst=GM[0x200000], src=L0C[0], srcType=float32, dstType=hifloat8, nSize=16, mSize=16, "
               "srcStride=16, dstStride=16, quantPre=QF322HIF8_PRE)")
MMAD_950 = "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=float8_e4m3fn, bType=float8_e5m2, m=16, n=16, k=32)"
FIXPIPE_BF16_FROM_INT32 = ("Fixpipe(dst=GM[0x200000], src=L0C[0], srcType=int32, dstType=bfloat16, nSize=16, "
                           "mSize=16, srcStride=16, dstStride=16, quantPre=QS322BF16_PRE)")


@pytest.mark.parametrize("line, rule", [
    (FIXPIPE_950, "quantPre=QF322HIF8_PRE: 910B has no such Fixpipe mode"),
    (MMAD_950, "Mmad float8_e4m3fn x float8_e5m2: 910B multiplies"),
    (FIXPIPE_BF16_FROM_INT32, "910B has no such"),  # no int32 -> bf16 on 910B (facts: the A2/A3 output table)
])
def test_a_950_program_on_910b_is_one_line_naming_file_line_and_rule(tmp_path, capsys, line, rule):
    program = tmp_path / "kernel.s"
    program.write_text("SetAtomicNone()\n" + line + "\n")
    assert main(["run", str(program), "--isa", "ascend_cube", "--chip", "910B", "--no-color"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{program}:2: " in err and rule in err, err
    assert main(["run", str(program), "--isa", "ascend_cube", "--chip", "950", "--no-color"]) != 2
    assert "has no such" not in capsys.readouterr().err
