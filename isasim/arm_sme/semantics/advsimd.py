"""The AdvSIMD (NEON) integer instructions clang emits in the ordinary C helpers around SME kernels, as the
Arm ARM's ASL writes them: V[n] is the low 128 bits of Z[n]; an instruction reads ``datasize`` (64 or 128)
bits of its sources and writes its result zero-extended, so a write clears the bits of Z[d] above the
datasize (the Arm ARM: outside streaming mode a write to V clears Z's bits above 128).  In streaming mode
these are illegal on a core without FEAT_SME_FA64 (isasim's): UNDEFINED, as QEMU raises SIGILL (UMOV and SMOV of
element 0 aside: legal there, measured on QEMU).

``esize`` is the element size in bits, ``datasize`` the vector's (64: .8b .4h .2s; 128: .16b .8h .4s .2d).
"""

from __future__ import annotations

import numpy as np

from ..faults import undefined


def CheckFPAdvSIMDEnabled(cpu) -> None:
    """if PSTATE.SM == '1' && !IsFullA64Enabled() then SMEAccessTrap(SMEExceptionType_Streaming)."""
    if cpu.state.sm:
        raise undefined("PSTATE.SM is 1: an AdvSIMD vector instruction is illegal in streaming mode on a core "
                        "without FEAT_SME_FA64 (SMSTOP SM first, or use the SVE form)")


