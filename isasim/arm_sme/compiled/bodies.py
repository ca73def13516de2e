"""The compiled bodies: each follows the Python semantics of its family (isasim/arm_sme/semantics) on the
state's arrays, after checking everything that could make it fault or that it leaves to Python.

The registers are one uint64 array R: X0-X30 in R[0..30], SP in R[31], NZCV (bits 31:28) in R[32].
Every body returns True when it ran, False to hand the instruction back unexecuted (nothing written).
All register arithmetic is in uint64, which wraps modulo 2^64 as the ASL's bits(64) do; numba turns
mixed signed and unsigned integer arithmetic into floating point, so every constant is made uint64
first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .body_numbers import (  # noqa: F401  (BODY_NAMES: for the tests)
    ADD_CONSTANT, ADD_SUB_EXTENDED, ADD_SUB_IMM, ADD_SUB_SHIFTED, BITFIELD_MOVE, BODY_NAMES, BRANCH, BRANCH_COND,
    CHECK_NONE, CHECK_SM, CHECK_SM_ZA, CHECK_SVE, CHECK_ZA, COMPARE_BRANCH, DOT, LOAD_CONTIGUOUS, LOAD_MULTI,
    LOAD_TILE_SLICE, LOAD_Z, LOAD_ZA_VECTOR, LOGICAL_IMM, LOGICAL_SHIFTED, MOVE_WIDE, MULTIPLY_ADD, NONE,
    OUTER_PRODUCT, SET_CONSTANT, SET_PREDICATE, STORE_CONTIGUOUS, STORE_MULTI, STORE_TILE_SLICE, STORE_Z,
    STORE_ZA_VECTOR, TARGET_ELSEWHERE, TARGET_END, TEST_BRANCH, WHILE_LOWER)

SP = 31
NZCV = 32
U0 = np.uint64(0)
U1 = np.uint64(1)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
W = np.uint64(0xFFFFFFFF)


@njit(cache=True)
def ones(n):
    if n >= 64:
        return ALL
    return (U1 << np.uint64(n)) - U1


@njit(cache=True)
def read_x(R, n):
    """X[n]: register 31 reads as zero (XZR)."""
    if n == 31:
        return U0
    return R[n]


@njit(cache=True)
def write_x(R, n, value):
    """X[n] = value: writes to register 31 (XZR) are discarded."""
    if n != 31:
        R[n] = value


@njit(cache=True)
def mode_allows(check, sm, za, sve):
    if check == CHECK_SVE:
        return sm or sve
    if check == CHECK_SM_ZA:
        return sm and za
    if check == CHECK_ZA:
        return za
    if check == CHECK_SM:
        return sm
    return True


@njit(cache=True)
def located(address, size, write, starts, sizes, writable):
    """(region, offset) of the access [address, address + size) in the one region holding all of it, or
    (-1, 0): unmapped, read-only for a write, or spread over regions (the Python path then does it, or raises
    the fault)."""
    for r in range(starts.size):
        offset = address - starts[r]  # wraps to a huge value below the region's start
        if address >= starts[r] and offset < sizes[r] and size <= sizes[r] - offset:
            if write and not writable[r]:
                return -1, 0
            return r, np.int64(offset)
    return -1, 0


# ---- the A64 base instructions ------------------------------------------------------------------------

@njit(cache=True)
def add_with_carry(R, a, b, carry, datasize, setflags):
    """AddWithCarry(a, b, carry) of datasize bits: the result, and PSTATE.NZCV set if setflags."""
    if datasize == 32:
        total = a + b + carry  # no wrap: both operands are below 2^32
        result = total & W
        c = total >> np.uint64(32)
        v = ((a ^ result) & (b ^ result)) >> np.uint64(31) & U1
        n = result >> np.uint64(31)
    else:
        partial = a + b
        result = partial + carry
        c = U1 if (partial < a) or (result < partial) else U0
        v = ((a ^ result) & (b ^ result)) >> np.uint64(63)
        n = result >> np.uint64(63)
    if setflags:
        z = U1 if result == U0 else U0
        R[NZCV] = (n << np.uint64(31)) | (z << np.uint64(30)) | (c << np.uint64(29)) | (v << np.uint64(28))
    return result


@njit(cache=True)
def shift_reg(value, shift_type, amount, datasize):
    """ShiftReg: LSL, LSR, ASR or ROR of a datasize-bit value (amount < datasize)."""
    mask = ones(datasize)
    value &= mask
    a = np.uint64(amount)
    if amount == 0:
        return value
    if shift_type == 0:
        return (value << a) & mask
    if shift_type == 1:
        return value >> a
    if shift_type == 2:
        if datasize == 32:
            signed = np.int64(np.int32(np.uint32(value)))
        else:
            signed = np.int64(value)
        return np.uint64(signed >> np.int64(amount)) & mask
    return ((value >> a) | (value << np.uint64(datasize - amount))) & mask


@njit(cache=True)
def extend_reg(value, extend_type, shift, datasize):
    """ExtendReg: UXTB ... SXTX (0-7) of a value, shifted left by ``shift``."""
    mask = ones(datasize)
    value &= mask
    length = 8 << (extend_type & 3)
    if length > datasize - shift:
        length = datasize - shift
    low = value & ones(length)
    if extend_type >= 4 and length < 64 and (low >> np.uint64(length - 1)) & U1:
        low = (low | ~ones(length)) & mask
    return (low << np.uint64(shift)) & mask


@njit(cache=True)
def set_logical_flags(R, result, datasize):
    n = (result >> np.uint64(datasize - 1)) & U1
    z = U1 if result == U0 else U0
    R[NZCV] = (n << np.uint64(31)) | (z << np.uint64(30))


@njit(cache=True)
def logical(op, a, b):
    if op == 0:
        return a & b
    if op == 1:
        return a | b
    return a ^ b


@njit(cache=True)
def condition_holds(cond, nzcv):
    n = (nzcv >> np.uint64(31)) & U1
    z = (nzcv >> np.uint64(30)) & U1
    c = (nzcv >> np.uint64(29)) & U1
    v = (nzcv >> np.uint64(28)) & U1
    base = cond >> 1
    if base == 0:
        result = z == U1
    elif base == 1:
        result = c == U1
    elif base == 2:
        result = n == U1
    elif base == 3:
        result = v == U1
    elif base == 4:
        result = c == U1 and z == U0
    elif base == 5:
        result = n == v
    elif base == 6:
        result = n == v and z == U0
    else:
        result = True
    if (cond & 1) and cond != 15:
        result = not result
    return result


@njit(cache=True)
def scalar(body, a, R):
    """The A64 data-processing bodies (never hand back: no fault is possible)."""
    if body == MOVE_WIDE:
        d, imm16, pos, datasize, opcode = a[0], a[1], a[2], a[3], a[4]
        mask = ones(datasize)
        result = read_x(R, d) & mask if opcode == 2 else U0
        result = (result & ~(np.uint64(0xFFFF) << np.uint64(pos))) | (np.uint64(imm16) << np.uint64(pos))
        if opcode == 1:
            result = ~result & mask
        write_x(R, d, result)
    elif body == ADD_SUB_IMM or body == ADD_SUB_SHIFTED or body == ADD_SUB_EXTENDED:
        d, n = a[0], a[1]
        if body == ADD_SUB_IMM:
            datasize, sub_op, setflags = a[3], a[4], a[5]
            operand1 = R[n]  # SP when n is 31
            operand2 = np.uint64(a[2])
        elif body == ADD_SUB_SHIFTED:
            datasize, sub_op, setflags = a[5], a[6], a[7]
            operand1 = read_x(R, n)
            operand2 = shift_reg(read_x(R, a[2]), a[3], a[4], datasize)
        else:
            datasize, sub_op, setflags = a[5], a[6], a[7]
            operand1 = R[n]
            operand2 = extend_reg(read_x(R, a[2]), a[3], a[4], datasize)
        mask = ones(datasize)
        operand1 &= mask
        carry = U0
        if sub_op:
            operand2 = ~operand2 & mask
            carry = U1
        result = add_with_carry(R, operand1, operand2, carry, datasize, setflags)
        if d == 31 and body != ADD_SUB_SHIFTED and not setflags:
            R[SP] = result
        else:
            write_x(R, d, result)
    elif body == LOGICAL_IMM:
        d, n, datasize, op, setflags = a[0], a[1], a[3], a[4], a[5]
        result = logical(op, read_x(R, n) & ones(datasize), np.uint64(a[2]))
        if setflags:
            set_logical_flags(R, result, datasize)
        if d == 31 and not setflags:
            R[SP] = result
        else:
            write_x(R, d, result)
    elif body == LOGICAL_SHIFTED:
        d, n, m, datasize, op, setflags, invert = a[0], a[1], a[2], a[5], a[6], a[7], a[8]
        mask = ones(datasize)
        operand2 = shift_reg(read_x(R, m), a[3], a[4], datasize)
        if invert:
            operand2 = ~operand2 & mask
        result = logical(op, read_x(R, n) & mask, operand2)
        if setflags:
            set_logical_flags(R, result, datasize)
        write_x(R, d, result)
    elif body == BITFIELD_MOVE:
        d, n, immr, imms, datasize, signed = a[0], a[1], a[2], a[3], a[4], a[5]
        wmask, tmask = np.uint64(a[6]), np.uint64(a[7])
        mask = ones(datasize)
        src = read_x(R, n) & mask
        if immr == 0:
            rotated = src
        else:
            rotated = ((src >> np.uint64(immr)) | (src << np.uint64(datasize - immr))) & mask
        bot = rotated & wmask
        top = mask if signed and (src >> np.uint64(imms)) & U1 else U0
        write_x(R, d, (top & ~tmask & mask) | (bot & tmask))
    elif body == MULTIPLY_ADD:
        d, n, m, acc, datasize, sub_op = a[0], a[1], a[2], a[3], a[4], a[5]
        mask = ones(datasize)
        product = (read_x(R, n) & mask) * (read_x(R, m) & mask)
        addend = read_x(R, acc) & mask
        write_x(R, d, ((addend - product) if sub_op else (addend + product)) & mask)


# ---- predicates --------------------------------------------------------------------------------------

@njit(cache=True)
def active(P, g, element, ebytes):
    """ActivePredicateElement(P[g], element, esize): the element's lowest predicate bit."""
    bit = element * ebytes
    return (P[g, bit >> 3] >> (bit & 7)) & 1 == 1


