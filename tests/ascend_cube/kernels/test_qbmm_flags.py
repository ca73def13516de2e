"""The QBMM stream's SetFlag / WaitFlag / PipeBarrier against the kernel's own, transcribed by hand.

The expected sequences below were written by walking the public sources for the two example cases and
the tilings given, not from isasim's output:

- ops-nn (hicann/ops-nn @ e5c3fa9327ea) matmul/common/cmct/block/block_mmad_a8w8_fixpipe_quant.h: the
  constructor (lines 109-120) and destructor (122-133), operator() (168-213), CopyBiasInL1 (361-373),
  CopyX2ScaleInL1 (375-385), CopyInL0A/CopyInL0B's barriers (416-426, 458-468), Iterate (525-546),
  IterateAL1BL1 (628-651) and IterateABL1 (686-703);
- asc-devkit (mirror-cann/asc-devkit @ 82b89a15f263) impl/basic_api/dav_3510/kernel_tpipe_impl_c310.h:
  TPipe::Init sets M_MTE1 0, 1, 2 (108-122) and TPipe::Destroy waits for them and ends with
  pipe_barrier(PIPE_ALL) (787-819); kernel_operator_fixpipe_impl.h: a Fixpipe call issues
  PipeBarrier<PIPE_FIX> before its L0C move (381-391, 711-737).

Each data move is written as a token (GM>L1 A, LoadB, Mmad, ...); lines marked ``*`` are isasim's
stand-ins for the unitFlag that orders L0C (qbmm_flags.STAND_IN_EVENTS): the real kernel issues
everything else, in this order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from isasim.ascend_cube.kernels import qbmm
from isasim.ascend_cube.kernels.qbmm_flags import SYNC_POINTS, epilogue, is_sync, parse, prologue

EXAMPLES = Path(__file__).parents[3] / "examples" / "ascend_cube"


def _case(name: str, tiling: dict):
    case = qbmm.load_case(EXAMPLES / name / "case.json")
    case.tiling = tiling
    return case


def _tokens(kernel: qbmm.QbmmKernel, lines: list[str]) -> list[str]:
    """Each line as a token: sync lines as 'Set EVENT id' / 'Wait EVENT id' / 'Bar PIPE', moves by what they move."""
    regions = sorted((address, name) for name, (address, _, _) in kernel.regions.items())

    def gm_name(line: str) -> str:
        address = int(line.split("src=GM[")[1].split("]")[0], 16)
        return [name for start, name in regions if start <= address][-1]

    out = []
    for line in lines:
        name = line.split("(", 1)[0]
        if is_sync(line):
            kind, what, event_id = parse(line)
            token = {"SetFlag": "Set", "WaitFlag": "Wait", "PipeBarrier": "Bar"}[kind] + f" {what}"
            out.append(token if event_id is None else f"{token} {event_id}")
        elif name == "DataCopy" and "src=GM[" in line:
            out.append(f"GM>L1 {gm_name(line)}")
        elif name == "DataCopy":
            out.append("L1>" + line.split("dst=")[1].split("[")[0])
        elif name == "LoadData":
            out.append("Load" + line.split("dst=L0")[1][0])
        else:
            out.append(name)
    return out


def _expand(text: str) -> list[str]:
    """The hand-written listing: one token a line; '*' marks a stand-in (kept, unmarked, in the result)."""
    return [line.strip().lstrip("* ").strip() for line in text.strip().splitlines() if line.strip()]


PROLOGUE = """
    Set M_MTE1 0
    Set M_MTE1 1
    Set M_MTE1 2
    Set MTE1_MTE2 0
    Set MTE1_MTE2 1
    Set MTE1_MTE2 2
    Set MTE1_MTE2 3
    Set MTE1_MTE2 4
    Set MTE1_MTE2 5
    Set FIX_MTE2 0
    Set FIX_MTE2 1
    * Set FIX_M 0
    * Set FIX_M 1
"""
EPILOGUE = """
    * Wait FIX_M 0
    * Wait FIX_M 1
    Wait MTE1_MTE2 0
    Wait MTE1_MTE2 1
    Wait MTE1_MTE2 2
    Wait MTE1_MTE2 3
    Wait MTE1_MTE2 4
    Wait MTE1_MTE2 5
    Wait FIX_MTE2 0
    Wait FIX_MTE2 1
    Wait M_MTE1 0
    Wait M_MTE1 1
    Wait M_MTE1 2
    Bar PIPE_ALL
