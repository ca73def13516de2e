"""The trace viewer's account of RFLAGS after a scalar instruction that writes the status flags: ADD, ADC, SUB,
SBB, CMP, INC, DEC, NEG, AND, OR, XOR and TEST.

Each of CF, PF, AF, ZF, SF and OF is derived here from the operands' values before the step by the Intel SDM's
definitions (Vol. 1, 3.4.3.1 "Status Flags", and each instruction's "Flags Affected"), written out on the
numbers, not by calling the simulator's flag functions; the check compares the RFLAGS they make with the
RFLAGS the machine holds after the step.  The flags the SDM leaves undefined (AF after AND, OR, XOR and
TEST) are given the value isasim writes, which is what Emerald Rapids silicon gives (semantics/scalar.py).
"""

from __future__ import annotations

from ...core.explain import Check, Paragraph, Table
from ...core.explain.model import ElementWorking
from ..operands import GPR_VIEWS, Imm, Mem, Reg, operand_text, signed, width

# RFLAGS bit numbers (SDM Vol. 1, Figure 3-8), in the order the SDM lists the status flags
FLAG_BITS = {"CF": 0, "PF": 2, "AF": 4, "ZF": 6, "SF": 7, "OF": 11}
ADDITIONS = ("add", "adc", "inc")
SUBTRACTIONS = ("sub", "sbb", "cmp", "dec", "neg")
LOGIC = ("and", "or", "xor", "test")
FLAG_WRITERS = ADDITIONS + SUBTRACTIONS + LOGIC
RESULT_WRITERS = ("add", "adc", "sub", "sbb", "inc", "dec", "neg", "and", "or", "xor")  # CMP, TEST only flag