@njit(cache=True)
def set_predicate_count(P, d, count, ebytes, elements):
    """P[d] with elements 0..count-1 active (their lowest bit set) and every other bit clear."""
    for i in range(P.shape[1]):
        P[d, i] = 0
    for e in range(min(count, elements)):
        bit = e * ebytes
        P[d, bit >> 3] |= np.uint8(1 << (bit & 7))


# ---- memory -------------------------------------------------------------------------------------------

@njit(cache=True)
def active_span(P, g, elements, ebytes):
    """The first and last active elements of P[g] (first = -1: none)."""
    first, last = -1, -1
    for e in range(elements):
        if active(P, g, e, ebytes):
            if first < 0:
                first = e
            last = e
    return first, last


@njit(cache=True)
def all_active(P, g, ebytes, elements):
    """Whether every element of P[g] at ebytes is active (its lowest bit set), byte by byte."""
    if ebytes >= 8:
        step = ebytes // 8
        for i in range(0, elements * step, step):
            if P[g, i] & 1 == 0:
                return False
        return True
    pattern = 0xFF if ebytes == 1 else (0x55 if ebytes == 2 else 0x11)
    for i in range(P.shape[1]):
        if P[g, i] & pattern != pattern:
            return False
    return True


@njit(cache=True)
def load_elements(dest, P, g, address, elements, mbytes, ebytes, mem, starts, sizes, writable):
    """dest (elements x ebytes bytes) = the active elements of memory at address, each mbytes
    zero-extended, inactive ones zero.  False: the active span is not in one region (Python reads it)."""
    if mbytes == ebytes and all_active(P, g, ebytes, elements):  # the common case: one copy
        size = elements * mbytes
        r, at = located(address, np.uint64(size), False, starts, sizes, writable)
        if r < 0:
            return False
        dest[:size] = mem[r][at:at + size]
        return True
    first, last = active_span(P, g, elements, ebytes)
    if first < 0:
        dest[:] = 0
        return True
    span_start = address + np.uint64(first * mbytes)
    r, at = located(span_start, np.uint64((last - first + 1) * mbytes), False, starts, sizes, writable)
    if r < 0:
        return False
    data = mem[r]
    base = at - first * mbytes
    for e in range(elements):
        at = e * ebytes
        if active(P, g, e, ebytes) and first <= e <= last:
            source = base + e * mbytes
            for k in range(mbytes):
                dest[at + k] = data[source + k]
            for k in range(mbytes, ebytes):
                dest[at + k] = 0
        else:
            for k in range(ebytes):
                dest[at + k] = 0
    return True