def V(cpu, n: int, datasize: int = 128) -> int:
    """V[n, datasize]: the low datasize bits of Z[n], as an unsigned integer."""
    return int.from_bytes(cpu.Z(n)[:datasize // 8].tobytes(), "little")


def set_V(cpu, d: int, value: int, datasize: int = 128) -> None:
    """V[d, datasize] = value: the rest of Z[d] (to the vector length) zeroed."""
    vector = np.zeros(cpu.svlb, dtype=np.uint8)
    vector[:datasize // 8] = np.frombuffer((value & ((1 << datasize) - 1)).to_bytes(datasize // 8, "little"),
                                           dtype=np.uint8)
    cpu.set_Z(d, vector)


def elements(value: int, esize: int, count: int, signed: bool = False) -> list[int]:
    mask = (1 << esize) - 1
    out = [(value >> (i * esize)) & mask for i in range(count)]
    if signed:
        out = [e - (1 << esize) if e >> (esize - 1) else e for e in out]
    return out


def pack(values, esize: int) -> int:
    mask = (1 << esize) - 1
    result = 0
    for i, e in enumerate(values):
        result |= (e & mask) << (i * esize)
    return result


def _sources(cpu, n, m, esize, datasize, signed=False):
    count = datasize // esize
    return (elements(V(cpu, n, datasize), esize, count, signed), elements(V(cpu, m, datasize), esize, count, signed))


# ---- three registers of the same type ---------------------------------------------------------------------

def add_sub(cpu, d, n, m, *, esize, datasize, sub_op):
    """CheckFPAdvSIMDEnabled64();
for e = 0 to elements-1
    element1 = Elem[operand1, e, esize]; element2 = Elem[operand2, e, esize];
    if sub_op then Elem[result, e, esize] = element1 - element2;
    else Elem[result, e, esize] = element1 + element2;
V[d, datasize] = result;    // ADD, SUB (vector)"""
    CheckFPAdvSIMDEnabled(cpu)
    a, b = _sources(cpu, n, m, esize, datasize)
    set_V(cpu, d, pack([x - y if sub_op else x + y for x, y in zip(a, b)], esize), datasize)


def multiply(cpu, d, n, m, *, esize, datasize, accumulate, sub_op):
    """product = (UInt(element1) * UInt(element2))<esize-1:0>;
if accumulate then Elem[result, e, esize] = sub_op ? Elem[operand3, e] - product : Elem[operand3, e] + product;
else Elem[result, e, esize] = product;
V[d, datasize] = result;    // MUL, MLA, MLS (vector)"""
    CheckFPAdvSIMDEnabled(cpu)
    a, b = _sources(cpu, n, m, esize, datasize)
    acc = elements(V(cpu, d, datasize), esize, datasize // esize)
    products = [x * y for x, y in zip(a, b)]
    if accumulate:
        products = [c - p if sub_op else c + p for c, p in zip(acc, products)]
    set_V(cpu, d, pack(products, esize), datasize)


def max_min(cpu, d, n, m, *, esize, datasize, unsigned, minimum, pair=False):
    """element1 = Int(Elem[concat or operand1, 2*e or e], unsigned); element2 = ...;
maxmin = if minimum then Min(element1, element2) else Max(element1, element2);
Elem[result, e, esize] = maxmin<esize-1:0>;    // SMAX, SMIN, UMAX, UMIN and the pairwise SMAXP ... UMINP"""
    CheckFPAdvSIMDEnabled(cpu)
    a, b = _sources(cpu, n, m, esize, datasize, signed=not unsigned)
    if pair:
        both = a + b
        a, b = both[0::2], both[1::2]
    set_V(cpu, d, pack([min(x, y) if minimum else max(x, y) for x, y in zip(a, b)], esize), datasize)


def add_pairwise(cpu, d, n, m, *, esize, datasize):
    """bits(2*datasize) concat = operand2:operand1;
for e = 0 to elements-1
    Elem[result, e, esize] = Elem[concat, 2*e, esize] + Elem[concat, (2*e)+1, esize];
V[d, datasize] = result;    // ADDP (vector)"""
    CheckFPAdvSIMDEnabled(cpu)
    a, b = _sources(cpu, n, m, esize, datasize)
    both = a + b
    set_V(cpu, d, pack([x + y for x, y in zip(both[0::2], both[1::2])], esize), datasize)


def compare(cpu, d, n, m, *, esize, datasize, cmp):
    """element1 = Int(Elem[operand1, e, esize], unsigned); element2 = (zero ? 0 : Int(Elem[operand2, e, esize], unsigned));
case comparison of  GT: test_passed = element1 > element2;  GE: >=;  EQ: ==;  TST: (element1 AND element2) != 0;
Elem[result, e, esize] = if test_passed then Ones(esize) else Zeros(esize);    // CMGT CMGE CMHI CMHS CMEQ CMTST"""
    CheckFPAdvSIMDEnabled(cpu)
    signed = cmp in ("gt", "ge", "lt", "le")
    count = datasize // esize
    a = elements(V(cpu, n, datasize), esize, count, signed)
    b = [0] * count if m is None else elements(V(cpu, m, datasize), esize, count, signed)
    tests = {"gt": lambda x, y: x > y, "ge": lambda x, y: x >= y, "hi": lambda x, y: x > y,
             "hs": lambda x, y: x >= y, "eq": lambda x, y: x == y, "tst": lambda x, y: (x & y) != 0,
             "lt": lambda x, y: x < y, "le": lambda x, y: x <= y}[cmp]
    set_V(cpu, d, pack([-1 if tests(x, y) else 0 for x, y in zip(a, b)], esize), datasize)


def logical(cpu, d, n, m, *, datasize, op):
    """operand1 = V[n]; operand2 = V[m]; operand3 = V[d] (BSL, BIT, BIF);
AND: result = operand1 AND operand2;  BIC: operand1 AND NOT(operand2);  ORR: operand1 OR operand2;
ORN: operand1 OR NOT(operand2);  EOR: operand1 EOR operand2;
BSL: operand2 EOR ((operand2 EOR operand1) AND operand3);  BIT: operand3 EOR ((operand3 EOR operand1) AND operand2);
BIF: operand3 EOR ((operand3 EOR operand1) AND NOT(operand2));
V[d, datasize] = result;"""
    CheckFPAdvSIMDEnabled(cpu)
    ones = (1 << datasize) - 1
    a, b, c = V(cpu, n, datasize), V(cpu, m, datasize), V(cpu, d, datasize)
    result = {"and": lambda: a & b, "bic": lambda: a & ~b, "orr": lambda: a | b, "orn": lambda: a | ~b,
              "eor": lambda: a ^ b, "bsl": lambda: b ^ ((b ^ a) & c), "bit": lambda: c ^ ((c ^ a) & b),
              "bif": lambda: c ^ ((c ^ a) & ~b)}[op]()
    set_V(cpu, d, result & ones, datasize)


# ---- three registers of different types (the long and wide forms) --------------------------------------------

def add_sub_long(cpu, d, n, m, *, esize, part, unsigned, sub_op, wide):
    """operand1 = if wide then V[n, 2*datasize] else Vpart[n, part];    // part 1: the upper half (the '2' forms)
operand2 = Vpart[m, part];
for e = 0 to elements-1
    element1 = Int(Elem[operand1, e, 2*esize] or Elem[operand1, e, esize], unsigned);
    element2 = Int(Elem[operand2, e, esize], unsigned);
    sum = if sub_op then element1 - element2 else element1 + element2;
    Elem[result, e, 2*esize] = sum<2*esize-1:0>;
V[d] = result;    // SADDL UADDL SSUBL USUBL SADDW UADDW SSUBW USUBW (and their '2' forms)"""
    CheckFPAdvSIMDEnabled(cpu)
    count = 64 // esize
    half = lambda r: (V(cpu, r) >> (64 * part)) & ((1 << 64) - 1)  # noqa: E731
    a = (elements(V(cpu, n), 2 * esize, count, not unsigned) if wide
         else elements(half(n), esize, count, not unsigned))
    b = elements(half(m), esize, count, not unsigned)
    set_V(cpu, d, pack([x - y if sub_op else x + y for x, y in zip(a, b)], 2 * esize))


def multiply_long(cpu, d, n, m, *, esize, part, unsigned, accumulate, sub_op):
    """operand1 = Vpart[n, part]; operand2 = Vpart[m, part]; operand3 = V[d, 2*datasize];
product = (element1 * element2)<2*esize-1:0>;    // elements Int(..., unsigned)
Elem[result, e, 2*esize] = accumulate ? (sub_op ? Elem[operand3] - product : Elem[operand3] + product) : product;
V[d] = result;    // SMULL UMULL SMLAL UMLAL SMLSL UMLSL (and '2')"""
    CheckFPAdvSIMDEnabled(cpu)
    count = 64 // esize
    half = lambda r: (V(cpu, r) >> (64 * part)) & ((1 << 64) - 1)  # noqa: E731
    a, b = elements(half(n), esize, count, not unsigned), elements(half(m), esize, count, not unsigned)
    products = [x * y for x, y in zip(a, b)]
    if accumulate:
        acc = elements(V(cpu, d), 2 * esize, count)
        products = [c - p if sub_op else c + p for c, p in zip(acc, products)]
    set_V(cpu, d, pack(products, 2 * esize))


# ---- two-register miscellaneous ------------------------------------------------------------------------------

def extract_narrow(cpu, d, n, *, esize, part, saturate, unsigned):
    """operand = V[n];    // 2*esize elements
for e = 0 to elements-1
    element = Int(Elem[operand, e, 2*esize], unsigned);
    if saturate then (Elem[result, e, esize], sat) = SatQ(element, esize, unsigned);
    else Elem[result, e, esize] = element<esize-1:0>;
Vpart[d, part] = result;    // XTN, SQXTN, UQXTN (XTN2 ...: the upper half, the lower kept)"""
    CheckFPAdvSIMDEnabled(cpu)
    count = 64 // esize
    source = elements(V(cpu, n), 2 * esize, count, signed=saturate and not unsigned)
    if saturate:
        low, high = (0, (1 << esize) - 1) if unsigned else (-(1 << (esize - 1)), (1 << (esize - 1)) - 1)
        source = [min(max(x, low), high) for x in source]
    result = pack(source, esize)
    if part:
        set_V(cpu, d, (V(cpu, d) & ((1 << 64) - 1)) | result << 64)
    else:
        set_V(cpu, d, result, 64)


def unary(cpu, d, n, *, esize, datasize, op):
    """element = SInt(Elem[operand, e, esize]);
NEG: element = -element;  ABS: element = Abs(element);  NOT: NOT(element);
Elem[result, e, esize] = element<esize-1:0>;    // NEG, ABS, NOT (MVN) (vector)"""
    CheckFPAdvSIMDEnabled(cpu)
    a = elements(V(cpu, n, datasize), esize, datasize // esize, signed=True)
    f = {"neg": lambda x: -x, "abs": abs, "not": lambda x: ~x}[op]
    set_V(cpu, d, pack([f(x) for x in a], esize), datasize)


# ---- across lanes, and ADDP (scalar) -------------------------------------------------------------------------

def reduce_add(cpu, d, n, *, esize, datasize, long, unsigned):
    """sum = 0; for e = 0 to elements-1: sum = sum + Int(Elem[operand, e, esize], unsigned);
V[d, long ? 2*esize : esize] = sum<...>;    // ADDV; SADDLV, UADDLV (the sum twice as wide)"""
    CheckFPAdvSIMDEnabled(cpu)
    total = sum(elements(V(cpu, n, datasize), esize, datasize // esize, signed=not unsigned))
    width = 2 * esize if long else esize
    set_V(cpu, d, total & ((1 << width) - 1), width)


def reduce_max_min(cpu, d, n, *, esize, datasize, unsigned, minimum):
    """maxmin = Int(Elem[operand, 0, esize], unsigned);
for e = 1 to elements-1: maxmin = if min then Min(maxmin, element) else Max(maxmin, element);
V[d, esize] = maxmin<esize-1:0>;    // SMAXV SMINV UMAXV UMINV"""
    CheckFPAdvSIMDEnabled(cpu)
    a = elements(V(cpu, n, datasize), esize, datasize // esize, signed=not unsigned)
    set_V(cpu, d, (min(a) if minimum else max(a)) & ((1 << esize) - 1), esize)


def add_pair_scalar(cpu, d, n):
    """operand = V[n, 128]; V[d, 64] = Elem[operand, 0, 64] + Elem[operand, 1, 64];    // ADDP (scalar)"""
    CheckFPAdvSIMDEnabled(cpu)
    a = elements(V(cpu, n), 64, 2)
    set_V(cpu, d, (a[0] + a[1]) & ((1 << 64) - 1), 64)


# ---- copies: DUP, INS, UMOV, SMOV ---------------------------------------------------------------------------

def dup_general(cpu, d, n, *, esize, datasize):
    """element = X[n, esize]; for e = 0 to elements-1: Elem[result, e, esize] = element; V[d, datasize] = result;"""
    CheckFPAdvSIMDEnabled(cpu)
    element = cpu.X(n) & ((1 << esize) - 1)
    set_V(cpu, d, pack([element] * (datasize // esize), esize), datasize)


def dup_element(cpu, d, source, *, esize, datasize):
    """element = Elem[V[n, 128], index, esize];
for e = 0 to elements-1: Elem[result, e, esize] = element;
V[d, datasize] = result;    // DUP (element), vector and scalar (MOV Sd, Vn.S[i])"""
    CheckFPAdvSIMDEnabled(cpu)
    n, index = source
    element = elements(V(cpu, n), esize, 128 // esize)[index]
    set_V(cpu, d, pack([element] * (datasize // esize), esize), datasize)


def ins_general(cpu, target, n, *, esize):
    """element = X[n, esize]; result = V[d, 128]; Elem[result, index, esize] = element; V[d, 128] = result;"""
    CheckFPAdvSIMDEnabled(cpu)
    d, index = target
    values = elements(V(cpu, d), esize, 128 // esize)
    values[index] = cpu.X(n)
    set_V(cpu, d, pack(values, esize))


def ins_element(cpu, target, source, *, esize):
    """operand = V[n, 128]; result = V[d, 128];
Elem[result, dst_index, esize] = Elem[operand, src_index, esize]; V[d, 128] = result;    // INS (element)"""
    CheckFPAdvSIMDEnabled(cpu)
    (d, di), (n, si) = target, source
    values = elements(V(cpu, d), esize, 128 // esize)
    values[di] = elements(V(cpu, n), esize, 128 // esize)[si]
    set_V(cpu, d, pack(values, esize))


def move_to_general(cpu, d, source, *, esize, datasize, signed):
    """if index != 0 then CheckFPAdvSIMDEnabled64();    // element 0 is legal in streaming mode, as FMOV is
element = Elem[V[n, 128], index, esize];
X[d, datasize] = if signed then SignExtend(element, datasize) else ZeroExtend(element, datasize);    // UMOV, SMOV"""
    n, index = source
    if index != 0:
        CheckFPAdvSIMDEnabled(cpu)
    element = elements(V(cpu, n), esize, 128 // esize, signed)[index]
    cpu.set_X(d, element & ((1 << datasize) - 1))


# ---- modified immediate: MOVI, MVNI, ORR, BIC ---------------------------------------------------------------

def move_immediate(cpu, d, imm, *, esize, datasize, op):
    """imm = AdvSIMDExpandImm(op, cmode, a:b:c:d:e:f:g:h);    // imm8 shifted (LSL: zeros in, MSL: ones in) and
                                                          // replicated to the element size, then to 64 bits
case operation of  MOVI: result = imm;  MVNI: result = NOT(imm);
                   ORR: result = V[d] OR imm;  BIC: result = V[d] AND NOT(imm);
V[d, datasize] = result;"""
    CheckFPAdvSIMDEnabled(cpu)
    if isinstance(imm, tuple):
        value, amount = imm
        if op.startswith("msl"):
            element = (value << amount) | ((1 << amount) - 1)
        else:
            element = value << amount
    else:
        element = imm
    element &= (1 << esize) - 1
    pattern = pack([element] * (datasize // esize), esize)
    ones = (1 << datasize) - 1
    current = V(cpu, d, datasize)
    result = {"movi": pattern, "mslmovi": pattern, "mvni": ~pattern, "mslmvni": ~pattern,
              "orr": current | pattern, "bic": current & ~pattern}[op]
    set_V(cpu, d, result & ones, datasize)


# ---- table lookup, permutes, EXT ---------------------------------------------------------------------------

def table_lookup(cpu, d, first, m, *, regs, datasize, is_tbl):
    """table = V[n]:...:V[n+regs-1] (modulo 32); indices = V[m, datasize];
result = if is_tbl then Zeros() else V[d, datasize];
for i = 0 to elements-1
    index = UInt(Elem[indices, i, 8]);
    if index < 16 * regs then Elem[result, i, 8] = Elem[table, index, 8];
V[d, datasize] = result;    // TBL (out of range: 0), TBX (out of range: unchanged)"""
    CheckFPAdvSIMDEnabled(cpu)
    table = b"".join(V(cpu, (first + r) % 32).to_bytes(16, "little") for r in range(regs))
    indices = elements(V(cpu, m, datasize), 8, datasize // 8)
    result = elements(0 if is_tbl else V(cpu, d, datasize), 8, datasize // 8)
    for i, index in enumerate(indices):
        if index < 16 * regs:
            result[i] = table[index]
    set_V(cpu, d, pack(result, 8), datasize)


def permute(cpu, d, n, m, *, esize, datasize, op, part):
    """ZIP: Elem[result, 2*p] = Elem[operand1, base + p]; Elem[result, 2*p+1] = Elem[operand2, base + p]
     (base = part * pairs);
UZP: zipped = operand2:operand1; Elem[result, e] = Elem[zipped, 2*e + part];
TRN: Elem[result, 2*p] = Elem[operand1, 2*p + part]; Elem[result, 2*p+1] = Elem[operand2, 2*p + part];
V[d, datasize] = result;    // ZIP1 ZIP2 UZP1 UZP2 TRN1 TRN2"""
    CheckFPAdvSIMDEnabled(cpu)
    a, b = _sources(cpu, n, m, esize, datasize)
    count, pairs = len(a), len(a) // 2
    if op == "zip":
        base = part * pairs
        result = [x for p in range(pairs) for x in (a[base + p], b[base + p])]
    elif op == "uzp":
        both = a + b
        result = [both[2 * e + part] for e in range(count)]
    else:
        result = [x for p in range(pairs) for x in (a[2 * p + part], b[2 * p + part])]
    set_V(cpu, d, pack(result, esize), datasize)


def extract(cpu, d, n, m, position, *, datasize):
    """hi = V[m, datasize]; lo = V[n, datasize]; concat = hi:lo;
V[d, datasize] = concat<position*8+datasize-1:position*8>;    // EXT"""
    CheckFPAdvSIMDEnabled(cpu)
    concat = V(cpu, m, datasize) << datasize | V(cpu, n, datasize)
    set_V(cpu, d, concat >> (8 * position), datasize)


# ---- shifts by an immediate --------------------------------------------------------------------------------

def shift_immediate(cpu, d, n, shift, *, esize, datasize, op):
    """SHL: Elem[result, e] = LSL(Elem[operand, e, esize], shift);
SSHR/USHR: element = Int(Elem[operand, e, esize], unsigned) >> shift; Elem[result, e] = element<esize-1:0>;
V[d, datasize] = result;"""
    CheckFPAdvSIMDEnabled(cpu)
    a = elements(V(cpu, n, datasize), esize, datasize // esize, signed=op == "sshr")
    result = [x << shift if op == "shl" else x >> shift for x in a]
    set_V(cpu, d, pack(result, esize), datasize)


def shift_left_long(cpu, d, n, shift, *, esize, part, unsigned):
    """operand = Vpart[n, part];
Elem[result, e, 2*esize] = (Int(Elem[operand, e, esize], unsigned) << shift)<2*esize-1:0>;
V[d, 128] = result;    // SSHLL, USHLL (SXTL, UXTL with #0) and the '2' forms"""
    CheckFPAdvSIMDEnabled(cpu)
    half = (V(cpu, n) >> (64 * part)) & ((1 << 64) - 1)
    a = elements(half, esize, 64 // esize, signed=not unsigned)
    set_V(cpu, d, pack([x << shift for x in a], 2 * esize))


def compare_zero(cpu, d, n, zero, *, esize, datasize, cmp):
    """element1 = SInt(Elem[operand, e, esize]); element2 = 0;
case comparison of GT: test_passed = element1 > 0; GE: >= 0; EQ: == 0; LT: < 0; LE: <= 0;
Elem[result, e, esize] = if test_passed then Ones(esize) else Zeros(esize);    // CMGT CMGE CMEQ CMLT CMLE #0"""
    compare(cpu, d, n, None, esize=esize, datasize=datasize, cmp=cmp)