def operand_value(o, bits: int, before, rows: list | None = None) -> int:
    """An operand's value before the step as an unsigned ``bits``-bit number (an immediate sign-extended to
    it, as the SDM's "imm8/imm32 sign-extended" forms take it), and a row for the operands table saying
    where it came from."""
    mask = (1 << bits) - 1
    if isinstance(o, Reg):
        v, where = before.state.read_gpr(GPR_VIEWS[o.name]), "register"
    elif isinstance(o, Imm):
        v = (signed(o.value, o.bits) if o.bits and o.bits < bits else o.value) & mask
        where = f"immediate (to {bits} bits)"
    else:
        address = before.context.effective_address(o)
        data = before.memory.read(address, bits // 8)
        v, where = int.from_bytes(data, "little"), f"memory at {address:#x}: {data.hex(' ')}"
    if rows is not None:
        rows.append([operand_text(o), where, f"{v:#x}", str(v), str(signed(v, bits))])
    return v


def operand_bits(operands) -> int | None:
    """The operation's width: the register or sized memory operand's (an unsized memory operand takes the
    other operand's register width)."""
    for o in operands:
        if isinstance(o, Reg) and o.name in GPR_VIEWS:
            return GPR_VIEWS[o.name].bits
        if isinstance(o, Mem) and o.size:
            return width(o)
    return None


def flags_text(rflags: int) -> str:
    """RFLAGS as a number and the status flags set in it."""
    names = " ".join(name for name, bit in FLAG_BITS.items() if rflags >> bit & 1)
    return f"{rflags:#x} ({names or 'no status flag set'})"


def _parity_text(r: int) -> tuple[int, str]:
    ones = bin(r & 0xFF).count("1")
    return int(ones % 2 == 0), f"low byte {r & 0xFF:08b} has {ones} one bit{'s' if ones != 1 else ''}"


def flag_workings(instruction, before, after) -> list[ElementWorking]:
    """The account of RFLAGS after ``instruction`` (one of FLAG_WRITERS), or [] for any other instruction."""
    mnemonic, operands = instruction.form.mnemonic, instruction.operands
    if mnemonic not in FLAG_WRITERS or any(isinstance(o, Reg) and o.name not in GPR_VIEWS for o in operands):
        return []
    unary = mnemonic in ("inc", "dec", "neg")
    if len(operands) != (1 if unary else 2):
        return []
    bits = operand_bits(operands)
    if bits is None:
        return []
    top, mask = bits - 1, (1 << bits) - 1
    rows: list[list[str]] = []
    a = operand_value(operands[0], bits, before, rows)
    b = 1 if mnemonic in ("inc", "dec") else 0 if mnemonic == "neg" else operand_value(operands[1], bits, before, rows)
    flags_before = before.state.read_register("rflags")
    carry_in = flags_before & 1 if mnemonic in ("adc", "sbb") else 0
    if mnemonic in ("adc", "sbb"):
        rows.append(["CF", "RFLAGS before the step", str(carry_in), str(carry_in), str(carry_in)])
    if mnemonic == "neg":
        a, b = 0, a  # NEG: 0 - DEST, its flags as SUB's (SDM: "OF, SF, ZF, AF, PF set according to the result")

    sa, sb = a >> top & 1, b >> top & 1
    flags: dict[str, tuple[int, str, str]] = {}  # name -> (value, the SDM's rule, here)
    if mnemonic in LOGIC:
        op = {"and": "AND", "or": "OR", "xor": "XOR", "test": "AND"}[mnemonic]
        r = {"AND": a & b, "OR": a | b, "XOR": a ^ b}[op]
        how = f"{a:#x} {op} {b:#x} = {r:#x}"
        flags["CF"] = (0, "CF := 0", "cleared")
        flags["OF"] = (0, "OF := 0", "cleared")
        flags["AF"] = (0, "undefined in the SDM; isasim writes 0 (what Emerald Rapids gives)", "")
    elif mnemonic in ADDITIONS:
        total = a + b + carry_in
        r = total & mask
        plus = f"{a:#x} + {b:#x}" + (f" + CF {carry_in}" if mnemonic == "adc" else "")
        how = f"{plus} = {total:#x}, mod 2^{bits} = {r:#x}"
        low = (a & 0xF) + (b & 0xF) + carry_in
        flags["CF"] = (int(total >> bits), f"carry out of bit {top}: the unsigned sum ≥ 2^{bits}",
                       f"{total:#x} {'≥' if total >> bits else '<'} 2^{bits}")
        flags["AF"] = (int(low > 0xF), "carry out of bit 3",
                       f"low nibbles {a & 0xF:#x} + {b & 0xF:#x}" + (f" + {carry_in}" if mnemonic == "adc" else "")
                       + f" = {low:#x}")
        sr = r >> top & 1
        flags["OF"] = (int(sa == sb and sr != sa), "signed overflow: both operands have the same sign and the "
                       "result's sign differs", f"signs (bit {top}) {sa}, {sb} → {sr}")
    else:
        total = a - b - carry_in
        r = total & mask
        minus = f"{a:#x} - {b:#x}" + (f" - CF {carry_in}" if mnemonic == "sbb" else "")
        how = f"{minus} = {total:#x}" + (f", mod 2^{bits} = {r:#x}" if total < 0 else "")
        low = (a & 0xF) - (b & 0xF) - carry_in
        if mnemonic == "neg":
            flags["CF"] = (int(b != 0), "CF := 0 if the operand is 0, else 1", f"the operand is {b:#x}")
        else:
            flags["CF"] = (int(total < 0), f"borrow into bit {top}: the unsigned minuend < the subtrahend"
                           + (" + CF" if mnemonic == "sbb" else ""),
                           f"{a:#x} {'<' if total < 0 else '≥'} {b:#x}" + (f" + {carry_in}" if carry_in else ""))
        flags["AF"] = (int(low < 0), "borrow into bit 3 (from bit 4)",
                       f"low nibbles {a & 0xF:#x} - {b & 0xF:#x}" + (f" - {carry_in}" if carry_in else "")
                       + f" = {low}")
        sr = r >> top & 1
        flags["OF"] = (int(sa != sb and sr != sa), "signed overflow: the operands' signs differ and the result's "
                       "sign differs from the minuend's", f"signs (bit {top}) {sa}, {sb} → {sr}")
    if mnemonic in ("inc", "dec"):
        kept = flags_before & 1
        flags["CF"] = (kept, "not affected: kept from before the step", f"RFLAGS before {flags_before:#x}")
    sr = r >> top & 1
    flags["SF"] = (sr, f"the result's most significant bit (bit {top})", f"bit {top} of {r:#x}")
    flags["ZF"] = (int(r == 0), "the result is 0", f"{r:#x} {'=' if r == 0 else '≠'} 0")
    parity, ones = _parity_text(r)
    flags["PF"] = (parity, "an even number of 1 bits in the result's low byte", ones)

    written = sum(1 << bit for name, bit in FLAG_BITS.items() if name in flags)
    computed = sum(flags[name][0] << bit for name, bit in FLAG_BITS.items())
    expected = flags_before & ~written | computed
    text = f"{mnemonic.upper()} {', '.join(operand_text(o) for o in operands)}"
    what = "0 - the operand" if mnemonic == "neg" else "the result"
    table = Table(["flag", "RFLAGS bit", "rule (SDM)", "here", "value"],
                  [[name, str(bit), flags[name][1], flags[name][2], str(flags[name][0])]
                   for name, bit in FLAG_BITS.items()])
    blocks = [Table(["operand", "what", "value before the step", "unsigned", "signed"], rows),
              Paragraph(f"{text}: {what} = {how} ({signed(r, bits)} signed, {bits} bits)"
                        + ("; CMP and TEST write only the flags." if mnemonic in ("cmp", "test") else ".")),
              table,
              Paragraph(f"The other RFLAGS bits keep their values: RFLAGS before the step {flags_text(flags_before)}."),
              Check("RFLAGS", flags_text(expected), flags_text(after.state.read_register("rflags")))]
    return [ElementWorking("rflags", 0, 8, f"rflags := the status flags of {text}", blocks)]