@njit(cache=True)
def store_elements(source, P, g, address, elements, mbytes, ebytes, mem, starts, sizes, writable):
    """Memory at address = the low mbytes of each active element of source; False (nothing written):
    the active span is not in one writable region."""
    if mbytes == ebytes and all_active(P, g, ebytes, elements):
        size = elements * mbytes
        r, at = located(address, np.uint64(size), True, starts, sizes, writable)
        if r < 0:
            return False
        mem[r][at:at + size] = source[:size]
        return True
    first, last = active_span(P, g, elements, ebytes)
    if first < 0:
        return True
    span_start = address + np.uint64(first * mbytes)
    r, at = located(span_start, np.uint64((last - first + 1) * mbytes), True, starts, sizes, writable)
    if r < 0:
        return False
    data = mem[r]
    base = at - first * mbytes
    for e in range(first, last + 1):
        if active(P, g, e, ebytes):
            target = base + e * mbytes
            for k in range(mbytes):
                data[target + k] = source[e * ebytes + k]
    return True


@njit(cache=True)
def memory_body(body, a, R, Z, P, ZA, svlb, mem, starts, sizes, writable, scratch):
    """The loads and stores; False hands the instruction back."""
    if body == LOAD_CONTIGUOUS or body == STORE_CONTIGUOUS:
        t, g, n, k, mode, mbytes, ebytes = a[0], a[1], a[2], a[3], a[4], a[5], a[6]
        offset = np.uint64(k) if mode == 0 else read_x(R, k) * np.uint64(mbytes)
        address = R[n] + offset
        elements = svlb // ebytes
        if body == LOAD_CONTIGUOUS:
            buffer = scratch[:svlb]
            if not load_elements(buffer, P, g, address, elements, mbytes, ebytes, mem, starts, sizes, writable):
                return False
            Z[t % 32, :] = buffer
            return True
        return store_elements(Z[t % 32], P, g, address, elements, mbytes, ebytes, mem, starts, sizes, writable)
    if body == LOAD_TILE_SLICE or body == STORE_TILE_SLICE:
        tile, vertical, s, offs, g, n, m, ebytes = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
        dim = svlb // ebytes
        index = np.int64(((R[s] if s != 31 else U0) & W) + np.uint64(offs)) % dim
        address = R[n] + read_x(R, m) * np.uint64(ebytes)
        buffer = scratch[:svlb]
        if body == LOAD_TILE_SLICE:
            if not load_elements(buffer, P, g, address, dim, ebytes, ebytes, mem, starts, sizes, writable):
                return False
            if vertical:
                for e in range(dim):
                    row = e * ebytes + tile
                    for k in range(ebytes):
                        ZA[row, index * ebytes + k] = buffer[e * ebytes + k]
            else:
                ZA[index * ebytes + tile, :] = buffer
            return True
        if vertical:
            for e in range(dim):
                row = e * ebytes + tile
                for k in range(ebytes):
                    buffer[e * ebytes + k] = ZA[row, index * ebytes + k]
        else:
            buffer[:] = ZA[index * ebytes + tile, :]
        return store_elements(buffer, P, g, address, dim, ebytes, ebytes, mem, starts, sizes, writable)
    if body == LOAD_Z or body == STORE_Z or body == LOAD_ZA_VECTOR or body == STORE_ZA_VECTOR:
        if body == LOAD_Z or body == STORE_Z:
            address = R[a[1]] + np.uint64(a[2])
        else:
            address = R[a[2]] + np.uint64(a[1] * svlb)
        write = body == STORE_Z or body == STORE_ZA_VECTOR
        r, at = located(address, np.uint64(svlb), write, starts, sizes, writable)
        if r < 0:
            return False
        data = mem[r]
        if body == LOAD_Z:
            Z[a[0] % 32, :] = data[at:at + svlb]
        elif body == STORE_Z:
            data[at:at + svlb] = Z[a[0] % 32]
        else:
            v = a[0]
            vec = np.int64(((R[v] if v != 31 else U0) & W) + np.uint64(a[1])) % svlb
            if body == LOAD_ZA_VECTOR:
                ZA[vec, :] = data[at:at + svlb]
            else:
                data[at:at + svlb] = ZA[vec]
        return True
    return False


