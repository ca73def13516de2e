"""The numbers the lowering and the compiled loop share: one per compiled body, the ASL's mode checks, and the
branch targets that are not an instruction.  Plain Python, so lowering a program does not load numba."""

# body numbers (0: no compiled body)
NONE = 0
MOVE_WIDE = 1
ADD_SUB_IMM = 2
ADD_SUB_SHIFTED = 3
ADD_SUB_EXTENDED = 4
LOGICAL_IMM = 5
LOGICAL_SHIFTED = 6
BITFIELD_MOVE = 7
MULTIPLY_ADD = 8
BRANCH = 9
BRANCH_COND = 10
COMPARE_BRANCH = 11
TEST_BRANCH = 12
ADD_CONSTANT = 13
SET_CONSTANT = 14
WHILE_LOWER = 15
SET_PREDICATE = 16
LOAD_CONTIGUOUS = 17
STORE_CONTIGUOUS = 18
LOAD_TILE_SLICE = 19
STORE_TILE_SLICE = 20
LOAD_Z = 21
STORE_Z = 22
LOAD_ZA_VECTOR = 23
STORE_ZA_VECTOR = 24
DOT = 25
OUTER_PRODUCT = 26
LOAD_MULTI = 27
STORE_MULTI = 28

BODY_NAMES = ("MOVE_WIDE", "ADD_SUB_IMM", "ADD_SUB_SHIFTED", "ADD_SUB_EXTENDED", "LOGICAL_IMM", "LOGICAL_SHIFTED",
              "BITFIELD_MOVE", "MULTIPLY_ADD", "BRANCH", "BRANCH_COND", "COMPARE_BRANCH", "TEST_BRANCH",
              "ADD_CONSTANT", "SET_CONSTANT", "WHILE_LOWER", "SET_PREDICATE", "LOAD_CONTIGUOUS", "STORE_CONTIGUOUS",
              "LOAD_TILE_SLICE", "STORE_TILE_SLICE", "LOAD_Z", "STORE_Z", "LOAD_ZA_VECTOR", "STORE_ZA_VECTOR", "DOT",
              "OUTER_PRODUCT", "LOAD_MULTI", "STORE_MULTI")  # in body-number order, from 1

# the ASL's mode checks (context.py), decided by PSTATE.SM and PSTATE.ZA, which no compiled body changes
CHECK_NONE = 0
CHECK_SVE = 1  # CheckSVEEnabled: streaming mode, or FEAT_SVE
CHECK_SM_ZA = 2  # CheckStreamingSVEAndZAEnabled
CHECK_ZA = 3  # CheckSMEAndZAEnabled
CHECK_SM = 4  # CheckStreamingSVEEnabled

# a branch target that is not an instruction index
TARGET_END = -1  # the end of the code: the run ends
TARGET_ELSEWHERE = -2  # not an instruction of the program: Python reports it
