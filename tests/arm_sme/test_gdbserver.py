"""``isasim gdbserver`` with SME2 kernels, gdb 18 (the gdb-for-pwndbg wheel) as the client (issue 30).

Part A, compiled kernels in gdb: examples/arm_sme/compiled/tile_kernels.c's umopa_tile built with -g, stopped
by source line; gdb's own views ($za0s rows, $svcr, $svg, the result array read through the C variable) are
checked against numpy's product of the init's inputs (and the init's recorded expectation at its SVL); stepi
then reverse-stepi, and reverse-continue, come back to the same registers; ``monitor p`` of a tile and of a
VGx4 group agree with the architecture's numbering of ZA's vectors read from gdb's $za; an SME instruction
outside streaming mode stops gdb with SIGILL at that instruction.

Part B, QEMU's gdbstub as the reference: one static freestanding program (gdb_lut_kernel.c: LDR ZT0, LUTI2,
UDOT VGx4, UMOPA, MOVA, a store loop) is stepped instruction by instruction by the same gdb script against
``qemu-aarch64 -g`` and against ``isasim gdbserver`` at the same SVL; every register read at every stop
(pc, x0-x30, sp, cpsr, fpsr, fpcr, vg, svg, svcr, tpidr, tpidr2, z0-z31, p0-p15, ffr, za, zt0), and the
kernel's two output arrays read at its RET, must agree.  A difference fails with its step and register.
The differences allowed, each for a reason outside the kernel:

- sp, x29, x30: QEMU's process has its stack and its caller (_start) where Linux and the link put them;
  isasim runs the function alone, on its own stack, returning to the end of its code;
- the bytes of z, p, ffr and ZA past the SVL: QEMU 11.1's description always has the largest vector length
  (Z 256 bytes, P 32, ZA 256 rows of 256 bytes) with the live SVL in the low bytes and rows; isasim's has
  the SVL's sizes.  The comparison takes the SVL's bytes of each Z/P, and ZA's first SVL/8 rows' first
  SVL/8 bytes;
- registers only one side describes (QEMU's pauth masks, tag_ctl and system registers) are not compared;
- the entry's fpsr and NZCV: _start's SMSTART sets FPSR to 0x0800009F (the architecture's value on entering
  streaming mode) and its compare leaves Z and C set; isasim, entering the function with SVCR already 3, is
  given both in the init.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gdb_client import gdb_or_skip, gdbserver_command, run_gdb

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "examples" / "arm_sme" / "compiled"
TILE_SOURCE = EXAMPLES / "tile_kernels.c"
TILE_INIT = EXAMPLES / "umopa_tile.init.json"
LUT_SOURCE = HERE / "gdb_lut_kernel.c"
TILE_STORE_LINE = 19  # tile_kernels.c: the for of umopa_tile's ST1W loop (ZA0.S holds the whole product there)
TILE_STORE_BODY_LINE = 20  # its body, one stop per slice
TILE_END_LINE = 21  # umopa_tile's closing brace: c is stored
RET = 0xD65F03C0
SIGILL_TEXT = "Program received signal SIGILL"
ALLOWED = {"sp", "x29", "x30"}  # see the module's docstring
SMSTART_FPSR = 0x0800009F  # FPSR after SMSTART SM (Arm ARM, "Changing PSTATE.SM")
START_NZCV = 0x60000000  # Z and C: what _start's "cmp x0, x0" leaves
LUT_SIZES = {"table": 64, "codes": 256, "bvals": 1024, "out": 1024, "tile": 16384}  # bytes, for SVL <= 2048


# ---- building ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gdb() -> str:
    return gdb_or_skip("wheel", "aarch64")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """tile_kernels.o (-O0 -g, as examples/arm_sme/README.md builds it) and the linked lut program (-O1 -g),
    with the random bytes of the lut program's arrays."""
    from isasim.arm_sme.oracle.tools import clang_problem, find_zig, zig_env

    problem = clang_problem()
    if problem:
        pytest.skip(f"zig's clang not found: {problem}")
    zig, _ = find_zig()
    where = tmp_path_factory.mktemp("gdbserver_sme")
    rng = np.random.default_rng(30)
    data = {"table": rng.integers(1, 256, LUT_SIZES["table"], dtype=np.uint8),
            "codes": rng.integers(0, 256, LUT_SIZES["codes"], dtype=np.uint8),
            "bvals": rng.integers(0, 256, LUT_SIZES["bvals"], dtype=np.uint8)}
    header = where / "lut_data.h"
    lines = [f"__attribute__((used, aligned(16))) uint8_t {name}[{values.size}] = {{"
             f"{', '.join(str(int(v)) for v in values)}}};" for name, values in data.items()]
    # nonzero first words keep out and tile in .data, which a static program and isasim both load
    lines += [f"__attribute__((used, aligned(16))) uint32_t {name}[{LUT_SIZES[name] // 4}] = {{0xdeadbeef}};"
              for name in ("out", "tile")]
    header.write_text("\n".join(lines) + "\n")
    tiles, lut = where / "tile_kernels.o", where / "lut_dot"
    builds = ([zig, "cc", "-target", "aarch64-linux-gnu", "-mcpu=generic+sme2", "-fno-sanitize=all", "-O0", "-g",
               "-c", str(TILE_SOURCE), "-o", str(tiles)],
              [zig, "cc", "-target", "aarch64-linux-musl", "-mcpu=generic+sme2", "-fno-sanitize=all", "-O1", "-g",
               "-static", "-nostdlib", "-ffreestanding", "-DWITH_START", f'-DLUT_DATA="{header}"',
               str(LUT_SOURCE), "-o", str(lut)])
    for command in builds:
        done = subprocess.run(command, capture_output=True, text=True, env=zig_env(), timeout=300)
        assert done.returncode == 0, done.stderr
    return {"tiles": tiles, "lut": lut, "data": data, "dir": where}


