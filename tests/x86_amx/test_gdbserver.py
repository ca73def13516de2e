"""gdb itself drives ``isasim gdbserver`` on the seed's compiled AMX kernels (examples/x86_amx/compiled).

kernels.cpp is compiled here once, with -g, by g++ and by zig's clang, so that no check depends on one
compiler's code layout or line table.  gdb is the client and the judge: its line table finds the breakpoints,
its disassembler names the instructions, its x86-64 description types the registers, and it prints what the
tests read.  Every value is compared with the init's "expect" (worked out by numpy, make_inits.py) or with the
init's own inputs, never with isasim's output.  Debian's gdb 13 and gdb-for-pwndbg's gdb 18 are both used where
a session is cheap; each is skipped, saying why, where it is missing.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from compilers import compile_object, gxx, zig_clang
from gdb_client import gdb_or_skip, gdbserver_command, run_gdb

ROOT = Path(__file__).resolve().parents[2]
COMPILED = ROOT / "examples" / "x86_amx" / "compiled"
SOURCE = COMPILED / "kernels.cpp"
FLAGS = ["-g", "-O2", "-mamx-tile", "-mamx-int8", "-mamx-bf16"]
KERNEL = "amx_block_configured"
INIT_PATH = COMPILED / f"{KERNEL}.init.json"
INIT = json.loads(INIT_PATH.read_text())
REGIONS = {region["name"]: region for region in INIT["memory"]}
C_ADDRESS = int(REGIONS["C"]["addr"], 16)
A_ADDRESS = int(REGIONS["A"]["addr"], 16)
EXPECTED_C = INIT["expect"]["memory"][0]["values"]  # numpy's product, row after row
EXPECTED_ROWS = [EXPECTED_C[16 * row:16 * row + 16] for row in range(16)]
MARK = "@@gdb-test-section "
NO_HISTORY = re.compile(r"No more reverse-execution history|Reached end of recorded history; stopping\.\s*"
                        r"Backward execution from here not possible")
GDBS = ["system", "wheel"]
X86_64 = "i386:x86-64"

assert int(INIT["expect"]["memory"][0]["addr"], 16) == C_ADDRESS and len(EXPECTED_C) == 256


# ---- the compiled kernel, and what gdb knows of it without any target ---------------------------------------

def source_line(function: str, statement: str) -> int:
    """The line of kernels.cpp (1-based) holding ``statement`` inside ``function``'s body."""
    lines = SOURCE.read_text().splitlines()
    start = next(number for number, text in enumerate(lines) if re.search(rf"\b{function}\(", text))
    for number in range(start, len(lines)):
        if statement in lines[number]:
            return number + 1
        if lines[number].startswith("}"):
            break
    raise AssertionError(f"{statement!r} is not in {function} in {SOURCE}")


STORE_LINE = source_line(KERNEL, "_tile_stored(0, c, 64)")
ZERO_LINE = source_line(KERNEL, "_tile_zero(0)")
LOAD_B_LINE = source_line(KERNEL, "_tile_loadd(2, packed_b, 64)")


def any_gdb() -> str:
    """Either gdb, for what gdb reads from the object file alone (either skip's reason if neither is here)."""
    try:
        return gdb_or_skip("system", X86_64)
    except pytest.skip.Exception:
        return gdb_or_skip("wheel", X86_64)


