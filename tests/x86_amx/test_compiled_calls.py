"""Compiled kernels that call (kernels_with_calls.cpp): a helper function of their own, memset and memcpy, a
jump table, a function pointer, the stack protector, built by g++ and by zig's clang, with and without
-fstack-protector-strong, run from the object file (and a g++ -static executable) on isasim and compared with
products computed here in Python (INT64).  CALL, JMP r/m64 and fs:-relative moves are checked against GNU as
and objdump, and programs that call against this host's silicon.

Where a build holds an instruction isasim does not simulate yet (another family's), the run is an xfail whose
reason is isasim's one-line refusal naming it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from compilers import compile_object, gxx, zig_clang
from gnu_binutils import gas

from isasim import cli
from isasim.core.diff import diff
from isasim.core.errors import IsasimError
from isasim.core.machine import Machine
from isasim.core.trace import Init
from isasim.x86_amx import ISA
from isasim.x86_amx.assembler import assemble
from isasim.x86_amx.elf import DEFAULT_CANARY, TLS_BASE
from isasim.x86_amx.semantics.control import STACK_CHECK_FAILED

SOURCE = Path(__file__).with_name("kernels_with_calls.cpp")
A, B, C = 0x10000000, 0x10100000, 0x10200000
AMX = ["-mamx-tile", "-mamx-int8", "-mamx-bf16"]
PROTECTED = "-fstack-protector-strong"
# the vectorisers would bring vector forms (another family's) into the scalar loops
GXX_BUILDS = {f"g++ -{level}{' sp' if sp else ''}": ["-" + level, *AMX, "-fno-tree-vectorize",
                                                       PROTECTED if sp else "-fno-stack-protector"]
              for level in ("O0", "O2") for sp in (False, True)}
# memset and struct copies inlined as rep stos / rep movs
GXX_BUILDS["g++ -Os rep"] = ["-Os", *AMX, "-fno-tree-vectorize", "-mstringop-strategy=rep_8byte", "-fno-stack-protector"]
# position-independent code as shared libraries are built: data and (-fno-plt) calls through the GOT; with CET's
# ENDBR64 and NOTRACK jump tables
PIC = ["-fPIC", "-fcf-protection=full"]
GXX_BUILDS["g++ -O2 pic sp"] = ["-O2", *AMX, "-fno-tree-vectorize", *PIC, "-fno-plt", PROTECTED]
CLANG_BUILDS = {f"clang -{level}{' sp' if sp else ''}": ["-" + level, *AMX, "-fno-vectorize", "-fno-slp-vectorize",
                                                          PROTECTED if sp else "-fno-stack-protector"]
                for level, sp in (("O0", False), ("O0", True), ("O2", True))}
CLANG_BUILDS["clang -O2 pic sp"] = ["-O2", *AMX, "-fno-vectorize", "-fno-slp-vectorize", *PIC, "-fno-plt", PROTECTED]
BUILDS = [*GXX_BUILDS, *CLANG_BUILDS, "g++ -static"]
UNSUPPORTED = re.compile(r"is (\S+)(?: with [^,]+)?, which isasim does not simulate")


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> dict[str, Path | str]:
    """Every build's file, or why there is none: compiled once for the whole session."""
    where = tmp_path_factory.mktemp("calls")
    out: dict[str, Path | str] = {}
    for compiler, builds in ((gxx, GXX_BUILDS), (zig_clang, CLANG_BUILDS)):
        command, why = compiler()
        for n, (name, flags) in enumerate(builds.items()):
            if command is None:
                out[name] = why
                continue
            out[name] = where / f"{compiler.__name__}_{n}.o"
            compile_object(command, SOURCE, out[name], flags)
    command, why = gxx()
    out["g++ -static"] = why or "the static C library is not installed"
    if command is not None:
        main = where / "main.c"
        main.write_text("int main(void) { return 0; }\n")
        done = subprocess.run([*command, "-static", "-O2", *AMX, "-fno-tree-vectorize", PROTECTED, str(SOURCE),
                               str(main), "-o", str(where / "static")], capture_output=True, text=True, timeout=600)
        if done.returncode == 0:
            out["g++ -static"] = where / "static"
        # without the C library: the functions that call memset or __stack_chk_fail link to nothing there
        done = subprocess.run([*command, "-static", "-nostdlib", "-O2", *AMX, "-fno-tree-vectorize",
                               "-fno-stack-protector", "-Wl,-e,apply_epilogues", "-Wl,--unresolved-symbols=ignore-all",
                               str(SOURCE), "-o", str(where / "nostdlib")], capture_output=True, text=True, timeout=600)
        out["g++ -static -nostdlib"] = where / "nostdlib" if done.returncode == 0 else done.stderr[-500:]
    return out