def symbol_addresses(path: Path) -> dict[str, int]:
    from isasim.core.elf_file import EM_AARCH64, read_elf

    return {symbol.name: symbol.value for symbol in read_elf(str(path), EM_AARCH64).symbols()}


def lut_init(built: dict) -> Path:
    """isasim's entry to lut_dot as _start makes it: the arrays' link addresses as arguments, SVCR SM and ZA on,
    the FPSR and NZCV _start leaves."""
    path = built["dir"] / "lut_dot.init.json"
    if not path.exists():
        at = symbol_addresses(built["lut"])
        path.write_text(json.dumps({"regs": {"svcr": 3, "fpsr": SMSTART_FPSR, "nzcv": START_NZCV},
                                    "args": [at[name] for name in ("table", "codes", "bvals", "out", "tile")]}))
    return path


# ---- reading what gdb printed ------------------------------------------------------------------------------
def gdb_numbers(text: str) -> list[int]:
    """The numbers of one gdb print of an array (``$3 = {1, 0x2, 0 <repeats 5 times>}``), in order."""
    body = text.split("=", 1)[1]
    numbers = []
    for value, repeats in re.findall(r"(-?(?:0x[0-9a-fA-F]+|\d+))(?:\s*<repeats (\d+) times>)?", body):
        numbers += [int(value, 0)] * (int(repeats) if repeats else 1)
    return numbers


def printed(text: str) -> list[str]:
    """The values of gdb's prints (``$1 = ...`` lines) in ``text``, each with its ``$n =``."""
    return re.findall(r"^\$\d+ = .*$", text, flags=re.M)


