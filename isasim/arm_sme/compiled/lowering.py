"""From a decoded instruction to what the compiled loop runs: a body number and its integer operands.

Each lowering reads the form's semantics function and its fixed keywords (the same ``partial`` the Python
path calls) and the instruction's resolved operands, and returns ``(body, operands)``, or None where the
compiled loop has no body for that case (the instruction then runs in Python).  What the configuration
fixes (the vector length, a count pattern's element count, a DecodeBitMasks mask) is worked out here,
once, in Python, with the same helpers the semantics use.
"""

from __future__ import annotations

from ..forms.base import ARCHITECTURE_BASE
from ..numerics.integer_asl import DecodeBitMasks
from ..semantics.integer_dots import DotShape
from ..semantics.integer_outer_products import OuterShape
from ..semantics.predicates_and_counts import pred_count
from . import body_numbers as B

ALL_PATTERN = 31
WIDTH = 16  # operands per instruction (the widest lowering uses fewer)


def _function(form):
    execute = form.execute
    return getattr(execute, "func", execute), dict(getattr(execute, "keywords", None) or {})


def _checks(name: str) -> int:
    return {"sve": B.CHECK_SVE, "sm_za": B.CHECK_SM_ZA, "za": B.CHECK_ZA, "none": B.CHECK_NONE}[name]


def lower(instruction, config: dict, index_of: dict[int, int], end: int) -> tuple[int, list[int]] | None:
    """The compiled body of ``instruction`` under ``config`` and its operands, or None (Python runs it).

    ``index_of`` maps each instruction's address to its index; a branch's target becomes an index,
    TARGET_END (the end of the code: the run ends there) or TARGET_ELSEWHERE (the Python path reports it)."""
    form = getattr(instruction, "form", None)
    if form is None or instruction.invalid is not None or form.execute is None:
        return None
    if form.feature not in ARCHITECTURE_BASE and form.feature not in config["features"]:
        return None  # the feature check is the Python path's (it raises UNDEFINED)
    function, keywords = _function(form)
    lowering = LOWERINGS.get((function.__module__.rsplit(".", 1)[-1], function.__name__))
    if lowering is None:
        shape = form.extra.get("shape")
        lowering = SHAPED.get(type(shape))
        if lowering is None:
            return None
        return lowering(shape, instruction.operands, config)
    svl = config["svl"]

    def target(offset: int) -> int:
        address = instruction.address + offset
        if address == end:
            return B.TARGET_END
        return index_of.get(address, B.TARGET_ELSEWHERE)

    return lowering(instruction.operands, keywords, svl, target)


# ---- the A64 base instructions -------------------------------------------------------------------------

def _move_wide(operands, kw, svl, target):
    d, (imm16, pos) = operands
    opcode = {"Z": 0, "N": 1, "K": 2}[kw["opcode"]]
    return B.MOVE_WIDE, [d, imm16, pos, kw["datasize"], opcode]


def _add_sub_imm(operands, kw, svl, target):
    d, n, imm = operands
    return B.ADD_SUB_IMM, [d, n, imm, kw["datasize"], kw["sub_op"], kw["setflags"]]


def _add_sub_shifted(operands, kw, svl, target):
    d, n, (m, shift_type, amount) = operands
    return B.ADD_SUB_SHIFTED, [d, n, m, shift_type, amount, kw["datasize"], kw["sub_op"], kw["setflags"]]


def _add_sub_extended(operands, kw, svl, target):
    d, n, (m, extend_type, shift) = operands
    return B.ADD_SUB_EXTENDED, [d, n, m, extend_type, shift, kw["datasize"], kw["sub_op"], kw["setflags"]]


LOGICAL = {"AND": 0, "ORR": 1, "EOR": 2}


def _logical_imm(operands, kw, svl, target):
    d, n, imm = operands
    return B.LOGICAL_IMM, [d, n, _signed64(imm), kw["datasize"], LOGICAL[kw["op"]], kw["setflags"]]