class Kernel:
    """An object file with the kernel, and the kernel's instructions as gdb disassembles them from the file."""

    def __init__(self, compiler: str, path: Path):
        self.compiler = compiler
        self.path = path
        listing = run_gdb(any_gdb(), [f"disassemble {KERNEL}"], program=str(path)).stdout
        self.instructions = [(int(address, 16), text.split()[0])
                             for address, text in re.findall(r"^\s+(0x[0-9a-f]+) <\+\d+>:\s+(.+)$", listing, re.M)]
        assert self.instructions, listing

    def address(self, mnemonic: str, occurrence: int = 0) -> int:
        return [address for address, name in self.instructions if name == mnemonic][occurrence]

    def after(self, mnemonic: str, occurrence: int = 0) -> int:
        """The address of the instruction that follows the ``occurrence``-th ``mnemonic``."""
        addresses = [address for address, _ in self.instructions]
        return addresses[addresses.index(self.address(mnemonic, occurrence)) + 1]

    @property
    def start(self) -> int:
        return self.instructions[0][0]

    def break_at_line(self, line: int, mnemonic: str) -> str:
        """A breakpoint on ``line``: by the line for g++; by the address of its instruction for clang, which
        marks the rows of inlined intrinsics as not being statements (gdb then moves a line breakpoint to the
        function's last line), though ``info line *ADDRESS`` still gives the line."""
        return f"break kernels.cpp:{line}" if self.compiler == "g++" else f"break *{self.address(mnemonic):#x}"


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """compiler -> Kernel, each compiled once, on first use; a compiler that is missing skips its tests."""
    built: dict[str, Kernel] = {}
    folder = tmp_path_factory.mktemp("gdbserver_kernels")

    def kernel(compiler: str) -> Kernel:
        if compiler not in built:
            command, problem = gxx() if compiler == "g++" else zig_clang()
            if command is None:
                pytest.skip(f"{compiler} not usable: {problem}")
            path = folder / f"kernels_{compiler.replace('+', 'x')}.o"
            compile_object(command, SOURCE, path, FLAGS)
            built[compiler] = Kernel(compiler, path)
        return built[compiler]

    return kernel


# ---- running gdb, and reading what it printed ---------------------------------------------------------------

def gdb_session(gdb: str, program: Path | None, server_arguments: list[str], steps: list) -> dict[str, str]:
    """One gdb batch session against ``isasim gdbserver --stdio``: ``steps`` are (name, command or commands);
    the result maps each name to what gdb printed for it, and "all" to the whole output."""
    commands = [f"target remote | {gdbserver_command(*server_arguments)}"]
    for name, step in steps:
        commands.append(f"echo {MARK}{name}\\n")
        commands += [step] if isinstance(step, str) else step
    commands.append(f"echo {MARK}(session over)\\n")
    done = run_gdb(gdb, ["set print repeats unlimited", "set print elements unlimited", *commands],
                   program=None if program is None else str(program))
    sections = {"all": done.stdout}
    parts = done.stdout.split(MARK)
    assert len(parts) == len(steps) + 2, done.stdout[-3000:]
    for part in parts[1:]:
        name, _, text = part.partition("\n")
        sections[name] = text
    return sections


def kernel_server(kernel: Kernel, init: Path = INIT_PATH) -> list[str]:
    return [str(kernel.path), "--function", KERNEL, "--init", str(init)]


def numbers(text: str) -> list[int]:
    """The integers of a gdb value such as ``$1 = {1, 0, -5}`` (after its ``$N =``), in order."""
    _, _, value = text.partition("=")
    return [int(word, 0) for word in re.findall(r"-?(?:0x[0-9a-f]+|\d+)", value)]


def examined(text: str) -> list[int]:
    """The words of gdb's ``x/Ndw`` output (each line ``ADDRESS:`` then the values)."""
    return [int(word) for line in text.splitlines() if ":" in line
            for word in line.split(":", 1)[1].split()]


def tile_table(text: str) -> list[list[int]]:
    """The rows of a printed 16-row table whose columns may be split into blocks to fit a width: each block a
    line of its column numbers, then one line per row (the row number, then that row's values)."""
    table: list[dict[int, int]] = [{} for _ in range(16)]
    columns: list[int] = []
    rows_in_block = 16
    for line in text.splitlines():
        if not re.fullmatch(r"\s*-?\d+(\s+-?\d+)*\s*", line):
            continue
        values = [int(word) for word in line.split()]
        if rows_in_block == 16:  # a block's header: its column numbers
            columns, rows_in_block = values, 0
            assert columns == list(range(columns[0], columns[0] + len(columns))), line
            continue
        assert values[0] == rows_in_block and len(values) == len(columns) + 1, line
        table[rows_in_block].update(zip(columns, values[1:]))
        rows_in_block += 1
    return [[row[column] for column in sorted(row)] for row in table]


def rip_of(text: str) -> int:
    """The pc in gdb's ``info registers rip`` line."""
    found = re.search(r"^rip\s+(0x[0-9a-f]+)", text, re.M)
    assert found, text
    return int(found.group(1), 16)


def dword(values: list[int], offset: int = 0) -> int:
    """The little-endian signed 32-bit integer of four byte values, as gdb prints ``*(int*)``."""
    return int.from_bytes(bytes(value & 0xFF for value in values[offset:offset + 4]), "little", signed=True)


