"""The A64 branches, as the Arm ARM's ASL writes them: B, B.cond, CBZ/CBNZ, TBZ/TBNZ, and the calls and
returns with a real call stack: BL and BLR write the return address to X30, BR, BLR and RET branch to a
register.

Each returns None to go on to the next instruction, a branch offset from the instruction's address, or END
when the run ends.  isasim runs one function, as its caller would: ``state.call_depth`` counts the BL and
BLR not yet returned from, and a RET with none pending returns to that caller, outside the program, so the
run ends there (wherever X30 points: the test harness's return address, the ELF loader's sentinel).
"""

from __future__ import annotations

from ..context import END
from ..numerics.integer_asl import ConditionHolds, Ones


def b(cpu, offset):
    """PC = PC + offset"""
    return offset


def b_cond(cpu, offset, cond):
    """if ConditionHolds(cond) then PC = PC + offset;    // ConditionHolds reads PSTATE.<N,Z,C,V>"""
    return offset if ConditionHolds(cond, cpu.state.nzcv >> 28) else None


def compare_branch(cpu, t, offset, *, datasize, nonzero):
    """bits(datasize) operand1 = X[t, datasize];
if IsZero(operand1) != nonzero then PC = PC + offset;    // CBZ: nonzero = FALSE; CBNZ: TRUE"""
    return offset if ((cpu.X(t) & Ones(datasize)) != 0) == nonzero else None


def test_branch(cpu, t, bit_pos, offset, *, bit_val):
    """bits(datasize) operand = X[t, datasize];    // bit_pos = b5:b40
if operand<bit_pos> == bit_val then PC = PC + offset;    // TBZ: bit_val 0; TBNZ: 1"""
    return offset if (cpu.X(t) >> bit_pos) & 1 == bit_val else None


def branch_link(cpu, offset):
    """X[30, 64] = PC[] + 4;
BranchTo(PC[] + offset, BranchType_DIRCALL);"""
    cpu.set_X(30, cpu.state.pc + 4)
    cpu.state.call_depth += 1
    return offset


def branch_register(cpu, n, *, link):
    """bits(64) target = X[n, 64];
if link then X[30, 64] = PC[] + 4;    // BLR (read before it is written: BLR X30 goes to the old X30)
BranchTo(target, if link then BranchType_INDCALL else BranchType_INDIR);"""
    target = cpu.X(n)
    if link:
        cpu.set_X(30, cpu.state.pc + 4)
        cpu.state.call_depth += 1
    return target - cpu.state.pc


def ret(cpu, n):
    """bits(64) target = X[n, 64];    // X30 unless another register is named
BranchTo(target, BranchType_RET);
// isasim: with no BL/BLR pending, the return is to the run's caller: the run ends"""
    state = cpu.state
    if not state.call_depth:
        return END
    state.call_depth -= 1
    return cpu.X(n) - state.pc
