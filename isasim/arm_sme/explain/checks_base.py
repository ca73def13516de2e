"""The worked example's check line for the A64 base forms of issue 28 (semantics/base_*.py, and the forms
scalar.py gained: BIC/ORN/EON/BICS, BFM, EXTR, ADR/ADRP): each result worked out here in plain integer
arithmetic from the registers, flags and memory before the step, beside what the machine holds after it."""

from __future__ import annotations

from ...core.explain import Check
from ..state import MASK64, X_NAMES
from .before_state import ones, register_value, signed

_NEW_SCALAR = {"bic", "orn", "eon", "bics", "bfm", "extr", "adr", "adrp", "lslv", "lsrv", "asrv", "rorv", "udiv",
               "sdiv", "rbit", "rev16", "rev32", "rev", "clz", "cls", "smaddl", "smsubl", "umaddl", "umsubl", "smulh",
               "umulh", "csel", "csinc", "csinv", "csneg", "ccmp", "ccmn", "adc", "adcs", "sbc", "sbcs", "fmov"}
_SINGLE = {"BaseOffset", "UnscaledOffset", "PreIndex", "BaseOnly"}


def applies(form) -> bool:
    """Whether this module works the form's example out (the older scalar and memory forms have their tables)."""
    if form.mnemonic in _NEW_SCALAR or form.group == "system" or form.id in ("BL", "BR", "BLR", "RET"):
        return True
    if form.group != "memory":
        return False
    first, second = form.operands[0], form.operands[1]
    older = (type(first).__name__ == "QReg" or getattr(first, "width", None) in (32, 64)) and \
        type(second).__name__ in _SINGLE and form.mnemonic in ("ldr", "str", "ldur", "stur")
    return not older


def _x(run, n):
    return register_value(run, n, 64, sp=False)


def _nzcv_holds(cond: int, nzcv: int) -> bool:
    n, z, c, v = (nzcv >> 3) & 1, (nzcv >> 2) & 1, (nzcv >> 1) & 1, nzcv & 1
    holds = (z == 1, c == 1, n == 1, v == 1, c == 1 and z == 0, n == v, n == v and z == 0, True)[cond >> 1]
    return not holds if cond & 1 and cond != 0b1111 else holds


def _add(a: int, b: int, carry: int, width: int) -> tuple[int, int]:
    unsigned_sum = a + b + carry
    signed_sum = signed(a, width) + signed(b, width) + carry
    result = unsigned_sum & ones(width)
    n, z = result >> (width - 1), int(result == 0)
    c, v = int(result != unsigned_sum), int(signed(result, width) != signed_sum)
    return result, (n << 3) | (z << 2) | (c << 1) | v


def base_blocks(ins, run) -> list:
    if ins.form.mnemonic in ("prfm", "prfum"):
        written = [str(w.where) for w in run.record.writes if w.where != "pc"]
        return [Check("state written (a prefetch hint: NOP here)", "none", ", ".join(written) or "none")]
    if ins.form.group == "memory":
        return [_memory(ins, run)]
    if ins.form.group in ("control", "system"):
        return [_control_or_system(ins, run)]
    return [_scalar(ins, run)]


def _result(run, d: int, value: int) -> Check:
    state = run.machine.state
    if d == 31:
        written = [str(w.where) for w in run.record.writes if w.kind == "reg" and w.where != "pc"]
        return Check("registers written (the zero register discards the result)", "none", ", ".join(written) or "none")
    return Check(X_NAMES[d], f"{value & MASK64:#x}", f"{state.x[d]:#x}")