# ---- forwards: the breakpoint before the store, the tile, the stored matrix, registers, monitor -------------

@pytest.fixture(scope="module", params=[(compiler, which) for compiler in ("g++", "zig") for which in GDBS],
                ids=lambda p: f"{p[0]}-gdb-{p[1]}")
def store_session(request, kernels):
    compiler, which = request.param
    gdb = gdb_or_skip(which, X86_64)
    kernel = kernels(compiler)
    steps = [
        ("cfg at start", "p $tilecfg_raw"),
        ("break", kernel.break_at_line(STORE_LINE, "tilestored")),
        ("continue", "continue"),
        ("rip", "info registers rip"),
        ("line", "info line *$pc"),
        ("insn", "x/i $pc"),
        *[(f"row {row}", f"p $tmm0.i32[{row}]") for row in range(16)],
        ("C before", f"x/256dw {C_ADDRESS:#x}"),
        ("cfg", "p $tilecfg_raw"),
        ("registers", "info registers"),
        ("zmm0", "p $zmm0"),
        ("zmm0 written", ["set var $zmm0.v16_int32[3] = 7", "set var $zmm0.v16_int32[12] = -5",
                          "maint flush register-cache", "p $xmm0.v4_int32[3]", "p $zmm0.v16_int32[12]"]),
        ("monitor p", "monitor p tmm0 int32"),
        ("monitor explain", "monitor explain"),
        ("monitor help", "monitor help"),
        ("past the store", "next" if compiler == "g++" else "stepi"),
        ("rip after", "info registers rip"),
        ("C after", f"x/256dw {C_ADDRESS:#x}"),
        ("frame", "info frame"),
        ("finish", "finish"),
        ("finished", "info registers rip rsp"),
        ("C finished", f"x/256dw {C_ADDRESS:#x}"),
        ("continue after finish", "continue"),
    ]
    return kernel, gdb_session(gdb, kernel.path, kernel_server(kernel), steps)


def test_breakpoint_before_the_store_shows_the_product_in_tmm0_and_the_store_writes_it(store_session):
    kernel, out = store_session
    assert "Breakpoint 1, " in out["continue"] and f"{KERNEL} (" in out["continue"], out["continue"]
    assert rip_of(out["rip"]) == kernel.address("tilestored"), out["rip"]
    assert f"<{KERNEL}" in out["rip"], out["rip"]  # gdb names the function the pc is in
    assert re.search(rf"Line {STORE_LINE} of \"[^\"]*kernels\.cpp\"", out["line"]), out["line"]
    assert "tilestored" in out["insn"], out["insn"]
    for row in range(16):
        assert numbers(out[f"row {row}"]) == EXPECTED_ROWS[row], (row, out[f"row {row}"])
    assert examined(out["C before"]) != EXPECTED_C  # not stored yet: the product is only in the tile
    assert len(examined(out["C before"])) == 256
    assert rip_of(out["rip after"]) == kernel.after("tilestored"), out["rip after"]
    assert examined(out["C after"]) == EXPECTED_C, out["C after"]


def test_finish_returns_to_the_caller_with_the_stack_popped_and_the_result_readable(store_session):
    """gdb's finish stops where the kernel returns to, in the caller's frame: rsp is the frame address gdb
    worked out from the object file's call frame information (``info frame``'s "frame at")."""
    _kernel, out = store_session
    assert "0xdeadbeefdeadbeef in ?? ()" in out["finish"], out["finish"]  # the caller isasim's loader stands for
    frame = re.search(r"frame at (0x[0-9a-f]+)", out["frame"])
    assert frame, out["frame"]
    assert re.search(r"^rip\s+0xdeadbeefdeadbeef\s", out["finished"], re.M), out["finished"]
    assert re.search(rf"^rsp\s+{frame.group(1)}\s", out["finished"], re.M), (frame.group(1), out["finished"])
    assert examined(out["C finished"]) == EXPECTED_C
    assert "exited normally" in out["continue after finish"], out["continue after finish"]