def marked(output: str) -> dict[str, str]:
    """gdb's output cut at the ``echo @@name`` markers the commands put between them: name -> what followed."""
    parts = re.split(r"^@@(\S+)\n", output, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def mark(name: str) -> str:
    return f"echo @@{name}\\n"


def monitor_rows(text: str) -> dict[int, list[int]]:
    """``monitor p``'s rows that name a ZA vector (``2:  za[8] 1 2 3``): vector number -> its lanes (a wide
    row is printed in blocks of columns, one block under the other: each block's part follows the last)."""
    rows: dict[int, list[int]] = {}
    for vector, lanes in re.findall(r"^\s*\d+:\s+za\[(\d+)\]\s+([-\d ]+)$", text, flags=re.M):
        rows.setdefault(int(vector), []).extend(int(v) for v in lanes.split())
    return rows


def without_history_numbers(text: str) -> str:
    """gdb's output with its value history numbers ($7 = ...) left out: the same value printed again differs."""
    return re.sub(r"^\$\d+ = ", "", text, flags=re.M)


def tile_reference(svl: int) -> np.ndarray:
    """umopa_tile's C (an SVL/32 square of uint32) from the init's inputs, by numpy: the sum over k4 steps of
    the outer products of a's and b's vectors taken four bytes at a time."""
    init = json.loads(TILE_INIT.read_text())
    regions = {region["name"]: np.array(region["values"], dtype=np.int64) for region in init["memory"]}
    k4, svlb, lanes = init["args"][3], svl // 8, svl // 32
    a = regions["A"][:k4 * svlb].reshape(k4, lanes, 4)
    b = regions["B"][:k4 * svlb].reshape(k4, lanes, 4)
    return np.einsum("tiq,tjq->ij", a, b)


# ---- Part A: kernels in gdb --------------------------------------------------------------------------------
@pytest.mark.parametrize("svl", [128, 512])
def test_umopa_tile_by_source_line_forwards_and_backwards(gdb, built, svl):
    lanes = svl // 32
    reference = tile_reference(svl)
    if svl == json.loads(TILE_INIT.read_text())["config"]["svl"]:  # the init's own expectation, at its SVL
        expected_hex = json.loads(TILE_INIT.read_text())["expect"]["memory"][0]["hex"]
        assert bytes.fromhex(expected_hex) == reference.astype("<u4").tobytes()
    server = gdbserver_command(str(built["tiles"]), "--function", "umopa_tile", "--svl", str(svl),
                               "--init", str(TILE_INIT))
    commands = [f"target remote | {server}",
                "set print elements unlimited", f"break tile_kernels.c:{TILE_STORE_LINE}", "continue",
                mark("svcr"), "p $svcr", mark("svg"), "p $svg"]
    commands += [cmd for r in range(lanes) for cmd in (mark(f"row{r}"), f"p $za0s[{r}]")]
    commands += [mark("monitor_tile"), "monitor p za0.s",
                 mark("before_steps"), "info registers", "p/x $za0s", mark("-"),
                 "stepi 5", mark("stepped"), "info registers pc", mark("-"),
                 "reverse-stepi 5", mark("after_reverse_steps"), "info registers", "p/x $za0s", mark("-"),
                 f"break tile_kernels.c:{TILE_STORE_BODY_LINE}", "continue",
                 mark("first_slice"), "info registers", mark("-"), "continue",
                 mark("second_slice"), "info registers", mark("-"), "reverse-continue",
                 mark("reversed_to_first_slice"), "info registers", mark("-"),
                 "delete", f"break tile_kernels.c:{TILE_END_LINE}", "continue",
                 mark("result"), f"p/x *c@{lanes * lanes}", mark("end")]
    output = run_gdb(gdb, commands, program=str(built["tiles"])).stdout
    views = marked(output)
    assert "[ SM ZA ]" in views["svcr"], output
    assert gdb_numbers(views["svg"]) == [svl // 64]
    for r in range(lanes):
        assert gdb_numbers(views[f"row{r}"]) == list(reference[r]), (r, views[f"row{r}"])
    assert monitor_rows(views["monitor_tile"]) == {4 * r: list(reference[r]) for r in range(lanes)}
    assert re.search(r"^pc\s", views["before_steps"], flags=re.M)
    assert views["stepped"].split()[1] != views["before_steps"].split("pc", 1)[1].split()[0]  # it moved
    assert without_history_numbers(views["after_reverse_steps"]) == without_history_numbers(views["before_steps"])
    assert views["first_slice"] != views["second_slice"]
    assert views["reversed_to_first_slice"] == views["first_slice"]
    assert gdb_numbers(views["result"]) == list(reference.ravel()), output


def test_vgx4_group_and_zt0_in_gdb(gdb, built):
    """After the two UDOTs into ZA.S[w8, 0, VGx4] (tile_kernels' sibling, gdb_lut_kernel.c, at SVL 512):
    gdb's $zt0 is the table the kernel loaded, and ``monitor p za.s[w8, 0, vgx4]`` shows the ZA vectors the
    architecture puts in group 0 (vectors 0, SVL/32, 2 SVL/32, 3 SVL/32, w8 being 0), as gdb's $za has them."""
    svl, svlb = 512, 64
    program = built["lut"]
    server = gdbserver_command(str(program), "--function", "lut_dot", "--svl", str(svl), "--init", str(lut_init(built)))
    commands = [f"target remote | {server}",
                # stepi up to the first UDOT, as gdb's disassembler reads the instructions
                'python\nwhile "udot" not in gdb.execute("x/i $pc", to_string=True): gdb.execute("stepi")\nend',
                mark("udot"), "x/i $pc", "stepi 2", mark("after"), "x/i $pc", "p $w8", "p/x $zt0",
                mark("monitor"), "monitor p za.s[w8, 0, vgx4]",
                mark("za"), 'python print(gdb.parse_and_eval("$za").bytes.hex())', mark("end")]
    output = run_gdb(gdb, commands, program=str(program)).stdout
    views = marked(output)
    assert "udot\tza.s[w8, 0, vgx4]" in views["udot"], output
    w8, zt0 = printed(views["after"])
    assert gdb_numbers(w8) == [0], views["after"]
    assert gdb_numbers(zt0) == list(built["data"]["table"]), views["after"]
    za = np.frombuffer(bytes.fromhex(views["za"].split()[0]), dtype="<i4").reshape(svlb, svlb // 4)
    group = {v: list(za[v]) for v in (0, svlb // 4, svlb // 2, 3 * svlb // 4)}
    assert any(any(row) for row in group.values())
    assert monitor_rows(views["monitor"]) == group, views["monitor"]


def test_sme_instruction_outside_streaming_mode_is_sigill(gdb, tmp_path):
    """ZA on but not streaming mode: FMOPA is UNDEFINED (the Arm ARM's CheckStreamingSVEAndZAEnabled), which
    Linux reports as SIGILL; gdb stops there, at the FMOPA, as its disassembler reads it."""
    program = tmp_path / "fault.s"
    program.write_text("mov x0, #1\nsmstart za\nfmopa za0.s, p0/m, p1/m, z0.s, z1.s\nmov x0, #2\n")
    commands = [f"target remote | {gdbserver_command(str(program), '--isa', 'arm_sme', '--svl', '128')}",
                "continue", mark("stop"), "x/i $pc", "p $x0", "p $svcr"]
    output = run_gdb(gdb, commands).stdout
    assert SIGILL_TEXT in output, output
    stop = marked(output)["stop"]
    assert re.search(r"=> 0x[0-9a-f]+:\s+fmopa\s+za0\.s, p0/m, p1/m, z0\.s, z1\.s", stop), stop
    assert "$1 = 1" in stop and "[ ZA ]" in stop, stop


# ---- Part B: the same gdb script against QEMU's gdbstub and isasim gdbserver --------------------------------
STEP_SCRIPT = r'''
import gdb, json

SCALARS = ["pc"] + ["x%d" % n for n in range(31)] + ["sp", "cpsr", "fpsr", "fpcr", "vg", "svg", "svcr",
                                                     "tpidr", "tpidr2"]
VECTORS = ["z%d" % n for n in range(32)] + ["p%d" % n for n in range(16)] + ["ffr", "za", "zt0"]

def state():
    frame = gdb.selected_frame()
    values = {name: int(frame.read_register(name)) & (2**64 - 1) for name in SCALARS}
    values.update({name: frame.read_register(name).bytes.hex() for name in VECTORS})
    return values

def word_at_pc():
    pc = int(gdb.selected_frame().read_register("pc"))
    return int.from_bytes(bytes(gdb.selected_inferior().read_memory(pc, 4)), "little")

gdb.execute("break lut_dot")
if int(gdb.selected_frame().read_register("pc")) != int(gdb.parse_and_eval("(long)&lut_dot")):
    gdb.execute("continue")  # QEMU starts at _start; isasim at the function
states = [state()]
while word_at_pc() != RET and len(states) < 3000:
    gdb.execute("stepi", to_string=True)
    states.append(state())
memory = gdb.selected_inferior()
for name in ("out", "tile"):
    address = int(gdb.lookup_global_symbol(name).value().address)  # the arrays, not lut_dot's parameters
    states[-1]["memory " + name] = bytes(memory.read_memory(address, SIZES[name])).hex()
with open(OUT, "w") as file:
    json.dump(states, file)
'''


def stepped_states(gdb: str, built: dict, target: str, out: Path, svl: int) -> list[dict]:
    script = out.with_suffix(".py")
    script.write_text(f"RET = {RET}\nOUT = {str(out)!r}\nSIZES = {LUT_SIZES!r}\n" + STEP_SCRIPT)
    done = run_gdb(gdb, [target, f"source {script}"], program=str(built["lut"]))
    assert out.exists(), done.stdout
    return json.loads(out.read_text())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def normalised(state: dict, svl: int) -> dict:
    """One stop's registers cut to the SVL (see the module docstring), the registers only one side has left out."""
    svlb = svl // 8
    cut = {}
    for name, value in state.items():
        if name.startswith("z") and name != "zt0" or name.startswith("p") and name != "pc" or name == "ffr":
            size = svlb if name.startswith("z") else svlb // 8
            cut[name] = value[:2 * size]
        elif name == "za":
            data = bytes.fromhex(value)
            rows = int(round(len(data) ** 0.5))
            cut[name] = np.frombuffer(data, dtype=np.uint8).reshape(rows, rows)[:svlb, :svlb].tobytes().hex()
        else:
            cut[name] = value
    return cut


def differences(qemu: list[dict], isasim: list[dict], svl: int) -> list[str]:
    found = []
    if len(qemu) != len(isasim):
        found.append(f"QEMU stopped {len(qemu)} times, isasim {len(isasim)}")
    for step, (left, right) in enumerate(zip(qemu, isasim)):
        left, right = normalised(left, svl), normalised(right, svl)
        for name in sorted(set(left) | set(right)):
            if name in ALLOWED or left.get(name) == right.get(name):
                continue
            shown = [hex(v) if isinstance(v, int) else v for v in (left.get(name), right.get(name))]
            found.append(f"step {step} {name}: QEMU {shown[0]} isasim {shown[1]}")
    return found


@pytest.mark.needs_qemu
@pytest.mark.parametrize("svl", [128, 256, 512])  # 2048 agrees too (338 stops) but takes 25 s more
def test_every_step_agrees_with_qemus_gdbstub(gdb, built, svl, tmp_path):
    from isasim.arm_sme.oracle.tools import find_qemu, qemu_cpu

    qemu_binary, _ = find_qemu()
    port = free_port()
    qemu = subprocess.Popen([qemu_binary, "-cpu", qemu_cpu(svl // 8), "-g", str(port), str(built["lut"])],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        qemu_states = stepped_states(gdb, built, f"target remote 127.0.0.1:{port}", tmp_path / "qemu.json", svl)
    finally:
        qemu.kill()
        qemu.wait(timeout=30)
    isasim = gdbserver_command(str(built["lut"]), "--function", "lut_dot", "--svl", str(svl),
                               "--init", str(lut_init(built)))
    isasim_states = stepped_states(gdb, built, f"target remote | {isasim}", tmp_path / "isasim.json", svl)

    assert len(qemu_states) > 10 and normalised(qemu_states[0], svl)["svcr"] == 3
    # the references of this comparison are QEMU's; a few facts of the program itself, from its data:
    table = built["data"]["table"].tobytes().hex()
    assert qemu_states[1]["zt0"] == table  # after LDR ZT0
    assert qemu_states[-1]["vg"] == qemu_states[-1]["svg"] == svl // 64
    mismatches = differences(qemu_states, isasim_states, svl)
    print(f"SVL {svl}: {len(qemu_states)} stops compared, {len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:40])
