"""isasim gdbserver's remote protocol, spoken by a client written here from gdb's manual ("Remote Protocol"):
framing, acknowledgements, the replies gdb relies on, and a fuzzed stream of malformed packets, each of which
must get an answer while the server stays up.  What the replies mean to gdb is checked by gdb itself in
tests/x86_amx/test_gdbserver.py and tests/arm_sme/test_gdbserver.py; the layout gdb gives a relocatable
object's sections is checked against gdb's own `maint info sections` here."""

from __future__ import annotations

import os
import random
import re
import select
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from gdb_client import gdb_or_skip, run_gdb

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "examples" / "x86_amx" / "int8_block.trace.json"
REPLY_TIMEOUT = 60.0


def checksum(data: bytes) -> bytes:
    return f"{sum(data) & 0xFF:02x}".encode()


class Client:
    """A remote-protocol client over the server's stdin/stdout."""

    def __init__(self, *arguments: str):
        self.process = subprocess.Popen([sys.executable, "-m", "isasim", "gdbserver", "--stdio", *arguments],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buffer = b""
        self.acks = True

    def raw(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, body: bytes) -> None:
        self.raw(b"$" + body + b"#" + checksum(body))

    def _more(self) -> None:
        ready, _, _ = select.select([self.process.stdout], [], [], REPLY_TIMEOUT)
        assert ready, f"no reply within {REPLY_TIMEOUT} s (server alive: {self.process.poll() is None})"
        chunk = os.read(self.process.stdout.fileno(), 1 << 16)
        assert chunk, f"the server closed its output (exit {self.process.poll()}): {self.process.stderr.read()!r}"
        self.buffer += chunk

    def reply(self) -> bytes:
        """The next packet from the server (acknowledged), its checksum checked; console output ('O'
        packets) is skipped."""
        while True:
            while self.buffer[:1] in (b"+", b"-"):
                self.buffer = self.buffer[1:]
            match = re.match(rb"\$([^#]*)#([0-9a-f]{2})", self.buffer, re.S)
            if match is None:
                self._more()
                continue
            self.buffer = self.buffer[match.end():]
            body, given = match.group(1), match.group(2)
            assert checksum(body) == given, f"bad checksum on {body[:80]!r}"
            if self.acks:
                self.raw(b"+")
            if body.startswith(b"O") and body != b"OK" and re.fullmatch(rb"O[0-9a-f]+", body):
                continue
            return body

    def ask(self, body: bytes) -> bytes:
        self.send(body)
        return self.reply()

    def close(self) -> int:
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=30)
        finally:
            self.process.stdout.close()
            self.process.stderr.close()


@pytest.fixture
def client():
    c = Client(str(PROGRAM))
    yield c
    if c.process.poll() is None:
        c.close()


def unescape(data: bytes) -> bytes:
    return re.sub(rb"\}(.)", lambda m: bytes((m.group(1)[0] ^ 0x20,)), data, flags=re.S)


def read_annex(client: Client, annex: str) -> str:
    data, offset = b"", 0
    while True:
        reply = client.ask(f"qXfer:features:read:{annex}:{offset:x},800".encode())
        assert reply[:1] in (b"m", b"l"), reply
        chunk = unescape(reply[1:])
        data += chunk
        offset += len(chunk)
        if reply[:1] == b"l":
            return data.decode()