def test_tilecfg_raw_holds_the_loaded_configuration_and_the_x86_registers_print(store_session):
    _, out = store_session
    assert numbers(out["cfg at start"]) == [0] * 64, out["cfg at start"]  # before LDTILECFG: the INIT state
    assert numbers(out["cfg"]) == REGIONS["tilecfg"]["values"], out["cfg"]
    registers = out["registers"]
    for name in ("rax", "rbx", "rsp", "rip", "eflags", "cs", "tilecfg_raw", "tmm0"):
        assert re.search(rf"^{name}\s", registers, re.M), (name, registers[:2000])
    assert not re.search(r"error|Invalid|not available", registers, re.I), registers[:2000]
    # the kernel's arguments, as the init passes them in the SysV registers (config, A, packed B, C)
    for register, argument in zip(("rdi", "rsi", "rdx", "rcx"), INIT["args"]):
        assert re.search(rf"^{register}\s+{REGIONS[argument]['addr']}\s", registers, re.M), (register, registers)
    assert "v16_int32 = {" in out["zmm0"] and "v8_int64 = {" in out["zmm0"], out["zmm0"]
    # gdb writes zmm0 as its pieces (xmm0, ymm0h, zmm0h) and reads them back from the server
    written = re.findall(r"^\$\d+ = (-?\d+)$", out["zmm0 written"], re.M)
    assert written == ["7", "-5"], out["zmm0 written"]


def test_monitor_commands_show_the_tile_explain_the_next_instruction_and_list_themselves(store_session):
    _, out = store_session
    assert tile_table(out["monitor p"]) == EXPECTED_ROWS, out["monitor p"]
    mnemonic = out["insn"].split(":", 1)[1].split()[0]  # gdb's disassembler's name for the next instruction
    assert mnemonic == "tilestored" and mnemonic in out["monitor explain"].lower(), out["monitor explain"][:1000]
    assert "monitor explain" in out["monitor help"] and "monitor p" in out["monitor help"], out["monitor help"]


# ---- backwards ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("which", GDBS)
def test_reverse_steps_and_continues_restore_registers_tiles_and_memory(which, kernels):
    gdb = gdb_or_skip(which, X86_64)
    kernel = kernels("g++")
    b_row0 = REGIONS["packed B"]["values"][:64]
    steps = [
        ("reverse at start", "reverse-stepi"),
        ("rip at start", "info registers rip"),
        ("registers at start", "info registers"),
        ("forwards", "stepi 5"),
        ("registers forwards", "info registers"),
        ("backwards", "reverse-stepi 5"),
        ("registers back", "info registers"),
        ("breakpoints", [f"break kernels.cpp:{LOAD_B_LINE}", f"break kernels.cpp:{STORE_LINE}"]),
        ("to load B", "continue"),
        ("to store", "continue"),
        ("tmm2 at store", "p $tmm2.i8[0]"),
        ("past store", "next"),
        ("C after store", f"x/4dw {C_ADDRESS:#x}"),
        ("back to store", "reverse-continue"),
        ("rip back at store", "info registers rip"),
        ("C back at store", f"x/4dw {C_ADDRESS:#x}"),
        ("back to load B", "reverse-continue"),
        ("rip back at load B", "info registers rip"),
        ("tmm2 back at load B", "p $tmm2.i8[0]"),
        ("back to start", "reverse-continue"),
        ("rip back at start", "info registers rip"),
    ]
    out = gdb_session(gdb, kernel.path, kernel_server(kernel), steps)
    assert NO_HISTORY.search(out["reverse at start"]), out["reverse at start"]
    assert rip_of(out["rip at start"]) == kernel.start
    assert out["registers forwards"] != out["registers at start"]  # five steps changed rip, rax and the tiles
    assert out["registers back"] == out["registers at start"]
    assert "Breakpoint 1, " in out["to load B"] and "Breakpoint 2, " in out["to store"]
    assert numbers(out["tmm2 at store"]) == [value - 256 if value > 127 else value for value in b_row0]
    assert examined(out["C after store"]) == EXPECTED_C[:4]
    assert "Breakpoint 2, " in out["back to store"], out["back to store"]
    assert rip_of(out["rip back at store"]) == kernel.address("tilestored")
    assert examined(out["C back at store"]) == [0, 0, 0, 0]  # the store is undone (the init's C is zeros)
    assert "Breakpoint 1, " in out["back to load B"], out["back to load B"]
    assert rip_of(out["rip back at load B"]) == kernel.address("tileloadd", 1)
    assert numbers(out["tmm2 back at load B"]) == [0] * 64  # B not loaded yet
    assert NO_HISTORY.search(out["back to start"]), out["back to start"]
    assert rip_of(out["rip back at start"]) == kernel.start