@njit(cache=True)
def counter_all_active(P, g, ebytes, nreg, svlb, maxbit):
    """Whether CounterToPredicate(P[g]<15:0>, PL * nreg) (sve_counters.counter_to_predicate) makes every element
    of ebytes active: the only case the multi-vector bodies do (any other hands back)."""
    pred = np.int64(P[g, 0]) | (np.int64(P[g, 1]) << 8)
    if pred & 0xF == 0:
        return False
    shift = 0
    while (pred >> shift) & 1 == 0:
        shift += 1
    stored = 1 << shift  # the counter's element size in bytes
    if ebytes < stored:  # read at a smaller element, some elements fall between the counter's
        return False
    count = (pred >> (shift + 1)) & ((1 << (maxbit - shift)) - 1)
    elements = nreg * svlb // stored
    if (pred >> 15) & 1:
        return count == 0
    return count >= elements


@njit(cache=True)
def multi_body(body, a, R, Z, P, svlb, mem, starts, sizes, writable):
    """LD1/ST1 of 2 or 4 vectors under a predicate-as-counter, all elements active: one copy."""
    nreg, g, n, k, mode, ebytes, maxbit = a[0], a[5], a[6], a[7], a[8], a[9], a[10]
    if not counter_all_active(P, g, ebytes, nreg, svlb, maxbit):
        return False
    offset = np.uint64(k * svlb) if mode == 0 else read_x(R, k) * np.uint64(ebytes)
    address = R[n] + offset
    size = nreg * svlb
    r, at = located(address, np.uint64(size), body == STORE_MULTI, starts, sizes, writable)
    if r < 0:
        return False
    data = mem[r][at:at + size]
    for i in range(nreg):
        if body == LOAD_MULTI:
            Z[a[1 + i] % 32, :] = data[i * svlb:(i + 1) * svlb]
        else:
            data[i * svlb:(i + 1) * svlb] = Z[a[1 + i] % 32]
    return True


