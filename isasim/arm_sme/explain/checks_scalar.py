"""The worked example of the scalar A64 data-processing forms: the result (and NZCV where the form
sets it) worked out step by step from the Operation in plain integers, beside what the machine
wrote.  One function per family of forms (move wide, add/sub, logical, bitfield move, multiply-add),
each reading the form's width, its S bit and its second operand's kind from the declaration."""

from __future__ import annotations

from ...core.explain import Check, Table
from .before_state import ones, register_name, register_value, signed, state_register

SHIFTS = {  # ShiftReg's four shift types: (name, how the N-bit value moves)
    0: ("LSL", lambda value, amount, n: (value << amount) % (1 << n)),
    1: ("LSR", lambda value, amount, n: value >> amount),
    2: ("ASR", lambda value, amount, n: (signed(value, n) >> amount) % (1 << n)),
    3: ("ROR", lambda value, amount, n: ((value >> amount) | (value << (n - amount))) % (1 << n)),
}
EXTENDS = ("UXTB", "UXTH", "UXTW", "UXTX", "SXTB", "SXTH", "SXTW", "SXTX")
LOGICAL = {"and": ("AND", lambda a, b: a & b), "ands": ("AND", lambda a, b: a & b),
           "orr": ("OR", lambda a, b: a | b), "eor": ("EOR", lambda a, b: a ^ b)}


def _operand(ins, index: int):
    """(register number, width, SP allowed) of general-register operand ``index``."""
    kind = ins.form.operands[index]
    return ins.operands[index], kind.width, kind.sp


def _named(ins, run, index: int) -> tuple[str, int]:
    n, width, sp = _operand(ins, index)
    return register_name(n, width, sp), register_value(run, n, width, sp)


# ---- the second operand of add/sub and logical: an immediate or a register shifted or extended ----------

def _add_immediate(ins, run, width):
    fields = ins.extra["fields"]
    shifted = ", LSL #12" if fields.get("sh") else ""
    return ins.operands[2], [["operand2", f"imm12 = {fields['imm12']}{shifted} = {ins.operands[2]:#x}"]]


def _bitmask_immediate(ins, run, width):
    fields = ins.extra["fields"]
    return ins.operands[2], [["operand2", f"imm = DecodeBitMasks(N={fields.get('N', 0)}, imms={fields['imms']}, "
                                          f"immr={fields['immr']}) = {ins.operands[2]:#x} (as the word decodes)"]]


def _shifted_register(ins, run, width):
    m, shift_type, amount = ins.operands[2]
    name, move = SHIFTS[shift_type]
    value = register_value(run, m, width, sp=False)
    result = move(value, amount, width)
    return result, [["operand2", f"{register_name(m, width, False)} {name} #{amount} = {value:#x} {name} {amount} "
                                 f"= {result:#x}"]]


def _extended_register(ins, run, width):
    m, option, shift = ins.operands[2]
    bits = 8 << (option & 3)
    value = register_value(run, m, width, sp=False)
    low = value % (1 << bits)
    extended = signed(low, min(bits, width)) if option >= 4 else low
    result = (extended << shift) % (1 << width)
    source = register_name(m, 64 if width == 64 and bits == 64 else 32, False)
    return result, [["operand2", f"{EXTENDS[option]}({source}) = {extended:#x}" + (f" ({extended})" if extended < 0
                                 else "") + f", LSL #{shift}, MOD 2^{width} = {result:#x}"]]


OPERAND2 = {"AddImm": _add_immediate, "BitmaskImm": _bitmask_immediate, "ShiftedReg": _shifted_register,
            "ExtendedReg": _extended_register}


# ---- the families ---------------------------------------------------------------------------------------

def _move_wide(ins, run, width):
    d, (imm16, pos) = ins.operands
    placed = imm16 << pos
    steps = [["imm16 << pos", f"{imm16:#x} << {pos} = {placed:#x}"]]
    if ins.form.mnemonic == "movk":
        _, old = _named(ins, run, 0)
        kept = old & ~(0xFFFF << pos) & ones(width)
        result = kept | placed
        steps += [["the other halfwords", f"{old:#x} AND NOT({0xFFFF << pos:#x}) = {kept:#x}"],
                  ["result", f"{kept:#x} OR {placed:#x} = {result:#x}"]]
    elif ins.form.mnemonic == "movn":
        result = ~placed & ones(width)
        steps.append(["result", f"NOT({placed:#x}) in {width} bits = {result:#x}"])
    else:
        result = placed
        steps.append(["result", f"{result:#x} (the other bits zero)"])
    return steps, result, None