# ---- faults as signals -------------------------------------------------------------------------------------------

def fault_steps() -> list:
    return [("continue", "continue"), ("insn", "x/i $pc"), ("where", "info registers rip"),
            ("continue after", "continue")]


def test_tile_instruction_without_tilecfg_is_sigill_and_continuing_ends_the_process(tmp_path):
    gdb = gdb_or_skip("system", X86_64)
    program = tmp_path / "unconfigured.s"
    program.write_text(".intel_syntax noprefix\nunconfigured:\n    mov eax, 1\n    tilezero tmm0\n    ret\n")
    out = gdb_session(gdb, None, [str(program)], fault_steps())
    assert "Program received signal SIGILL" in out["continue"], out["all"]
    # the fault's instruction, index and rule reach gdb's console (an 'O' packet before the stop)
    assert re.search(r"#UD at instruction 1 at 0x[0-9a-f]+ \(tilezero tmm0\): .*not configured", out["continue"]), \
        out["continue"]
    assert "tilezero" in out["insn"], out["insn"]  # gdb's disassembler at the stop pc
    assert "Program terminated with signal SIGILL" in out["continue after"], out["continue after"]


def test_ldtilecfg_of_an_unsupported_palette_is_sigsegv(tmp_path):
    gdb = gdb_or_skip("system", X86_64)
    program = tmp_path / "bad_palette.s"
    program.write_text(".intel_syntax noprefix\nbad_palette:\n    nop\n    ldtilecfg [rcx]\n    ret\n")
    init = tmp_path / "bad_palette.init.json"
    # palette 2 does not exist on any AMX CPU (CPUID leaf 0x1D reports max_palette 1): LDTILECFG raises #GP
    init.write_text(json.dumps({"regs": {"rcx": "0x10000"},
                                "memory": [{"addr": "0x10000", "hex": (bytes([2]) + bytes(63)).hex()}]}))
    out = gdb_session(gdb, None, [str(program), "--init", str(init)], fault_steps())
    assert "Program received signal SIGSEGV" in out["continue"], out["all"]
    assert "ldtilecfg" in out["insn"], out["insn"]
    assert "Program terminated with signal SIGSEGV" in out["continue after"], out["continue after"]


def test_compiled_kernel_given_an_all_zero_tilecfg_stops_with_sigill_at_tile_zero(kernels, tmp_path):
    gdb = gdb_or_skip("system", X86_64)
    kernel = kernels("g++")
    init = json.loads(INIT_PATH.read_text())
    for region in init["memory"]:
        if region["name"] == "tilecfg":
            region["values"] = [0] * 64  # palette 0: LDTILECFG leaves the tiles unconfigured
    init.pop("expect")
    init_path = tmp_path / "unconfigured.init.json"
    init_path.write_text(json.dumps(init))
    out = gdb_session(gdb, kernel.path, kernel_server(kernel, init_path),
                      [*fault_steps()[:3], ("line", "info line *$pc"), ("continue after", "continue")])
    assert "Program received signal SIGILL" in out["continue"], out["all"]
    assert "tilezero" in out["insn"], out["insn"]
    assert rip_of(out["where"]) == kernel.address("tilezero") and f"<{KERNEL}" in out["where"]
    assert f"Line {ZERO_LINE} of" in out["line"], out["line"]
    assert "Program terminated with signal SIGILL" in out["continue after"], out["continue after"]