"""

# CopyInL0B of B not transposed, n 70 (5 fractals of 16 rows, odd): mStep 2, a barrier after the first
# load and after each further one; loadTimes = ceil(ceil(k0 / 16) / 2): 4 for k0 128, 2 for k0 44
LOAD_B_128 = "LoadB\nBar PIPE_MTE1\nLoadB\nBar PIPE_MTE1\nLoadB\nBar PIPE_MTE1\nLoadB\nBar PIPE_MTE1"
LOAD_B_44 = "LoadB\nBar PIPE_MTE1\nLoadB\nBar PIPE_MTE1"


def _block(scale: int, bias: int, l0c: int, windows: list[tuple[int, list[tuple[int, int]]]]) -> str:
    """One block of the int8 example under IterateABL1: CopyX2ScaleInL1 (scale buffer ``scale``), CopyBiasInL1
    (bias flag 4 + ``bias``), the windows (L1 buffer, [(L0 half, k0), ...]), the Fixpipe (L0C half ``l0c``)
    and operator()'s closing sets."""
    text = f"""
        Wait FIX_MTE2 {scale}
        GM>L1 scale_b
        Set MTE2_FIX {scale}
        Wait MTE2_FIX {scale}
        Wait MTE1_MTE2 {4 + bias}
        GM>L1 bias
        Set MTE2_MTE1 {4 + bias}
        Wait MTE2_MTE1 {4 + bias}
    """
    first = True
    for buf, slices in windows:
        text += f"Wait MTE1_MTE2 {buf}\nGM>L1 A\nGM>L1 B\nSet MTE2_MTE1 {buf}\nWait MTE2_MTE1 {buf}\n"
        for half, k0 in slices:
            text += f"Wait M_MTE1 {half}\nLoadA\n" + ("L1>BT\n" if first else "")
            text += (LOAD_B_128 if k0 == 128 else LOAD_B_44) + f"\nSet MTE1_M {half}\nWait MTE1_M {half}\n"
            text += (f"* Wait FIX_M {l0c}\n" if first else "") + f"Mmad\nSet M_MTE1 {half}\n"
            first = False
        text += f"Set MTE1_MTE2 {buf}\n"
    text += f"""
        * Set M_FIX {l0c}
        L1>FB
        SetFixPipeConfig
        Bar PIPE_FIX
        * Wait M_FIX {l0c}
        Fixpipe
        * Set FIX_M {l0c}
        Set FIX_MTE2 {scale}
        Set MTE1_MTE2 {4 + bias}
    """
    return text


def test_int8_example_iterate_abl1_issues_the_kernels_flags_in_its_order():
    # m 100, n 70, k 300: kL1 256 -> two windows (256, 44), baseK 128 -> slices 128, 128 | 44; two L1 buffers,
    # two L0C halves; batch 1 of 6 is the second block (the buffer, L0 and L0C counters carry over)
    kernel = qbmm.build(_case("qbmm_int8_bf16", {"baseM": 112, "baseN": 96, "baseK": 128, "kAL1": 256, "kBL1": 256,
                                                 "nBufferNum": 2, "dbL0C": 2}))
    expected = PROLOGUE
    expected += _block(0, 0, 0, [(0, [(0, 128), (1, 128)]), (1, [(0, 44)])])
    expected += _block(1, 1, 1, [(0, [(1, 128), (0, 128)]), (1, [(1, 44)])])
    expected += EPILOGUE
    assert _tokens(kernel, kernel.group_lines(range(0, 2))) == _expand(expected)


def test_fp8_example_iterate_al1_bl1_issues_the_kernels_flags_in_its_order():
    # m 64, n 48, k 256, per-tensor scales (no scale buffer, no bias): kAL1 128 > kBL1 64 -> IterateAL1BL1, two A
    # windows (flags 0 + aPingPongID_), each over two B windows (flags 2 + bPingPongID_), baseK 32 -> two slices
    # each; B not transposed with n 48 (3 fractals, odd): one load of mStep 2 per 32-deep slice and its barrier
    kernel = qbmm.build(_case("qbmm_fp8_pertensor", {"baseM": 64, "baseN": 64, "baseK": 32, "kAL1": 128, "kBL1": 64,
                                                     "nBufferNum": 2, "dbL0C": 1}))
    body = ""
    half = 0
    for a in (0, 1):
        body += f"Wait MTE1_MTE2 {a}\nGM>L1 A\nSet MTE2_MTE1 {a}\nWait MTE2_MTE1 {a}\n"
        for b in (0, 1):
            body += f"Wait MTE1_MTE2 {2 + b}\nGM>L1 B\nSet MTE2_MTE1 {2 + b}\nWait MTE2_MTE1 {2 + b}\n"
            for _ in range(2):
                body += f"Wait M_MTE1 {half}\nLoadA\nLoadB\nBar PIPE_MTE1\nSet MTE1_M {half}\nWait MTE1_M {half}\n"
                body += ("* Wait FIX_M 0\n" if a == b == 0 and half == 0 and "Mmad" not in body else "")
                body += f"Mmad\nSet M_MTE1 {half}\n"
                half ^= 1
            body += f"Set MTE1_MTE2 {2 + b}\n"
        body += f"Set MTE1_MTE2 {a}\n"
    expected = PROLOGUE + "SetFixpipePreQuantFlag\n" + body + """
        * Set M_FIX 0
        Bar PIPE_FIX
        * Wait M_FIX 0
        Fixpipe
        * Set FIX_M 0
    """ + EPILOGUE
    assert _tokens(kernel, kernel.program_lines) == _expand(expected)