# ---- the integer dots and outer products ----------------------------------------------------------------

@njit(cache=True)
def source_elements(out, Z, reg, sbytes, signed, count):
    """out[0..count) = the first count sbytes-wide elements of Z[reg] as integers (1 or 2 bytes)."""
    row = Z[reg % 32]
    if sbytes == 1 and signed:
        signed_bytes = row.view(np.int8)
        for i in range(count):
            out[i] = signed_bytes[i]
    elif sbytes == 1:
        for i in range(count):
            out[i] = row[i]
    elif signed:
        signed_halves = row.view(np.int16)
        for i in range(count):
            out[i] = signed_halves[i]
    else:
        halves = row.view(np.uint16)
        for i in range(count):
            out[i] = halves[i]


@njit(cache=True)
def add_to_vector(ZA, row, sums, elements, ebytes, subtract):
    """Elem[ZAvector[row], e, esize] += sums[e] (MOPS: -=) for every e, modulo 2^esize."""
    if ebytes == 4:
        words = ZA[row].view(np.uint32)
        for e in range(elements):
            delta = np.uint32(sums[e] & 0xFFFFFFFF)
            words[e] = words[e] - delta if subtract else words[e] + delta
    else:
        doubles = ZA[row].view(np.uint64)
        for e in range(elements):
            delta = np.uint64(sums[e])
            doubles[e] = doubles[e] - delta if subtract else doubles[e] + delta