# ---- watchpoints ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("which", GDBS)
def test_watchpoints_stop_after_the_tile_load_and_the_tile_store(which, kernels):
    gdb = gdb_or_skip(which, X86_64)
    kernel = kernels("g++")
    steps = [
        ("watch", [f"watch *(int*){C_ADDRESS:#x}", f"rwatch *(int*){A_ADDRESS:#x}"]),
        ("read", "continue"),
        ("rip read", "info registers rip"),
        ("written", "continue"),
        ("rip written", "info registers rip"),
        ("to the end", "continue"),
    ]
    out = gdb_session(gdb, kernel.path, kernel_server(kernel), steps)
    assert "Hardware read watchpoint 2" in out["read"], out["all"]
    assert re.search(rf"Value = {dword(REGIONS['A']['values'])}\b", out["read"]), out["read"]
    # x86 reports a data breakpoint after the instruction that accessed the data: here, A's tile load
    assert rip_of(out["rip read"]) == kernel.after("tileloadd", 0), out["rip read"]
    assert "Hardware watchpoint 1" in out["written"], out["written"]
    assert re.search(r"Old value = 0\s+New value = " + str(EXPECTED_C[0]) + r"\b", out["written"]), out["written"]
    assert rip_of(out["rip written"]) == kernel.after("tilestored"), out["rip written"]
    assert "exited normally" in out["to the end"], out["to the end"]


# ---- Ctrl-C ---------------------------------------------------------------------------------------------------------

class InteractiveGdb:
    """gdb reading commands from a pipe (so that it handles the target's asynchronous stops between commands,
    which batch mode does not), each command answered by waiting for a text gdb prints."""

    def __init__(self, gdb: str, cwd: Path):
        self.process = subprocess.Popen([gdb, "-nx", "-q"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, cwd=cwd)
        self.output = b""

    def send(self, command: str) -> None:
        self.process.stdin.write(command.encode() + b"\n")
        self.process.stdin.flush()

    def wait_for(self, text: str, limit: float = 120) -> str:
        """Everything gdb printed up to ``text``; the limit only keeps a broken run from hanging the tests."""
        deadline = time.monotonic() + limit
        while text.encode() not in self.output:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"gdb never printed {text!r}: {self.output.decode(errors='replace')[-3000:]}"
            ready, _, _ = select.select([self.process.stdout], [], [], remaining)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, f"gdb ended before printing {text!r}: {self.output.decode(errors='replace')[-3000:]}"
                self.output += chunk
        said, _, self.output = self.output.partition(text.encode())
        return said.decode(errors="replace") + text

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def test_interrupt_stops_a_running_loop_with_sigint(tmp_path):
    gdb = gdb_or_skip("system", X86_64)
    program = tmp_path / "spin.s"
    program.write_text(".intel_syntax noprefix\nspin:\n    add rax, 1\n    jmp spin\n")
    session = InteractiveGdb(gdb, tmp_path)
    try:
        for setting in ("set pagination off", "set confirm off", "set width 0", "set style enabled off"):
            session.send(setting)
        session.send(f"target remote | {gdbserver_command(str(program), '--max-steps', '1000000000')}")
        session.send("echo connected\\n")
        session.wait_for("connected\n")
        session.send("continue &")
        session.wait_for("Continuing.")
        session.send("interrupt")
        stopped = session.wait_for("Program received signal SIGINT")
        session.send("info registers rip rax")
        session.send("echo registers-done\\n")
        registers = session.wait_for("registers-done\n")
        session.send("kill")
        session.send("quit")
        session.process.wait(timeout=60)
    finally:
        session.close()
    assert "Program received signal SIGINT" in stopped
    assert rip_of(registers) in (0x400000, 0x400004), registers  # add (4 bytes) or jmp: still in the loop
    rax = re.search(r"^rax\s+(0x[0-9a-f]+)", registers, re.M)
    assert rax and int(rax.group(1), 16) > 0, registers  # the loop ran before the interrupt


# ---- --port ---------------------------------------------------------------------------------------------------------

def test_port_mode_serves_one_gdb_and_exits_after_it_leaves(kernels):
    gdb = gdb_or_skip("system", X86_64)
    kernel = kernels("g++")
    server = subprocess.Popen([sys.executable, "-m", "isasim", "gdbserver", "--port", "0", *kernel_server(kernel)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        announcement = server.stdout.readline()
        found = re.search(r"127\.0\.0\.1:(\d+)", announcement)
        assert found, announcement + server.stderr.read()
        port = int(found.group(1))
        assert 0 < port < 65536
        done = run_gdb(gdb, [f"target remote 127.0.0.1:{port}", "stepi", "info registers rip", "kill"],
                       program=str(kernel.path))
        assert rip_of(done.stdout) == kernel.after("ldtilecfg"), done.stdout
        assert "killed" in done.stdout, done.stdout
        assert server.wait(timeout=60) == 0, server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
