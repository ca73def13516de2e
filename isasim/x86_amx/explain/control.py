"""``isasim explain`` of the built-in C functions (memset, memcpy, memmove, __stack_chk_fail, abort): what they do, where
their arguments are, how a compiled function reaches them, and a worked example (a CALL to the built-in, which
runs as one step).  CALL and JMP r/m64 are explained as the scalar forms are (explain/scalar.py: their iced-x86
opcode rows, a worked example on the simulator)."""

from __future__ import annotations

from ...core.explain import Cell, Code, Explanation, Paragraph, Section, Table, fault_blocks, run_example
from ...core.program import Instruction
from ..config import CODE_BASE
from ..semantics.libm import ROUNDING
from .common import DATA_ADDR, ISA_NAME, command, default_cpu, facts
from .encoding_view import legacy_encoding
from .settings import Settings

_ARGUMENTS = {  # the System V ABI's registers for each built-in's parameters, and where the result goes
    "memset": [("rdi", "void *s"), ("rsi", "int c (its low byte)"), ("rdx", "size_t n"), ("rax", "s (returned)")],
    "memcpy": [("rdi", "void *dest"), ("rsi", "const void *src"), ("rdx", "size_t n"), ("rax", "dest (returned)")],
    "memmove": [("rdi", "void *dest"), ("rsi", "const void *src"), ("rdx", "size_t n"), ("rax", "dest (returned)")],
    "__stack_chk_fail": [],
    "abort": [],
    **{name: [("xmm0", f"{'float' if argument == 'f32' else 'double'} x (its low {32 if argument == 'f32' else 64} bits)"),
              ("rax" if result == "i64" else "xmm0", "the result (returned)")]
       for name, (argument, result, _f) in ROUNDING.items()},
}
# The worked example's arguments: 16 bytes at DATA_ADDR hold 0, 1, ..., 15; the stack is above them.
_EXAMPLE_REGS = {"memset": {"rdi": DATA_ADDR + 4, "rsi": 0x2A, "rdx": 6},
                 "memcpy": {"rdi": DATA_ADDR + 8, "rsi": DATA_ADDR, "rdx": 6},
                 "memmove": {"rdi": DATA_ADDR + 2, "rsi": DATA_ADDR, "rdx": 8},
                 "__stack_chk_fail": {}, "abort": {},
                 # x = -2.5: ties to even gives -2, away from zero -3
                 **{name: {"zmm0": 0xC0200000 if argument == "f32" else 0xC004000000000000}
                    for name, (argument, _r, _f) in ROUNDING.items()}}


def explain_builtin(ins: Instruction, form, settings: Settings) -> Explanation:
    cpu = default_cpu(form.feature, settings.cpu)
    expl = Explanation(ISA_NAME, form.syntax, ins.text, ins.encoding, form.summary,
                       facts(ins, cpu, [("kind", "isasim built-in (a C library function the simulator provides)")]))
    expl.command = command(ins, settings)
    encoding, row, row_syntax = legacy_encoding(ins)
    expl.sections.append(Section("Encoding", [Paragraph(
        f"None of its own: the place holds {row} ({row_syntax}), so a CPU that ran it would stop there; isasim "
        "runs the built-in when a call reaches it."), encoding]))
    rows = [[register, meaning] for register, meaning in _ARGUMENTS[form.name]]
    expl.sections.append(Section("Operands", [Table(["register", "parameter (System V ABI)"], rows) if rows else
                                              Paragraph("none; it does not return")]))
    expl.sections.append(Section("Operation (the semantics the simulator executes)", [Code(form.doc)]))
    faults = ([["-", "none: a rounding function never faults (a result that does not fit is the integer "
                     "indefinite, a NaN stays a NaN)"]] if form.name in ROUNDING else
              [["__stack_chk_fail", "always: the stack protector found its canary overwritten"]]
              if form.name == "__stack_chk_fail" else
              [["abort", "always: the program ends abnormally (a test's failed check)"]] if form.name == "abort" else
              [["#PF", "a byte it reads or writes is not mapped (or, for a write, not writable)"]])
    expl.sections.append(Section("Faults", [Table(["fault", "when"], faults)]))
    expl.sections.append(Section("How a program reaches it", [Paragraph(
        f"A compiled function's call to {form.name} (an undefined symbol of its object file, a function of that "
        "name or a PLT stub of a linked one) goes to the address isasim places the built-in at, after the "
        "function's code; the built-in runs there as one step, its memory writes recorded as any "
        "instruction's, and returns as RET does.")]))
    regs = {"rsp": DATA_ADDR + 0x80, **_EXAMPLE_REGS[form.name]}
    run = run_example(ISA_NAME, f"call built_in\nbuilt_in: {form.name}", config={"cpu": cpu}, regs=regs,
                      memory=[(DATA_ADDR, bytes(range(16)) + bytes(0x70), True)], max_steps=settings.max_steps,
                      base=CODE_BASE)
    blocks = [Paragraph("A CALL reaches the built-in, with " + (", ".join(f"{r} = {v:#x}" for r, v in regs.items()
                                                                          if r != "rsp") or "no arguments")
                        + f", and 16 bytes at {DATA_ADDR:#x} holding 0, 1, ..., 15:")]
    if run.fault is not None:
        expl.sections.append(Section("Worked example", blocks + fault_blocks(run)))
        return expl
    after = run.machine.memory.read(DATA_ADDR, 16)
    if form.name not in ROUNDING:  # (a rounding function touches no memory)
        blocks.append(Table(["", *(f"+{i}" for i in range(16))], [
            ["before", *(str(b) for b in range(16))],
            ["after", *(Cell(str(b), "changed" if b != i else None) for i, b in enumerate(after))]]))
    state = run.machine.state
    if form.name in ROUNDING:
        blocks.append(Paragraph(f"x = -2.5: xmm0 = {state.read_register('xmm0'):#x}, rax = "
                                f"{state.read_register('rax'):#x} after it"))
    blocks.append(Paragraph(f"rax = {state.read_register('rax'):#x}; the next instruction is {state.pc:#x}, "
                            "the return address the CALL pushed (one step: the whole function and its return)"))
    expl.sections.append(Section("Worked example", blocks))
    return expl