def test_four_buffers_use_input_flags_0_to_3_and_the_ids_pair_up():
    # IterateABL1 with nBufferNum 4: window i uses flag abL1LoopCnt_ & 3 (block_mmad_a8w8_fixpipe_quant.h:692)
    kernel = qbmm.build(_case("qbmm_fp8_pertensor", {"baseM": 64, "baseN": 64, "baseK": 32, "kAL1": 32, "kBL1": 32,
                                                     "nBufferNum": 4}))
    tokens = _tokens(kernel, kernel.program_lines)
    waits = [t for t in tokens if t.startswith("Wait MTE1_MTE2")][:8]
    assert waits == [f"Wait MTE1_MTE2 {i % 4}" for i in range(8)]
    # every flag the stream sets is waited for exactly as often (nothing left set, no wait without its set)
    sets = sorted(t[4:] for t in tokens if t.startswith("Set "))
    assert sets == sorted(t[5:] for t in tokens if t.startswith("Wait "))


def test_transposed_a_with_odd_fractals_has_a_barrier_after_each_load():
    # CopyInL0A with A transposed and m1 odd (m 100: 7 fractals): mStep 2, a barrier after the first load and after
    # each further one, ceil(ceil(k0 / 16) / 2) loads (block_mmad_a8w8_fixpipe_quant.h:404-426); B transposed loads
    # with one plain LoadData and no barrier (435-442, 458)
    case = _case("qbmm_int8_bf16", {"baseM": 128, "baseN": 96, "baseK": 128, "kAL1": 256, "kBL1": 256,
                                    "nBufferNum": 2})
    case.transpose_a = case.transpose_b = True
    kernel = qbmm.build(case)
    tokens = _tokens(kernel, kernel.block_lines(0))
    slices = []
    for i, token in enumerate(tokens):
        if token.startswith("Wait M_MTE1") and tokens[i + 1].startswith("Load"):  # not TPipe::Destroy's waits
            slices.append(tokens[i + 1:tokens.index(f"Set MTE1_M {token[-1]}", i)])
    assert slices == [["LoadA", "Bar PIPE_MTE1"] * 4 + ["L1>BT", "LoadB"], ["LoadA", "Bar PIPE_MTE1"] * 4 + ["LoadB"],
                      ["LoadA", "Bar PIPE_MTE1"] * 2 + ["LoadB"]]


def test_without_sync_the_stream_is_the_same_moves():
    case = _case("qbmm_int8_bf16", {})
    with_sync, without = qbmm.build(case), qbmm.build(case, sync=False)
    assert [line for line in with_sync.program_lines if not is_sync(line)] == without.program_lines
    assert not any(is_sync(line) for line in without.program_lines)


def test_the_table_cites_a_line_for_every_sync_point_and_the_prologue_mirrors_the_epilogue():
    assert all(":" in point.source and point.where for point in SYNC_POINTS)
    assert [p for p in SYNC_POINTS if p.stand_in] == [SYNC_POINTS[-1]]
    sets = sorted(parse(line)[1:] for line in prologue())
    waits = sorted(parse(line)[1:] for line in epilogue() if parse(line)[0] == "WaitFlag")
    assert sets == waits


@pytest.mark.parametrize("line", ["SetFlag(event=MTE2_MTE1, id=3)", "PipeBarrier(pipe=PIPE_FIX)"])
def test_parse_reads_what_the_builder_writes(line):
    kind, what, event_id = parse(line)
    assert line.startswith(kind) and what in line and (event_id is None or f"id={event_id}" in line)