@njit(cache=True)
def dot(a, R, Z, ZA, svlb, operand1, operand2, sums):
    """za_dot (integer_dots.py), horizontal: ZA vector r of the group gains, per element e, the sum over
    i of Zn+r's element ways*e + i times Zm's (single: Zm; multiple: Zm+r; indexed: the element group
    ``index`` of e's 128-bit segment)."""
    v, offset, n, m, index, ebytes, ways, signed1, signed2, nreg, second = (
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10])
    sbytes = ebytes // ways
    elements = svlb // ebytes
    narrow = elements * ways
    vstride = svlb // nreg
    vec = np.int64(((R[v] if v != 31 else U0) & W) + np.uint64(offset)) % vstride
    per_segment = 16 // ebytes
    for r in range(nreg):
        source_elements(operand1, Z, n + r, sbytes, signed1, narrow)
        source_elements(operand2, Z, m + r if second == 1 else m, sbytes, signed2, narrow)
        for e in range(elements):
            s = e - e % per_segment + index if second == 2 else e
            total = np.int64(0)
            for i in range(ways):
                total += operand1[ways * e + i] * operand2[ways * s + i]
            sums[e] = total
        add_to_vector(ZA, vec + r * vstride, sums, elements, ebytes, False)


@njit(cache=True)
def outer_product(a, Z, P, ZA, svlb, operand1, operand2, sums):
    """za_outer_product (integer_outer_products.py): tile element (row, col) gains (MOPS: loses) the sum
    over k of Zn's element ways*row + k times Zm's element ways*col + k, an inactive element as 0."""
    da, pa, pb, n, m, ebytes, ways, signed1, signed2, subtract = (
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9])
    sbytes = ebytes // ways
    dim = svlb // ebytes
    narrow = dim * ways
    source_elements(operand1, Z, n, sbytes, signed1, narrow)
    source_elements(operand2, Z, m, sbytes, signed2, narrow)
    for i in range(narrow):
        if not active(P, pa, i, sbytes):
            operand1[i] = 0
        if not active(P, pb, i, sbytes):
            operand2[i] = 0
    for row in range(dim):
        vector = row * ebytes + da
        for col in range(dim):
            total = np.int64(0)
            for k in range(ways):
                total += operand1[ways * row + k] * operand2[ways * col + k]
            sums[col] = total
        add_to_vector(ZA, vector, sums, dim, ebytes, subtract)


# ---- the loop ----------------------------------------------------------------------------------------------