def build_of(built, name: str) -> Path:
    found = built[name]
    if isinstance(found, str):
        pytest.skip(found)
    return found


def run(path: Path, function: str, args: list[int], memory: list, init_regs: dict | None = None) -> Machine:
    """``function`` of the file run to its end; an instruction isasim does not simulate yet is an xfail."""
    try:
        program, init = ISA.load_object(str(path), function, Init(dict(init_regs or {}), memory, args=args))
    except IsasimError as error:
        if UNSUPPORTED.search(error.message):
            pytest.xfail(error.message)
        raise
    machine = Machine("x86_amx")
    machine.load_init(program, init)
    machine.run()
    return machine


def int8(rng, *shape) -> np.ndarray:
    return rng.integers(-128, 128, shape, dtype=np.int8)


# ---- the kernels against Python's INT64 ---------------------------------------------------------------------


@pytest.mark.parametrize("build", BUILDS)
def test_an_amx_kernel_calls_its_helper(built, build):
    """amx_block_with_helper calls configure_three_tiles (which calls memset and loads the configuration from
    the caller's stack frame): C is A times B in INT64."""
    rng = np.random.default_rng(27)
    k = 128
    a, b = int8(rng, 16, k), int8(rng, k, 16)
    packed = b.reshape(k // 4, 4, 16).transpose(0, 2, 1).reshape(k // 4, 64)  # four rows of B to a 64-byte row
    machine = run(build_of(built, build), "amx_block_with_helper", [A, B, C, k],
                  [(A, a.tobytes(), False), (B, packed.tobytes(), False), (C, bytes(1024), True)])
    assert machine.fault is None and machine.halted, machine.fault
    got = np.frombuffer(machine.memory.read(C, 1024), dtype=np.int32).reshape(16, 16)
    assert (got == a.astype(np.int64) @ b.astype(np.int64)).all()
    assert machine.state.call_depth == 0


@pytest.mark.parametrize("build", BUILDS)
def test_memset_memcpy_and_a_helper(built, build):
    """row_dots clears a local array with memset, fills it by calling dot_i8 and copies it out with memcpy."""
    rng = np.random.default_rng(270)
    rows, n = 7, 45
    a, b = int8(rng, rows, n), int8(rng, n)
    machine = run(build_of(built, build), "row_dots", [A, B, C, rows, n],
                  [(A, a.tobytes(), False), (B, b.tobytes(), False), (C, bytes(8 * rows), True)])
    assert machine.fault is None, machine.fault
    want = a.astype(np.int64) @ b.astype(np.int64)
    assert (np.frombuffer(machine.memory.read(C, 8 * rows), dtype=np.int64) == want).all()
    assert machine.state.read_register("rax") == int(want.sum()) % (1 << 64)


EPILOGUE = {0: lambda x, y: x + y, 1: lambda x, y: x - y, 2: lambda x, y: x * y, 3: lambda x, y: 3 * x + y,
            4: lambda x, y: y - 2 * x, 5: lambda x, y: x + 100, 6: lambda x, y: x - 7}


@pytest.mark.parametrize("build", BUILDS)
def test_a_jump_table_and_a_function_pointer(built, build):
    """apply_epilogues calls a combiner through a table of function pointers (CALL r/m64), then epilogue for
    each op, whose switch g++ and clang make a jump table at -O2 (JMP r/m64)."""
    rng = np.random.default_rng(2700)
    n = 19
    a, b = int8(rng, n), int8(rng, n)
    ops = np.array([0, 3, 2, 6, 1, 4, 5, 9, 2, 0, 7], dtype=np.int8)
    for which in (0, 1):
        machine = run(build_of(built, build), "apply_epilogues", [A, B, n, C, len(ops), which],
                      [(A, a.tobytes(), False), (B, b.tobytes(), False), (C, ops.tobytes(), False)])
        assert machine.fault is None, machine.fault
        x = int(a.astype(np.int64) @ (b if which == 0 else b[::-1]).astype(np.int64))
        for i, op in enumerate(ops):
            x = EPILOGUE.get(int(op), lambda x, y: x)(x, i + 1)
        assert machine.state.read_register("rax") == x % (1 << 64)


@pytest.mark.parametrize("build", BUILDS)
def test_eight_arguments_two_on_the_stack(built, build):
    """strided_dot's seventh and eighth arguments (bias, scale) come from the stack: the sum of scale * a * b
    over a strided block, plus bias, in INT64."""
    rng = np.random.default_rng(2707)
    a, b = int8(rng, 5, 24), int8(rng, 5, 16)
    bias, scale = -(1 << 40) + 12345, -7
    machine = run(build_of(built, build), "strided_dot", [A, B, 5, 13, 24, 16, bias % (1 << 64), scale % (1 << 64)],
                  [(A, a.tobytes(), False), (B, b.tobytes(), False)])
    assert machine.fault is None and machine.halted, machine.fault
    want = bias + scale * int((a[:, :13].astype(np.int64) * b[:, :13]).sum())
    assert machine.state.read_register("rax") == want % (1 << 64)


@pytest.mark.parametrize("build", BUILDS)
def test_a_struct_copied_and_cleared(built, build):
    """copy_and_clear copies 192 bytes and clears 192 (rep movs / rep stos in the -Os rep build, memcpy and
    memset or vector moves elsewhere)."""
    rng = np.random.default_rng(2708)
    source = rng.integers(-(1 << 31), 1 << 31, 48, dtype=np.int32)
    machine = run(build_of(built, build), "copy_and_clear", [C, A, C + 0x100],
                  [(A, source.tobytes(), False), (C, b"\xee" * 0x200, True)])
    assert machine.fault is None and machine.halted, machine.fault
    assert machine.memory.read(C, 192) == source.tobytes() and machine.memory.read(C + 0x100, 192) == bytes(192)
    assert machine.state.read_register("rax") == int(source.astype(np.int64).sum()) % (1 << 64)


@pytest.mark.parametrize("build", [b for b in BUILDS if " sp" in b or "static" in b])
def test_a_clobbered_canary_reaches_stack_chk_fail(built, build):
    """clobber writes local[3 + past]: unharmed (past 0) it returns the sum; for some past the write lands on the
    canary, and the function's check calls __stack_chk_fail: the run stops with that fault, naming the
    built-in's instruction and the rule."""
    path = build_of(built, build)
    machine = run(path, "clobber", [0x1234, 0], [])
    assert machine.fault is None and machine.state.read_register("rax") == 1 + 2 + 3 + 0x1234
    faults = []
    for past in range(1, 8):
        machine = run(path, "clobber", [0x1234, past], [])
        if machine.fault is not None and machine.fault.kind == STACK_CHECK_FAILED:
            faults.append(machine.fault)
    assert len(faults) == 1, faults  # exactly the one slot that holds the canary
    fault = faults[0]
    assert fault.instruction == "__stack_chk_fail" and fault.index is not None
    assert "stack smashing detected" in fault.rule and f"{DEFAULT_CANARY:#x}" in fault.rule


def test_the_init_gives_the_thread_pointer_and_the_canary(built):
    """With fs_base in the init, the function reads its canary there (not from the default block)."""
    path = build_of(built, "g++ -O0 sp")
    block = bytearray(0x100)
    block[0x28:0x30] = (0x1122334455667700).to_bytes(8, "little")
    machine = run(path, "clobber", [5, 0], [(0x50000000, bytes(block), True)], {"fs_base": 0x50000000})
    assert machine.fault is None and machine.state.fs_base == 0x50000000
    program, init = ISA.load_object(str(path), "clobber", Init(args=[5, 0]))
    assert init.regs["fs_base"] == TLS_BASE and any(address == TLS_BASE for address, _d, _w in init.memory)


def test_step_goes_into_the_helper(built, capsys):
    """`isasim run` of the kernel and `record` then `replay` of its trace (the built-ins are instructions of the
    recorded program); stepping, the instruction after the CALL is the helper's first."""
    path = build_of(built, "g++ -O0 sp")
    memory = [(A, bytes(range(1, 9)), False), (B, bytes(range(1, 9)), False), (C, bytes(8), True)]
    program, init = ISA.load_object(str(path), "row_dots", Init(memory=memory, args=[A, B, C, 1, 8]))
    machine = Machine("x86_amx")
    machine.load_init(program, init)
    steps = []
    while not machine.finished:
        steps.append(machine.step())
    calls = [i for i, s in enumerate(steps) if s.instruction.form.mnemonic == "call"]
    assert calls and all(steps[i + 1].pc == steps[i].instruction.operands[0].address for i in calls
                         if hasattr(steps[i].instruction.operands[0], "address"))
    texts = [s.instruction.text for s in steps]
    assert "memset" in texts and "memcpy" in texts  # one step each
    memcpy = steps[texts.index("memcpy")]
    assert [w.where for w in memcpy.writes if w.kind == "mem"] == [C]  # its write, journalled
    assert machine.memory.read(C, 8) == sum(k * k for k in range(1, 9)).to_bytes(8, "little")
    assert program.labels["dot_i8"] in {s.pc for s in steps}


def test_record_and_replay_a_kernel_with_calls(built, tmp_path, capsys):
    path = build_of(built, "clang -O0 sp")
    init = tmp_path / "rows.init.json"
    init.write_text('{"memory": [{"name": "A", "addr": "0x10000000", "type": "int8", "shape": [2, 4], '
                    '"values": [1, 2, 3, 4, -1, -2, -3, -4]}, {"name": "b", "addr": "0x10100000", "type": "int8", '
                    '"shape": [1, 4], "values": [5, 6, 7, 8]}, {"name": "out", "addr": "0x10200000", "type": "int64", '
                    '"shape": [1, 2], "size": 16}], "args": ["A", "b", "out", 2, 4]}')
    trace = tmp_path / "rows.trace.json"
    capsys.readouterr()
    assert cli.main(["record", str(path), "--function", "row_dots", "--init", str(init), "-o", str(trace),
                     "--no-color"]) == 0, capsys.readouterr().err
    assert cli.main(["replay", str(trace), "--no-color"]) == 0, capsys.readouterr().out


def test_a_program_linked_without_the_c_library(built, capsys):
    """g++ -static -nostdlib: the kernel (its helper's memset inlined at -O2) and the function-pointer table run
    by --function; a function whose call to memset the link left unresolved is refused before the run."""
    path = build_of(built, "g++ -static -nostdlib")
    test_an_amx_kernel_calls_its_helper(built, "g++ -static -nostdlib")
    test_a_jump_table_and_a_function_pointer(built, "g++ -static -nostdlib")
    capsys.readouterr()
    assert cli.main(["run", str(path), "--function", "row_dots", "--no-color"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "function 'row_dots' calls or uses code outside it" in err


# ---- refusals: before the run, one line --------------------------------------------------------------------

CALLS_PRINTF = """.intel_syntax noprefix
.text
.globl report
.type report, @function
report:
    push rbx
    call helper
    pop rbx
    ret
.size report, .-report
.type helper, @function
helper:
    jmp printf
.size helper, .-helper
"""


def test_an_external_symbol_is_refused_before_the_run(tmp_path, capsys):
    if shutil.which("as") is None:
        pytest.skip("GNU as (binutils) is not installed")
    (tmp_path / "r.s").write_text(CALLS_PRINTF)
    subprocess.run(["as", str(tmp_path / "r.s"), "-o", str(tmp_path / "r.o")], check=True, timeout=60)
    capsys.readouterr()
    assert cli.main(["run", str(tmp_path / "r.o"), "--function", "report", "--no-color"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "function 'helper' calls or uses 'printf'" in err and "memset, memcpy, memmove, __stack_chk_fail" in err


# ---- encodings against GNU as and objdump ------------------------------------------------------------------

LINES = ["call rax", "call r12", "call QWORD PTR [rax+rcx*8+0x10]", "call QWORD PTR [rsp+0x8]",
         "call QWORD PTR [r13+0x0]", "call QWORD PTR [rip+0x100]", "call QWORD PTR [rax*8+0x1000]", "jmp rax",
         "jmp r11", "jmp QWORD PTR [rax*8+0x1000]", "jmp QWORD PTR [rdx+rax*8]", "jmp QWORD PTR [r12]",
         "mov rax,QWORD PTR fs:0x28", "sub rdx,QWORD PTR fs:0x28", "xor rcx,QWORD PTR fs:0x28",
         "mov rax,QWORD PTR fs:[rax+0x8]", "mov rbx,QWORD PTR gs:[rbx]", "mov WORD PTR fs:[rcx],ax",
         "cmp eax,DWORD PTR fs:0x10", "mov QWORD PTR fs:0x28,rdx", "add BYTE PTR gs:[rdi+rsi*2-0x4],0x7",
         # -fcf-protection's jump tables and calls through pointers
         "notrack jmp rax", "notrack jmp r11", "notrack call rdx", "notrack call r9",
         "notrack jmp QWORD PTR [rax*8+0x1000]", "notrack call QWORD PTR [rip+0x100]", "notrack jmp QWORD PTR [r12]"]


@pytest.mark.needs_binutils("nm", "objcopy")
def test_encodings_and_text_are_gnu_as_and_objdump(tmp_path):
    for line, (want, text) in zip(LINES, gas(LINES)):
        (ins,) = assemble(line, base=0).instructions
        assert ins.encoding == want, (line, ins.encoding.hex(" "), want.hex(" "))
        assert re.sub(r"\s*#.*", "", ins.text) == text, (line, ins.text, text)
        (again,) = ISA.disassemble(want, base=0).instructions
        assert again.text == ins.text
    program = assemble("call f\nf: ret", base=0)
    [(want, text)] = gas(["call .+5"])
    assert program.instructions[0].encoding == want and text == "call 0x5"


# ---- semantics: worked examples and this host's silicon -------------------------------------------------------

CALLING = """
    mov rbx, 0x10000
    lea rax, [rip+{f}]
    mov QWORD PTR [rbx], rax
    call QWORD PTR [rbx]
    mov rcx, rax
    call rax
    lea rdx, [rip+{over}]
    jmp rdx
    mov r8, 0x1
over:
    call f
    ret
f:  mov r9, QWORD PTR [rsp]
    add r10, 0x3
    ret
"""


def calling_program():
    """CALLING with its [rip+n] aimed at its labels (isasim's assembler takes no label inside an address)."""
    first = assemble(CALLING.format(f=0, over=0))
    leas = [i for i in first.instructions if i.form.mnemonic == "lea"]
    program = assemble(CALLING.format(f=hex(first.labels["f"] - leas[0].next_address),
                                      over=hex(first.labels["over"] - leas[1].next_address)))
    init = Init({"rsp": 0x10000 + 0x800}, [(0x10000, bytes(0x1000), True)])
    return program, init


def test_call_pushes_and_ret_pops():
    program, init = calling_program()
    machine = Machine("x86_amx")
    machine.load_init(program, init)
    machine.run()
    assert machine.fault is None and machine.halted
    state = machine.state
    assert state.read_register("r10") == 9 and state.read_register("r8") == 0  # called 3 times; jumped over the mov
    assert state.read_register("rsp") == 0x10800 and state.call_depth == 0
    call = next(i for i in program.instructions if i.text == "call f")
    assert state.read_register("r9") == call.next_address  # the return address the callee read, last


@pytest.mark.needs_silicon
def test_calls_agree_with_silicon():
    """The same program on this host's CPU, compared at the end and after every instruction."""
    program, init = calling_program()
    for mode in ("final", "lockstep"):
        report = diff("x86_amx", {}, program, init, mode=mode)
        assert report.divergence is None, report


@pytest.mark.needs_silicon
def test_fuzzed_calls_agree_with_silicon(tmp_path):
    """The scalar fuzzer's programs, calls and indirect jumps among them (fuzz/scalar.py's _render_call)."""
    from isasim.x86_amx import fuzz

    summary = fuzz.run_fuzz(1000, 27, against="silicon", isa_subset="scalar", out_dir=tmp_path)
    assert not summary.divergences, summary.divergences
    assert summary.instructions.get("call", 0) >= 5 and summary.instructions.get("jmp", 0) >= 5, summary.instructions
    lockstep = fuzz.run_fuzz(150, 2727, against="silicon", isa_subset="scalar", lockstep=True, out_dir=tmp_path)
    assert not lockstep.divergences, lockstep.divergences


@pytest.mark.needs_silicon
@pytest.mark.parametrize("build", ["g++ -O0 sp", "g++ -O2 sp", "clang -O0 sp", "g++ -Os rep", "g++ -O2 pic sp",
                                   "g++ -static"])
def test_compiled_calls_agree_with_silicon(built, build):
    """The compiled functions that call (helpers, memset and memcpy, which the silicon backend runs at their
    UD2 as isasim does, a function-pointer table, the stack protector's canary read from the init's thread
    block, a clobbered canary reaching __stack_chk_fail) on this host's CPU, after every instruction."""
    path = build_of(built, build)
    rng = np.random.default_rng(27_27)
    a, b = int8(rng, 3, 11), int8(rng, 11)
    ops = np.array([0, 3, 2, 6, 1, 4, 5, 9], dtype=np.int8)
    memory = [(A, a.tobytes() + bytes(192), False), (B, b.tobytes(), False), (C, ops.tobytes() + bytes(0x200), True)]
    runs = [("row_dots", [A, B, C + 16, 3, 11])]
    if "static" not in build:  # a linked program's pointers hold link addresses, which only the simulator maps
        runs.append(("apply_epilogues", [A, B, 11, C, len(ops), 1]))
    runs += [("clobber", [0x1234, past]) for past in range(8)]
    runs += [("strided_dot", [A, A + 1, 3, 5, 11, 11, 1 << 33, 3]), ("copy_and_clear", [C, A, C + 0x100])]
    stops = 0
    for function, args in runs:
        try:
            program, init = ISA.load_object(str(path), function, Init(memory=list(memory), args=args))
        except IsasimError as error:
            if UNSUPPORTED.search(error.message):
                continue  # another family's instruction: the run tests above say which
            raise
        report = diff("x86_amx", {}, program, init, mode="lockstep")
        assert report.divergence is None, (function, args, report)
        stops += report.a_fault is not None and report.a_fault.kind == STACK_CHECK_FAILED
    assert stops == (0 if "rep" in build else 1)  # the one clobber that hits the canary, on both (if it has one)


def test_memset_memcpy_memmove_as_c_says():
    program = assemble("call f\nret\nf: memset")
    for name, regs, want in (
            ("memset", {"rdi": 0x10004, "rsi": 0x1A7, "rdx": 5}, b"\0\1\2\3" + b"\xa7" * 5 + bytes(range(9, 16))),
            ("memcpy", {"rdi": 0x10008, "rsi": 0x10000, "rdx": 4}, bytes(range(8)) + bytes(range(4)) + bytes(range(12, 16))),
            ("memmove", {"rdi": 0x10002, "rsi": 0x10000, "rdx": 8}, b"\0\1" + bytes(range(8)) + bytes(range(10, 16)))):
        program = assemble(f"call f\nret\nf: {name}")
        machine = Machine("x86_amx")
        machine.load(program, regs={"rsp": 0x20800, **regs},
                     memory=[(0x10000, bytes(range(16)), True), (0x20000, bytes(0x1000), True)])
        machine.run()
        assert machine.fault is None and machine.memory.read(0x10000, 16) == want, name
        assert machine.state.read_register("rax") == regs["rdi"] and machine.steps == 3
