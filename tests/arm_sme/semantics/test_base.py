"""The A64 base instructions of issue 28 on isasim alone, where QEMU cannot show the rule: a call stack across
BL/BLR/RET with the run ending at the RET that has no call pending, ADRP's page arithmetic at a known address,
LDR (literal) reading the code where it is mapped (a translation fault where it is not), SVCR's and FPCR's RES0
bits, and the hints running as NOP.  Hand-computed values: examples only (the vs-QEMU and vs-clang tests are
the evidence)."""

from __future__ import annotations

from isasim.core.machine import Machine


def _run(text: str, regs: dict | None = None, memory=None, svl: int = 128):
    machine = Machine("arm_sme", {"svl": svl})
    program = machine.assemble(text)
    machine.load(program, regs=regs or {}, memory=memory or [])
    return machine, machine.run(1000), program


def test_calls_return_through_x30_and_the_outermost_ret_ends_the_run():
    machine, result, program = _run("""
        mov x19, x30
        bl f
        adr x9, g
        blr x9
        mov x30, x19
        ret
        add x0, x0, #100
    f:
        stp x29, x30, [sp, #-16]!
        bl g
        ldp x29, x30, [sp], #16
        ret
    g:
        add x0, x0, #1
        ret
    """, regs={"x30": 0xDEADBEEF, "sp": 0x20010}, memory=[(0x20000, bytes(16), True)])
    assert result.fault is None and machine.halted
    assert machine.state.x[0] == 2 and machine.state.x[30] == 0xDEADBEEF and machine.state.call_depth == 0


def test_adrp_is_the_labels_page_less_this_instructions_page():
    machine, result, _ = _run("adrp x0, #8192\nadrp x1, #-4096\nadr x2, #-4")
    base = 0x10000  # the assembler's default code base
    assert machine.state.x[0] == base + 8192 and machine.state.x[1] == base - 4096
    assert machine.state.x[2] == base + 8 - 4


def test_a_literal_load_reads_the_code_where_it_is_mapped_and_faults_where_it_is_not():
    text = "ldr x0, lit\nldrsw x1, lit\nldr q2, lit\nb end\nlit:\n.inst 0x9b227c20\n.inst 0x91000421\nend:"
    machine = Machine("arm_sme", {"svl": 256})
    program = machine.assemble(text)
    machine.load(program, memory=[(program.base, program.code + bytes(16), False)])
    assert machine.run(100).fault is None
    low, high = 0x9B227C20, 0x91000421
    assert machine.state.x[0] == (high << 32) | low and machine.state.x[1] == 0xFFFFFFFF_9B227C20
    assert bytes(machine.state.z[2][:8]) == ((high << 32) | low).to_bytes(8, "little")
    assert not machine.state.z[2][16:].any()
    _, result, _ = _run(text)
    assert result.fault is not None and result.fault.kind == "TRANSLATION"


def test_svcr_and_fpcr_keep_their_res0_bits_zero_and_svcr_writes_zero_as_smstop_does():
    machine, result, _ = _run("""
        mov x1, #-1
        msr fpcr, x1
        mrs x2, fpcr
        msr fpsr, x1
        mrs x3, fpsr
        movk x1, #0xfffe, lsl #0
        msr svcr, x1
        mrs x4, svcr
    """, regs={"svcr": 3})
    assert result.fault is None
    assert machine.state.x[2] == 0x07FF2007 and machine.state.x[3] == 0xF800009F and machine.state.x[4] == 2


def test_divides_by_zero_give_zero_and_the_most_negative_over_minus_one_wraps():
    machine, result, _ = _run("""
        mov x1, #7
        sdiv x2, x1, xzr
        udiv w3, w1, wzr
        mov x4, #0x8000000000000000
        mov x5, #-1
        sdiv x6, x4, x5
        mov w7, #-7
        mov w8, #2
        sdiv w9, w7, w8
    """)
    assert machine.state.x[2] == 0 and machine.state.x[3] == 0 and machine.state.x[6] == 1 << 63
    assert machine.state.x[9] == 0xFFFFFFFD  # -3: towards zero, written zero-extended


def test_the_pointer_authentication_and_bti_hints_run_as_nop():
    machine, result, _ = _run("paciasp\nbti c\nautiasp\npacibsp\nautibsp", regs={"x30": 0x1234})
    assert result.fault is None and machine.state.x[30] == 0x1234 and result.steps == 5