def _scalar(ins, run) -> Check:
    form, ops, regs = ins.form, ins.operands, run.before["regs"]
    width = 32 if "_32" in form.id else 64
    m = form.mnemonic
    if m in ("adr", "adrp"):
        base = ins.address & ~0xFFF if m == "adrp" else ins.address
        return _result(run, ops[0], base + ops[1])
    if m in ("bic", "orn", "eon", "bics"):
        d, n, (rm, kind, amount) = ops
        value = register_value(run, rm, width, False)
        shifted = (value << amount, value >> amount, signed(value, width) >> amount,
                   (value >> amount) | (value << (width - amount)))[kind] & ones(width)
        a, b = register_value(run, n, width, False), ~shifted & ones(width)
        result = a | b if m == "orn" else a ^ b if m == "eon" else a & b
        if m == "bics":
            flags = ((result >> (width - 1)) << 3) | (int(result == 0) << 2)
            return Check(f"{X_NAMES[d] if d < 31 else 'xzr'} and NZCV",
                         f"{result:#x}, {flags:04b}",
                         f"{run.machine.state.x[d] if d < 31 else 0:#x}, {run.machine.state.nzcv >> 28:04b}")
        return _result(run, d, result)
    if m == "bfm":
        d, n, r, s = ops
        dst, src = register_value(run, d, width, False), register_value(run, n, width, False)
        if s >= r:  # BFXIL: bits r..s of src into the bottom of dst
            length = s - r + 1
            result = (dst & ~ones(length)) | ((src >> r) & ones(length))
        else:  # BFI: the bottom s+1 bits of src at bit width - r
            length, at = s + 1, width - r
            result = (dst & ~(ones(length) << at)) | ((src & ones(length)) << at)
        return _result(run, d, result & ones(width))
    if m == "extr":
        d, n, mm, lsb = ops
        both = (register_value(run, n, width, False) << width) | register_value(run, mm, width, False)
        return _result(run, d, (both >> lsb) & ones(width))
    if m in ("lslv", "lsrv", "asrv", "rorv"):
        d, n, mm = ops
        value, amount = register_value(run, n, width, False), register_value(run, mm, width, False) % width
        result = {"lslv": value << amount, "lsrv": value >> amount, "asrv": signed(value, width) >> amount,
                  "rorv": (value >> amount) | (value << (width - amount))}[m]
        return _result(run, d, result & ones(width))
    if m in ("udiv", "sdiv"):
        d, n, mm = ops
        a, b = register_value(run, n, width, False), register_value(run, mm, width, False)
        if m == "sdiv":
            a, b = signed(a, width), signed(b, width)
        quotient = 0 if b == 0 else int(abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1)
        return _result(run, d, quotient & ones(width))
    if m in ("rbit", "rev16", "rev32", "rev", "clz", "cls"):
        d, n = ops
        value = register_value(run, n, width, False)
        bits = format(value, f"0{width}b")
        if m == "rbit":
            result = int(bits[::-1], 2)
        elif m == "clz":
            result = len(bits) - len(bits.lstrip("0"))
        elif m == "cls":
            result = len(bits) - len(bits.lstrip(bits[0])) - 1
        else:
            chunk = {"rev16": 2, "rev32": 4, "rev": width // 8}[m]
            data = value.to_bytes(width // 8, "little")
            result = int.from_bytes(b"".join(data[i:i + chunk][::-1] for i in range(0, len(data), chunk)), "little")
        return _result(run, d, result)
    if m in ("smaddl", "smsubl", "umaddl", "umsubl"):
        d, n, mm, a = ops
        p, q = register_value(run, n, 32, False), register_value(run, mm, 32, False)
        if m[0] == "s":
            p, q = signed(p, 32), signed(q, 32)
        return _result(run, d, _x(run, a) + (-p * q if m.endswith("subl") else p * q))
    if m in ("smulh", "umulh"):
        d, n, mm = ops
        p, q = _x(run, n), _x(run, mm)
        if m == "smulh":
            p, q = signed(p, 64), signed(q, 64)
        return _result(run, d, (p * q) >> 64)
    if m in ("csel", "csinc", "csinv", "csneg"):
        d, n, mm, cond = ops
        if _nzcv_holds(cond, regs["nzcv"] >> 28):
            result = register_value(run, n, width, False)
        else:
            other = register_value(run, mm, width, False)
            result = {"csel": other, "csinc": other + 1, "csinv": ~other, "csneg": -other}[m]
        return _result(run, d, result & ones(width))
    if m in ("adc", "adcs", "sbc", "sbcs"):
        d, n, mm = ops
        b = register_value(run, mm, width, False)
        result, flags = _add(register_value(run, n, width, False), ~b & ones(width) if m.startswith("sbc") else b,
                             (regs["nzcv"] >> 29) & 1, width)
        if m.endswith("s"):
            return Check(f"{X_NAMES[d] if d < 31 else 'xzr'} and NZCV", f"{result:#x}, {flags:04b}",
                         f"{run.machine.state.x[d] if d < 31 else 0:#x}, {run.machine.state.nzcv >> 28:04b}")
        return _result(run, d, result)
    if m == "fmov":
        d, n = ops
        width = 32 if form.id in ("FMOV_W_S", "FMOV_S_W") else 64
        if form.id.startswith(("FMOV_W", "FMOV_X")):
            return _result(run, d, int.from_bytes(bytes(run.before["z"][n][:width // 8]), "little"))
        state = run.machine.state
        expected = register_value(run, n, width, False).to_bytes(width // 8, "little") + bytes(state.svlb - width // 8)
        return Check(f"z{d} (the rest of the vector zeroed)", expected.hex(), bytes(state.z[d]).hex())
    # CCMP, CCMN
    n, operand, nzcv, cond = ops
    if _nzcv_holds(cond, regs["nzcv"] >> 28):
        b = operand if form.id.endswith("_imm") else register_value(run, operand, width, False)
        a = register_value(run, n, width, False)
        _, flags = _add(a, ~b & ones(width), 1, width) if m == "ccmp" else _add(a, b, 0, width)
    else:
        flags = nzcv
    return Check("NZCV", f"{flags:04b}", f"{run.machine.state.nzcv >> 28:04b}")


def _control_or_system(ins, run) -> Check:
    form, ops, regs, state = ins.form, ins.operands, run.before["regs"], run.machine.state
    if form.id == "BL":
        return Check("next pc and x30", f"{ins.address + ops[0]:#x}, {ins.next_address:#x}",
                     f"{state.pc:#x}, {state.x[30]:#x}")
    if form.id in ("BR", "BLR"):
        return Check("next pc", f"{_x(run, ops[0]):#x}", f"{state.pc:#x}")
    if form.id == "RET":
        return Check("the program ended (no call pending)", "True", str(run.machine.halted))
    if form.mnemonic == "hint":
        written = [str(w.where) for w in run.record.writes if w.where != "pc"]
        return Check("state written (a hint isasim's core does not implement: NOP)", "none",
                     ", ".join(written) or "none")
    if form.mnemonic == "mrs":
        t, name = ops
        expected = regs.get(name, state.read_register(name) if name in ("fpcr", "fpsr") else 0)
        return _result(run, t, expected)
    name, t = ops
    value = _x(run, t)
    expected = {"nzcv": value & 0xF0000000, "svcr": value & 3, "fpcr": value & 0x07FF2007,
                "fpsr": value & 0xF800009F}.get(name, value)
    return Check(name.upper(), f"{expected:#x}", f"{state.read_register(name):#x}")


def _memory(ins, run) -> Check:
    form, ops, state, memory = ins.form, ins.operands, run.machine.state, run.machine.memory
    size = form.execute.keywords["size"]
    vector = form.execute.keywords["register"] == "V"
    load = form.mnemonic.startswith("ld")
    pair = form.mnemonic in ("ldp", "stp", "ldpsw")
    t = ops[0]
    rest = ops[2:] if pair else ops[1:]
    if form.id.endswith("_lit"):
        address = ins.address + rest[0]
    elif len(rest) == 2:  # post-index: the access at the base
        address = register_value(run, rest[0], 64, sp=True)
    elif len(rest[0]) == 4:  # a register offset
        n, mm, option, shift = rest[0]
        index = _x(run, mm)
        if option in (2, 6):
            index &= ones(32)
            index = signed(index, 32) if option == 6 else index
        address = register_value(run, n, 64, sp=True) + (index << shift)
    else:
        n, offset = rest[0]
        address = register_value(run, n, 64, sp=True) + offset
    address &= MASK64
    registers = [t, ops[1]] if pair else [t]
    span = size * len(registers)
    if load:
        data = bytes(memory.read(address, span))
        kept = [(k, r) for k, r in enumerate(registers) if vector or r != 31]  # XZR discards its part
        if not kept:  # a load into the zero register: only a written-back base changes
            if form.id.endswith(("_pre", "_post")):
                n, offset = rest if len(rest) == 2 else rest[0]
                name = "sp" if n == 31 else X_NAMES[n]
                moved = (register_value(run, n, 64, sp=True) + offset) & MASK64
                return Check(f"{name} (written back; the zero register discards the load)", f"{moved:#x}",
                             f"{state.read_register(name):#x}")
            written = [str(w.where) for w in run.record.writes if w.kind == "reg" and w.where != "pc"]
            return Check("registers written (the zero register discards the load)", "none", ", ".join(written) or "none")
        expected = b"".join(data[k * size:(k + 1) * size] for k, _ in kept)
        if vector:
            held = b"".join(bytes(state.z[r][:size]) for _, r in kept)
        else:
            held = b"".join(state.x[r].to_bytes(8, "little")[:size] for _, r in kept)
        names = ", ".join(f"{'z' if vector else 'x'}{r}" for _, r in kept)
        return Check(f"the low {size} bytes of {names} (from memory at {address:#x})", expected.hex(), held.hex())
    if vector:
        before = b"".join(bytes(run.before["z"][r][:size]) for r in registers)
    else:
        before = b"".join(((run.before["regs"][X_NAMES[r]] if r < 31 else 0) & ones(8 * size)).to_bytes(size, "little")
                          for r in registers)
    names = ", ".join(f"{'z' if vector else 'x'}{r}" for r in registers)
    return Check(f"memory at {address:#x} (the low {size} bytes of {names})", before.hex(),
                 bytes(memory.read(address, span)).hex())
