"""The worked example of the A64 loads and stores of X, W and Q registers (LDR/STR with an unsigned
offset, LDUR/STUR, pre- and post-index): the address from the base and the offset, the bytes that
move (little-endian), the register or memory after, and the written-back base."""

from __future__ import annotations

from ...core.explain import Check, Table
from ..state import MASK64
from .before_state import plus, register_name, register_value, state_register


def _spaced(data: bytes) -> str:
    return data.hex(" ")


def memory_blocks(ins, run) -> list:
    form, state, memory = ins.form, run.machine.state, run.machine.memory
    addressing = type(form.operands[1]).__name__  # BaseOffset, UnscaledOffset, PreIndex or BaseOnly (post)
    if addressing == "BaseOnly":
        t, n, offset = ins.operands
    else:
        t, (n, offset) = ins.operands
    is_q = type(form.operands[0]).__name__ == "QReg"
    width = 128 if is_q else form.operands[0].width
    size = width // 8
    load = form.mnemonic.startswith("ld")
    base_name = register_name(n, 64, sp=True)
    base = register_value(run, n, 64, sp=True)
    moved = (base + offset) & MASK64
    address = base if addressing == "BaseOnly" else moved
    writeback = addressing in ("PreIndex", "BaseOnly")
    rt = f"q{t}" if is_q else register_name(t, width, sp=False)
    steps = [["base", f"{base_name} = {base:#x}"], ["offset", f"#{offset}"]]
    if addressing == "BaseOnly":
        steps.append(["address", f"{base:#x} (post-index: the offset is added after the access)"])
    else:
        steps.append(["address", f"{base:#x} {plus(offset)} = {address:#x}"])
    parts = []  # (what, explained, machine)
    if load:
        data = bytes(memory.read(address, size))  # a load leaves memory as it was
        steps.append([f"Mem[{address:#x}, {size}]", _spaced(data)])
        if is_q:  # V[t, 128] = data: the low 128 bits of Z[t], the rest of the vector zeroed
            z = bytes(state.z[t])
            steps.append([rt, f"{data.hex()} (bytes 0-15 of z{t}{', the rest zeroed' if len(z) > 16 else ''})"])
            parts.append((rt, data.hex(), z[:16].hex()))
            if len(z) > 16:
                parts.append((f"z{t} bytes 16-{len(z) - 1}", "zero", "not zero" if any(z[16:]) else "zero"))
        else:
            value = int.from_bytes(data, "little")
            steps.append([rt, f"{value:#x} (little-endian{', zero-extended into x%d' % t if width == 32 else ''})"])
            if t != 31:
                parts.append((rt if width == 64 else f"{rt} (x{t} zero-extended)", f"{value:#x}",
                              f"{state.read_register(state_register(t, False)):#x}"))
    else:
        if is_q:
            data = bytes(run.before["z"][t][:16])
        else:
            data = register_value(run, t, width, sp=False).to_bytes(size, "little")
        steps.append([f"{rt} as {size} bytes (little-endian)", _spaced(data)])
        parts.append((f"memory at {address:#x}", data.hex(), bytes(memory.read(address, size)).hex()))
    if writeback:
        steps.append([f"{base_name} written back", f"{base:#x} {plus(offset)} = {moved:#x}"])
        after = state.read_register(state_register(n, True))
        parts.append((f"{base_name} (written back)", f"{moved:#x}", f"{after:#x}"))
    if not parts:  # a load into the zero register, without writeback: nothing is written
        written = [str(w.where) for w in run.record.writes if w.where != "pc"]
        parts.append((f"registers written ({rt} discards the load)", "none", ", ".join(written) or "none"))
    table = Table(["step", "for this example"], steps, title=f"{form.mnemonic.upper()} {rt} worked out")
    return [table, Check(" and ".join(p[0] for p in parts), ", ".join(p[1] for p in parts),
                         ", ".join(p[2] for p in parts))]