@njit(cache=True)
def run_loop(bodies, operands, R, Z, P, ZA, sm, za, sve, mem, starts, sizes, writable, index, budget, count,
             scratch, operand1, operand2, sums):
    """Execute from instruction ``index`` for at most ``budget`` instructions.  Returns (index, steps,
    status): status 0 ENDED (index == count: the end of the code), 1 HANDBACK (the instruction at
    index is for Python, unexecuted), 2 BUDGET."""
    svlb = Z.shape[1]
    steps = 0
    while True:
        if index == count:
            return index, steps, 0
        if steps >= budget:
            return index, steps, 2
        body = bodies[index]
        a = operands[index]
        following = index + 1
        if body == NONE:
            return index, steps, 1
        if body <= MULTIPLY_ADD:
            scalar(body, a, R)
        elif body <= TEST_BRANCH:
            if body == BRANCH:
                taken, target = True, a[0]
            elif body == BRANCH_COND:
                taken, target = condition_holds(a[1], R[NZCV]), a[0]
            elif body == COMPARE_BRANCH:
                value = read_x(R, a[0]) & ones(a[2])
                taken, target = (value != U0) == (a[3] != 0), a[1]
            else:
                taken, target = ((read_x(R, a[0]) >> np.uint64(a[1])) & U1) == np.uint64(a[3]), a[2]
            if taken:
                if target == TARGET_ELSEWHERE:
                    return index, steps, 1  # Python takes the branch and reports the target
                following = count if target == TARGET_END else target
        elif body == ADD_CONSTANT:
            if not mode_allows(a[3], sm, za, sve):
                return index, steps, 1
            if a[4]:
                R[a[0]] = R[a[1]] + np.uint64(a[2])  # X[d|SP] = X[n|SP] + constant
            else:
                write_x(R, a[0], read_x(R, a[1]) + np.uint64(a[2]))
        elif body == SET_CONSTANT:
            if not mode_allows(a[2], sm, za, sve):
                return index, steps, 1
            write_x(R, a[0], np.uint64(a[1]))
        elif body == WHILE_LOWER or body == SET_PREDICATE:
            if not mode_allows(CHECK_SVE, sm, za, sve):
                return index, steps, 1
            if body == SET_PREDICATE:
                set_predicate_count(P, a[0], a[1], a[2], svlb // a[2])
            else:
                d, n, m, ebytes, width, unsigned = a[0], a[1], a[2], a[3], a[4], a[5]
                elements = svlb // ebytes
                mask = ones(width)
                first_value, bound = read_x(R, n) & mask, read_x(R, m) & mask
                if not unsigned:  # compare as signed: flip the sign bits, then compare unsigned
                    sign = U1 << np.uint64(width - 1)
                    first_value ^= sign
                    bound ^= sign
                if bound <= first_value:
                    active_count = 0
                else:
                    gap = bound - first_value
                    active_count = elements if gap >= np.uint64(elements) else np.int64(gap)
                set_predicate_count(P, d, active_count, ebytes, elements)
                n_flag = U1 if active_count > 0 else U0
                z_flag = U1 if active_count == 0 else U0
                c_flag = U1 if active_count < elements else U0
                R[NZCV] = (n_flag << np.uint64(31)) | (z_flag << np.uint64(30)) | (c_flag << np.uint64(29))
        elif body <= STORE_ZA_VECTOR:
            check = CHECK_SVE if body <= STORE_CONTIGUOUS or body == LOAD_Z or body == STORE_Z else (
                CHECK_SM_ZA if body <= STORE_TILE_SLICE else CHECK_ZA)
            if not mode_allows(check, sm, za, sve):
                return index, steps, 1
            if not memory_body(body, a, R, Z, P, ZA, svlb, mem, starts, sizes, writable, scratch):
                return index, steps, 1
        elif body == LOAD_MULTI or body == STORE_MULTI:
            if not sm:  # CheckStreamingSVEEnabled
                return index, steps, 1
            if not multi_body(body, a, R, Z, P, svlb, mem, starts, sizes, writable):
                return index, steps, 1
        elif body == DOT or body == OUTER_PRODUCT:
            if not (sm and za):
                return index, steps, 1
            if body == DOT:
                dot(a, R, Z, ZA, svlb, operand1, operand2, sums)
            else:
                outer_product(a, Z, P, ZA, svlb, operand1, operand2, sums)
        else:
            return index, steps, 1
        steps += 1
        index = following