def _add_sub(ins, run, width):
    """AddWithCarry told as the sum it is: C from the unsigned sum (or no borrow), V from the signed one."""
    subtract = ins.form.mnemonic.startswith("sub")
    name1, op1 = _named(ins, run, 1)
    op2, steps = OPERAND2[type(ins.form.operands[2]).__name__](ins, run, width)
    sign = "-" if subtract else "+"
    unsigned = op1 - op2 if subtract else op1 + op2
    signed_sum = signed(op1, width) - signed(op2, width) if subtract else signed(op1, width) + signed(op2, width)
    result = unsigned % (1 << width)
    steps = [["operand1", f"{name1} = {op1:#x}"]] + steps
    steps.append(["result", f"(operand1 {sign} operand2) MOD 2^{width} = ({op1} {sign} {op2}) MOD 2^{width} "
                            f"= {result:#x}"])
    if not ins.form.mnemonic.endswith("s"):
        return steps, result, None
    top = 1 << (width - 1)
    carry = int(op1 >= op2) if subtract else int(unsigned >= 1 << width)
    overflow = int(not -top <= signed_sum < top)
    nzcv = (result >> (width - 1)) << 3 | int(result == 0) << 2 | carry << 1 | overflow
    steps += [["unsigned", f"{op1} {sign} {op2} = {unsigned}"],
              ["signed", f"{signed(op1, width)} {sign} {signed(op2, width)} = {signed_sum}"],
              ["N Z", f"N = result<{width - 1}> = {nzcv >> 3}; Z = (result == 0) = {nzcv >> 2 & 1}"],
              ["C", (f"C = (operand1 >= operand2, no borrow) = {carry}" if subtract
                     else f"C = (unsigned sum >= 2^{width}) = {carry}")],
              ["V", f"V = (signed {'difference' if subtract else 'sum'} outside -2^{width - 1}..2^{width - 1}-1) "
                    f"= {overflow}"]]
    return steps, result, nzcv


def _logical(ins, run, width):
    word, operation = LOGICAL[ins.form.mnemonic]
    name1, op1 = _named(ins, run, 1)
    op2, steps = OPERAND2[type(ins.form.operands[2]).__name__](ins, run, width)
    result = operation(op1, op2)
    steps = [["operand1", f"{name1} = {op1:#x}"]] + steps
    steps.append(["result", f"{op1:#x} {word} {op2:#x} = {result:#x}"])
    if ins.form.mnemonic != "ands":
        return steps, result, None
    nzcv = (result >> (width - 1)) << 3 | int(result == 0) << 2
    steps.append(["N Z C V", f"N = result<{width - 1}> = {nzcv >> 3}; Z = (result == 0) = {nzcv >> 2 & 1}; "
                             f"C = 0; V = 0"])
    return steps, result, nzcv


def _bitfield(ins, run, width):
    """UBFM/SBFM told as their aliases do: imms >= immr extracts bits imms..immr to bit 0 (UBFX, LSR,
    ASR ...); imms < immr inserts bits imms..0 at bit width - immr (UBFIZ, LSL ...)."""
    _, _, immr, imms = ins.operands
    is_signed = ins.form.mnemonic == "sbfm"
    name, src = _named(ins, run, 1)
    if imms >= immr:
        size, field, at = imms - immr + 1, (src >> immr) & ones(imms - immr + 1), 0
        steps = [["field", f"bits {imms}..{immr} of {name} = {src:#x} >> {immr} AND Ones({size}) = {field:#x}"]]
    else:
        size, field, at = imms + 1, src & ones(imms + 1), width - immr
        steps = [["field", f"bits {imms}..0 of {name} = {src:#x} AND Ones({size}) = {field:#x}"]]
    value = signed(field, size) if is_signed else field
    result = (value << at) % (1 << width)
    steps.append(["result", f"{'SInt' if is_signed else 'UInt'}(field) = {value}, placed at bit {at}, "
                            f"MOD 2^{width} = {result:#x}"])
    return steps, result, None


def _multiply_add(ins, run, width):
    subtract = ins.form.mnemonic == "msub"
    (name_n, n), (name_m, m), (name_a, a) = (_named(ins, run, i) for i in (1, 2, 3))
    sign = "-" if subtract else "+"
    total = a - n * m if subtract else a + n * m
    result = total % (1 << width)
    return [["operands", f"{name_n} = {n:#x}, {name_m} = {m:#x}, {name_a} = {a:#x}"],
            ["integer result", f"{a} {sign} {n} * {m} = {total}"],
            ["result", f"MOD 2^{width} = {result:#x}"]], result, None


FAMILIES = {"movz": _move_wide, "movn": _move_wide, "movk": _move_wide,
            "add": _add_sub, "adds": _add_sub, "sub": _add_sub, "subs": _add_sub,
            "and": _logical, "ands": _logical, "orr": _logical, "eor": _logical,
            "sbfm": _bitfield, "ubfm": _bitfield, "madd": _multiply_add, "msub": _multiply_add}


def scalar_blocks(ins, run) -> list:
    """The steps of the form's family as a table, then the destination (and NZCV) beside the machine's."""
    d, width, sp = _operand(ins, 0)
    steps, result, nzcv = FAMILIES[ins.form.mnemonic](ins, run, width)
    state = run.machine.state
    name = register_name(d, width, sp)
    parts = []  # (what, explained, machine)
    target = state_register(d, sp)
    if target is not None:  # X[d, 32] = result writes the W result zero-extended into all 64 bits
        what = name if width == 64 else f"{name} (x{d} zero-extended)" if d < 31 else f"{name} (sp zero-extended)"
        parts.append((what, f"{result:#x}", f"{state.read_register(target):#x}"))
    if nzcv is not None:
        parts.append(("NZCV", f"{nzcv:04b}", f"{state.read_register('nzcv') >> 28:04b}"))
    if not parts:  # the result goes to the zero register: the step writes no register but the PC
        written = [str(w.where) for w in run.record.writes if w.kind == "reg" and w.where != "pc"]
        parts.append((f"registers written ({name} discards the result)", "none", ", ".join(written) or "none"))
    title = f"{name} worked out from the Operation" if target is not None else \
        f"the result (to {name}) worked out from the Operation"
    table = Table(["step", "for this example"], steps, title=title)
    return [table, Check(" and ".join(p[0] for p in parts), ", ".join(p[1] for p in parts),
                         ", ".join(p[2] for p in parts))]