def _logical_shifted(operands, kw, svl, target):
    d, n, (m, shift_type, amount) = operands
    return B.LOGICAL_SHIFTED, [d, n, m, shift_type, amount, kw["datasize"], LOGICAL[kw["op"]], kw["setflags"],
                               kw.get("invert", False)]


def _bitfield_move(operands, kw, svl, target):
    d, n, immr, imms = operands
    datasize = kw["datasize"]
    wmask, tmask = DecodeBitMasks(1 if datasize == 64 else 0, imms, immr, False, datasize)
    return B.BITFIELD_MOVE, [d, n, immr, imms, datasize, kw["signed"], _signed64(wmask), _signed64(tmask)]


def _multiply_add(operands, kw, svl, target):
    d, n, m, a = operands
    return B.MULTIPLY_ADD, [d, n, m, a, kw["datasize"], kw["sub_op"]]


def _b(operands, kw, svl, target):
    (offset,) = operands
    return B.BRANCH, [target(offset)]


def _b_cond(operands, kw, svl, target):
    offset, cond = operands
    return B.BRANCH_COND, [target(offset), cond]


def _compare_branch(operands, kw, svl, target):
    t, offset = operands
    return B.COMPARE_BRANCH, [t, target(offset), kw["datasize"], kw["nonzero"]]


def _test_branch(operands, kw, svl, target):
    t, bit_pos, offset = operands
    return B.TEST_BRANCH, [t, bit_pos, target(offset), kw["bit_val"]]


# ---- SVE and SME scalar forms the vector length fixes ------------------------------------------------------

