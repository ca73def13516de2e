"""SVE predicate and element-count instructions a streaming loop needs: PTRUE, WHILELT/WHILELO,
CNTB/CNTH/CNTW/CNTD, and the vector-length arithmetic RDSVL, ADDVL, ADDSVL, ADDSPL.

``pred_count`` is the Arm ARM's DecodePredCount (the element-count patterns); ``pred_test``
its PredTest, which sets NZCV from a predicate a WHILE writes.  Elements are counted at
CurrentVL, which is the SVL in streaming mode and, with the "SVE" feature, outside it too
(isasim's non-streaming vector length is the SVL).
"""

from __future__ import annotations

import numpy as np

from ..state import MASK64


def pred_count(pattern: int, esize: int, vl: int) -> int:
    """DecodePredCount(pattern, esize): how many elements a pattern makes active."""
    elements = vl // esize
    if pattern == 0:  # POW2: the largest power of two that fits
        return 1 << (elements.bit_length() - 1)
    if 1 <= pattern <= 8:  # VL1-VL8
        return pattern if pattern <= elements else 0
    if 9 <= pattern <= 13:  # VL16, VL32, VL64, VL128, VL256
        wanted = 16 << (pattern - 9)
        return wanted if wanted <= elements else 0
    if pattern == 29:  # MUL4
        return elements - elements % 4
    if pattern == 30:  # MUL3
        return elements - elements % 3
    if pattern == 31:  # ALL
        return elements
    return 0  # #14-#28: unallocated patterns make no element active


def ptrue(cpu, d, pattern, *, esize):
    """CheckSVEEnabled();   // streaming mode, or FEAT_SVE
constant integer elements = VL DIV esize;
integer count = DecodePredCount(pat, esize);
for e = 0 to elements-1
    ElemP[result, e, esize] = if e < count then '1' else '0';
P[d, PL] = result;"""
    cpu.CheckSVEEnabled()
    count = pred_count(pattern[0], esize, cpu.VL)
    cpu.set_P_elements(d, np.arange(cpu.VL // esize) < count, esize)


def pred_test(cpu, active: np.ndarray) -> None:
    """PSTATE.<N,Z,C,V> = PredTest(Ones(PL), result, esize): N the first element active, Z none
    active, C the last not active, V 0."""
    cpu.set_NZCV(int(active[0]), int(not active.any()), int(not active[-1]), 0)


def whilelt(cpu, d, n, m, *, esize, width, unsigned):
    """CheckSVEEnabled();
bits(esize) operand1 = X[n, rsize]; operand2 = X[m, rsize];   // rsize 32 (W) or 64 (X)
boolean last = TRUE;
for e = 0 to elements-1
    // WHILELT compares as SInt, WHILELO as UInt
    last = last && (Int(operand1, unsigned) + e < Int(operand2, unsigned));
    ElemP[result, e, esize] = if last then '1' else '0';
PSTATE.<N,Z,C,V> = PredTest(Ones(PL), result, esize);
P[d, PL] = result;"""
    cpu.CheckSVEEnabled()
    mask = (1 << width) - 1
    a, b = cpu.X(n) & mask, cpu.X(m) & mask
    if not unsigned:  # as signed integers of the register's width
        a = a - (1 << width) if a >> (width - 1) else a
        b = b - (1 << width) if b >> (width - 1) else b
    elements = cpu.VL // esize
    # the comparison a + e < b holds for a prefix of e (it is exact in Python: no wrap-around)
    active = np.arange(elements) < max(0, min(elements, b - a))
    pred_test(cpu, active)
    cpu.set_P_elements(d, active, esize)


def cnt(cpu, d, pattern, *, esize):
    """CheckSVEEnabled();
integer count = DecodePredCount(pat, esize);
X[d, 64] = (count * imm)<63:0>;"""
    cpu.CheckSVEEnabled()
    pat, times = pattern
    cpu.set_X(d, pred_count(pat, esize, cpu.VL) * times)


def addvl(cpu, d, n, imm):
    """CheckSVEEnabled();
X[d|SP, 64] = X[n|SP, 64] + imm * (VL DIV 8);   // imm -32..31 vector lengths in bytes"""
    cpu.CheckSVEEnabled()
    cpu.set_XSP(d, (cpu.XSP(n) + imm * (cpu.VL // 8)) & MASK64)


def rdsvl(cpu, d, imm):
    """CheckSMEEnabled();   // PSTATE.SM may be 0: the streaming vector length is readable outside streaming
X[d, 64] = imm * (SVL DIV 8);"""
    cpu.set_X(d, (imm * cpu.svlb) & MASK64)


def addsvl(cpu, d, n, imm):
    """CheckSMEEnabled();
X[d|SP, 64] = X[n|SP, 64] + imm * (SVL DIV 8);   // streaming vector lengths in bytes"""
    cpu.set_XSP(d, (cpu.XSP(n) + imm * cpu.svlb) & MASK64)


def addspl(cpu, d, n, imm):
    """CheckSMEEnabled();
X[d|SP, 64] = X[n|SP, 64] + imm * (SVL DIV 64);   // streaming predicate lengths in bytes"""
    cpu.set_XSP(d, (cpu.XSP(n) + imm * (cpu.svlb // 8)) & MASK64)