def test_handshake_and_target_description(client):
    supported = client.ask(b"qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;xmlRegisters=i386")
    features = dict(item.split(b"=", 1) if b"=" in item else (item, b"") for item in supported.split(b";"))
    assert int(features[b"PacketSize"], 16) >= 0x10000
    assert b"qXfer:features:read+" in features and b"ReverseStep+" in features and b"ReverseContinue+" in features
    target = ElementTree.fromstring(read_annex(client, "target.xml"))
    assert target.find("architecture").text == "i386:x86-64"
    includes = [element.get("href") for element in target if element.tag.endswith("include")]
    assert includes, "target.xml includes its features"
    registers = []
    for annex in includes:
        feature = ElementTree.fromstring(read_annex(client, annex))
        registers += [(reg.get("name"), int(reg.get("bitsize")), int(reg.get("regnum"))) for reg in feature.iter("reg")]
    assert [number for _, _, number in registers] == list(range(len(registers)))
    names = [name for name, _, _ in registers]
    assert names[:17] == ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp"] + [f"r{n}" for n in range(8, 16)] \
        + ["rip"]
    # g is every register, in order, at its size
    g = client.ask(b"g")
    assert len(g) == 2 * sum(bits // 8 for _, bits, _ in registers)
    rip = names.index("rip")
    offset = 2 * sum(bits // 8 for _, bits, _ in registers[:rip])
    assert client.ask(f"p{rip:x}".encode()) == g[offset:offset + 16]
    assert client.ask(b"qXfer:features:read:nonexistent.xml:0,100").startswith(b"E")


def test_acknowledgement_and_a_bad_checksum(client):
    client.raw(b"$qC#00")  # wrong checksum: the server asks again ('-') and answers nothing
    client._more()
    assert client.buffer.startswith(b"-")
    client.buffer = client.buffer[1:]
    assert client.ask(b"qC") == b"QC1"
    assert client.ask(b"QStartNoAckMode") == b"OK"
    client.acks = False
    client.buffer = client.buffer.lstrip(b"+")
    assert client.ask(b"qC") == b"QC1"
    assert not client.buffer.startswith(b"+"), "no acknowledgements after QStartNoAckMode"


def test_known_packets_malformed_get_errors_and_unknown_ones_the_empty_reply(client):
    for packet in [b"m", b"m12", b"mzz,4", b"m1,", b"p", b"pxyz", b"P1", b"P1=zz", b"Z0,1", b"Z0,1,2,3", b"M1,2:zz",
                   b"M10,4:00", b"X10,4:ab", b"Hgq", b"vCont;w", b"G0", b"b", b"bx", b"qRcmd,zz",
                   b"qXfer:features:read:target.xml:0", b"m" + b"f" * 40 + b",1"]:
        assert client.ask(packet).startswith(b"E"), packet
    for packet in [b"Y", b"vFooBar", b"qFooBar", b"QFooBar", b"!", b"jUnknown"]:
        assert client.ask(packet) == b"", packet
    assert client.ask(b"m0,4") == b"E14"  # nothing is mapped at 0


FUZZ_HEADS = [b"m", b"M", b"X", b"g", b"G", b"p", b"P", b"Z", b"z", b"H", b"T", b"q", b"Q", b"v", b"b", b"s", b"?",
              b"qXfer:features:read:", b"qRcmd,", b"vCont;", b"Z0,", b"Z2,", b"z4,", b"P10=", b"bs", b"bc", b"qSupported:"]
ENDS_SESSION = (b"k", b"D", b"vKill", b"R", b"r")


def fuzz_packets(seed: int, count: int):
    rng = random.Random(seed)
    alphabet = b"0123456789abcdefABCDEFxyz,:;=#$}*-+ \x00\xff"  # (0x03 is an interrupt, never packet data)
    for _ in range(count):
        head = rng.choice(FUZZ_HEADS)
        tail = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        if rng.random() < 0.1:
            tail += b"f" * rng.randrange(20, 200)  # numbers too long for 64 bits
        body = head + tail
        # in a packet, '$', '#' and '}' must be escaped and 0x03 is an interrupt outside packets only
        body = body.replace(b"}", b"}]").replace(b"$", b"}\x04").replace(b"#", b"}\x03").replace(b"*", b"}\x0a")
        if body.startswith(ENDS_SESSION):
            continue
        yield body


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_packet_of_a_fuzzed_stream_is_answered_and_the_server_stays_up(client, seed):
    expected = client.ask(b"g")
    answered = 0
    for body in fuzz_packets(seed, 150):
        client.send(body)
        reply = client.reply()  # one well-formed reply each, whatever it is
        assert reply is not None
        answered += 1
    assert answered > 100
    assert client.process.poll() is None, "the server is still up"
    # noise between packets (not '$', not an ack) is skipped, and the server still answers
    client.raw(b"garbage without a dollar")
    assert client.ask(b"qC") == b"QC1"
    if client.ask(b"qAttached") == b"1":
        assert len(client.ask(b"g")) == len(expected)


def test_a_client_that_leaves_leaves_nothing_running(client):
    assert client.ask(b"qC") == b"QC1"
    assert client.close() == 0


def test_kill_ends_the_server():
    c = Client(str(PROGRAM))
    assert c.ask(b"qC") == b"QC1"
    c.send(b"k")
    assert c.process.wait(timeout=30) == 0
    c.close()


def test_running_to_the_end_is_the_exit_and_stepping_back_still_needs_no_new_process(client):
    client.ask(b"qSupported:swbreak+")
    first = client.ask(b"s")
    assert first.startswith(b"T05")
    back = client.ask(b"bs")
    assert back.startswith(b"T05")
    assert client.ask(b"bs").startswith(b"T05") and b"replaylog:begin" in client.ask(b"bs")
    assert client.ask(b"c") == b"W00"
    assert client.ask(b"s").startswith(b"E")  # the process has ended


def test_bad_command_lines_are_one_line_errors(tmp_path):
    for arguments, message in [
        ([str(PROGRAM)], "one of the arguments --stdio --port is required"),
        ([str(PROGRAM), "--port", "70000"], "a port is 0 to 65535"),
        ([str(tmp_path / "missing.s"), "--stdio"], "no such file"),
        ([str(ROOT / "examples" / "ascend_cube" / "int8_gemm.trace.json"), "--stdio"], "no gdb architecture"),
    ]:
        result = subprocess.run([sys.executable, "-m", "isasim", "gdbserver", *arguments], capture_output=True,
                                text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert result.returncode == 2, (arguments, result.stderr)
        assert message in result.stderr and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_gdb_places_a_relocatable_objects_sections_where_the_address_map_says(tmp_path):
    """gdb's layout of a .o's allocated sections (what `maint info sections` prints) is the one
    debug_addresses.gdb_section_addresses computes, for an object with code, data, bss and constants."""
    from isasim.core.debug_addresses import gdb_section_addresses
    from isasim.core.elf_file import EM_X86_64, read_elf

    gdb = gdb_or_skip("system", "i386:x86-64")
    source = tmp_path / "sections.c"
    source.write_text("int counter = 3; static int scratch[100]; const double scale[4] = {1.5, 2.5, 3.5, 4.5};\n"
                      "int bump(int x) { scratch[x & 63] += x; return counter += x * (int)scale[x & 3]; }\n"
                      "int twice(int x) { return bump(bump(x)); }\n")
    obj = tmp_path / "sections.o"
    compiled = subprocess.run(["gcc", "-c", "-O1", "-g", str(source), "-o", str(obj)], capture_output=True,
                              text=True)
    if compiled.returncode != 0:
        pytest.skip(f"gcc could not compile the test object: {compiled.stderr.strip()[:200]}")
    printed = run_gdb(gdb, ["maint info sections"], program=str(obj)).stdout
    placed = {m.group(3): int(m.group(1), 16)
              for m in re.finditer(r"(0x[0-9a-f]+)->(0x[0-9a-f]+) at 0x[0-9a-f]+: (\S+) ALLOC", printed)}
    assert ".text" in placed and ".data" in placed and ".bss" in placed, printed
    elf = read_elf(str(obj), EM_X86_64)
    ours = {elf.sections[index].name: address for index, address in gdb_section_addresses(elf).items()}
    assert {name: ours[name] for name in placed} == placed


def test_an_interrupt_stops_a_long_run_between_instructions_and_the_step_limit_stops_it_too(tmp_path):
    program = tmp_path / "loop.s"
    program.write_text("mov rcx, 100000000\nagain:\ndec rcx\njnz again\n")
    c = Client(str(program), "--isa", "x86_amx", "--max-steps", "100000000")
    try:
        c.send(b"c")
        c.raw(b"\x03")  # gdb's Ctrl-C: a lone byte outside any packet
        stop = c.reply()
        assert stop.startswith(b"T02"), stop  # SIGINT, as gdb expects after an interrupt
        rcx = int.from_bytes(bytes.fromhex(c.ask(b"p2").decode()), "little")  # rcx is register 2 of amd64's core
        assert 0 < rcx < 100000000, "stopped in the middle of the loop"
        assert c.ask(b"s").startswith(b"T05") and c.process.poll() is None
    finally:
        c.close()
    limited = Client(str(program), "--isa", "x86_amx", "--max-steps", "20000")
    try:
        limited.send(b"c")
        assert limited.reply().startswith(b"T05")  # the step limit stops the run, it does not end the session
        at_limit = limited.ask(b"p2")
        # a reverse run with nothing to stop at replays back to the start; an interrupt stops it on the way
        limited.send(b"bc")
        limited.raw(b"\x03")
        assert limited.reply().startswith(b"T02")
        rcx = int.from_bytes(bytes.fromhex(limited.ask(b"p2").decode()), "little")
        assert int.from_bytes(bytes.fromhex(at_limit.decode()), "little") < rcx < 100000000  # an earlier step
        back = limited.ask(b"bc")  # and without an interrupt: to the start of the history
        assert back.startswith(b"T05") and b"replaylog:begin" in back
        assert limited.ask(b"p2") == b"00" * 8  # rcx before the first mov
    finally:
        limited.close()