def _add_vector_lengths(per: int, check: str):
    def lowering(operands, kw, svl, target):
        d, n, imm = operands
        return B.ADD_CONSTANT, [d, n, imm * (svl // per), _checks(check), 1]  # X[d|SP] = X[n|SP] + ...
    return lowering


def _read_vector_lengths(per: int, check: str):
    def lowering(operands, kw, svl, target):
        d, imm = operands
        return B.SET_CONSTANT, [d, _signed64((imm * (svl // per)) % (1 << 64)), _checks(check)]
    return lowering


def _cnt(operands, kw, svl, target):
    d, (pattern, times) = operands
    return B.SET_CONSTANT, [d, _signed64((pred_count(pattern, kw["esize"], svl) * times) % (1 << 64)), B.CHECK_SVE]


def _inc_scalar(operands, kw, svl, target):
    dn, (pattern, times) = operands
    step = pred_count(pattern, kw["esize"], svl) * times
    return B.ADD_CONSTANT, [dn, dn, -step if kw["decrement"] else step, B.CHECK_SVE, 0]  # X[dn]: 31 is XZR


def _ptrue(operands, kw, svl, target):
    d, (pattern, _) = operands
    return B.SET_PREDICATE, [d, pred_count(pattern, kw["esize"], svl), kw["esize"] // 8]


def _whilelt(operands, kw, svl, target):
    d, n, m = operands
    return B.WHILE_LOWER, [d, n, m, kw["esize"] // 8, kw["width"], kw["unsigned"]]


# ---- loads and stores -------------------------------------------------------------------------------------

def _contiguous(body):
    def lowering(operands, kw, svl, target):
        t, g, (n, k) = operands
        msize, esize = kw["msize"], kw["esize"]
        if kw["mode"] == "imm":  # [Xn, #imm, MUL VL]: a constant offset
            return body, [t, g, n, k * (svl // esize) * (msize // 8), 0, msize // 8, esize // 8]
        return body, [t, g, n, k, 1, msize // 8, esize // 8]  # [Xn, Xm, LSL #log2(mbytes)]
    return lowering


def _tile(body):
    def lowering(operands, kw, svl, target):
        (tile, vertical, s, offset), g, (n, m) = operands
        return body, [tile, vertical, s, offset, g, n, m, kw["esize"] // 8]
    return lowering


def _za_vector(body):
    def lowering(operands, kw, svl, target):
        (v, offset), (n, _) = operands
        return body, [v, offset, n]
    return lowering


def _whole_z(body):
    def lowering(operands, kw, svl, target):
        t, (n, imm) = operands
        return body, [t, n, imm * (svl // 8)]
    return lowering


def _multi(body):
    def lowering(operands, kw, svl, target):
        registers, g, (n, k) = operands
        registers = list(registers)
        return body, [len(registers)] + registers + [0] * (4 - len(registers)) + [
            g, n, k, 0 if kw["mode"] == "imm" else 1, kw["esize"] // 8, (svl // 2 - 1).bit_length()]
    return lowering


LOWERINGS = {
    ("scalar", "move_wide"): _move_wide,
    ("scalar", "add_sub_imm"): _add_sub_imm,
    ("scalar", "add_sub_shifted"): _add_sub_shifted,
    ("scalar", "add_sub_extended"): _add_sub_extended,
    ("scalar", "logical_imm"): _logical_imm,
    ("scalar", "logical_shifted"): _logical_shifted,
    ("scalar", "bitfield_move"): _bitfield_move,
    ("scalar", "multiply_add"): _multiply_add,
    ("base_branch", "b"): _b,
    ("base_branch", "b_cond"): _b_cond,
    ("base_branch", "compare_branch"): _compare_branch,
    ("base_branch", "test_branch"): _test_branch,
    ("predicates_and_counts", "addvl"): _add_vector_lengths(8, "sve"),
    ("sve_data", "addpl"): _add_vector_lengths(64, "sve"),
    ("predicates_and_counts", "addsvl"): _add_vector_lengths(8, "none"),
    ("predicates_and_counts", "addspl"): _add_vector_lengths(64, "none"),
    ("sve_data", "rdvl"): _read_vector_lengths(8, "sve"),
    ("predicates_and_counts", "rdsvl"): _read_vector_lengths(8, "none"),
    ("predicates_and_counts", "cnt"): _cnt,
    ("sve_data", "inc_scalar"): _inc_scalar,
    ("predicates_and_counts", "whilelt"): _whilelt,
    ("predicates_and_counts", "ptrue"): _ptrue,
    ("vector_memory", "ld1_z"): _contiguous(B.LOAD_CONTIGUOUS),
    ("vector_memory", "st1_z"): _contiguous(B.STORE_CONTIGUOUS),
    ("vector_memory", "ld1_tile"): _tile(B.LOAD_TILE_SLICE),
    ("vector_memory", "st1_tile"): _tile(B.STORE_TILE_SLICE),
    ("vector_memory", "ldr_z"): _whole_z(B.LOAD_Z),
    ("vector_memory", "str_z"): _whole_z(B.STORE_Z),
    ("za_moves", "ldr_za"): _za_vector(B.LOAD_ZA_VECTOR),
    ("sve_counters", "ld1_multi"): _multi(B.LOAD_MULTI),
    ("sve_counters", "st1_multi"): _multi(B.STORE_MULTI),
    ("za_moves", "str_za"): _za_vector(B.STORE_ZA_VECTOR),
}


# ---- the integer dots and outer products (forms made from a shape) -------------------------------------------

SECOND = {"single": 0, "multiple": 1, "indexed": 2}


def _dot(shape, operands, config):
    if shape.vertical:
        return None
    (v, offset), n, m = operands
    zm, index = m if shape.second == "indexed" else (m, 0)
    return B.DOT, [v, offset, n, zm, index, shape.esize // 8, shape.ways, shape.signed1, shape.signed2,
                   shape.nreg, SECOND[shape.second]]


def _outer(shape, operands, config):
    da, a, b, n, m = operands
    return B.OUTER_PRODUCT, [da, a, b, n, m, shape.esize // 8, shape.ways, shape.signed1, shape.signed2,
                             shape.subtract]


SHAPED = {DotShape: _dot, OuterShape: _outer}


def _signed64(value: int) -> int:
    """A 64-bit pattern as the int64 the operand table holds."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value
