"""``isasim gdbserver``: the simulator as a gdb remote target, so gdb, and the IDEs built on it, step kernels.

A :class:`DebugSession` answers the packets of gdb's remote protocol (gdb's manual, "Remote Protocol"; the
framing is core/gdb_remote.py) from a :class:`core.stepper.Stepper`, the engine ``isasim step`` uses, so gdb
and the stepper share one machine, one set of checkpoints and one way of stepping back:

- registers (``g``/``G``/``p``/``P``) are the ISA's :class:`core.debug_target.DebugTarget`, served as gdb's
  target description (``qXfer:features:read``), so gdb shows AMX tiles and ZA with its own commands;
- memory (``m``/``M``/``X``), with code addresses translated between where gdb reads an object file's
  functions and where isasim runs them (core/debug_addresses.py);
- ``s``/``c``/``vCont`` step and run; software and hardware breakpoints (``Z0``/``Z1``) stop before the
  instruction at their address; watchpoints (``Z2`` write, ``Z3`` read, ``Z4`` access) stop after the
  instruction that accessed the watched bytes; an interrupt (Ctrl-C in gdb) stops between instructions;
- ``bs``/``bc`` step and run backwards: the machine is put back at an earlier step by the stepper's
  checkpoints and replay, never by guessing, so a reverse step shows exactly the state a forward run had;
- a fault stops with its signal (the ISA's table: #UD and UNDEFINED SIGILL, #GP/#PF SIGSEGV, #DE SIGFPE),
  and its rule is printed in gdb's console; running on from a fault ends the process with that signal, as
  the kernel would; the end of the function is the end of the process (``W00``), unless a breakpoint sits
  where the function returns to (gdb's ``finish`` puts one there), which stops there instead;
- ``monitor`` commands (``qRcmd``) run the stepper's own commands (``monitor p za.s[w8, 0, vgx4]``,
  ``monitor p tmm0 int32``) and ``monitor explain``.

A value set from gdb (a register, memory) changes the machine: the steps before it can no longer be
replayed to reach the same state, so the history starts again there (a reverse step stops at that point
with gdb's "no more reverse-execution history").

Every packet gets an answer: one the server does not know gets the empty reply (gdb's "not supported"), a
malformed one ``E01``, memory it cannot read or write ``E14`` (EFAULT), and nothing a client sends stops
the server; only the end of the connection, ``k`` or ``D`` end it.
"""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass, field

from rich.console import Console

from .debug_addresses import AddressMap
from .debug_target import SIGTRAP, DebugTarget
from .errors import IsasimError
from .gdb_remote import Closed, RemoteChannel

PACKET_SIZE = 0x40000  # the largest packet gdb may send us (a G of ZA at SVL 2048 is 128 KiB of hex)
SIGINT = 2
EINVAL, EFAULT = "E16", "E14"
MALFORMED = "E01"
INTERRUPT_POLL_STEPS = 256  # how often a run looks for gdb's interrupt
MONITOR_WIDTH = 120

_HEX = re.compile(rb"[0-9a-fA-F]+")


class BadPacket(Exception):
    """A packet the server knows but cannot read: answered with an error."""


def _number(text: bytes) -> int:
    if not _HEX.fullmatch(text) or len(text) > 16:
        raise BadPacket()
    return int(text, 16)


def _hex_bytes(text: bytes) -> bytes:
    try:
        return bytes.fromhex(text.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        raise BadPacket() from None


@dataclass
class Watchpoint:
    kind: str  # "watch" (write), "rwatch" (read), "awatch" (access)
    address: int  # gdb's address (also isasim's: data addresses are not translated)
    length: int


@dataclass
class StopReply:
    text: str
    ended: bool = False  # the process is gone (W or X)


@dataclass
class DebugSession:
    stepper: object  # core.stepper.Stepper
    target: DebugTarget
    addresses: AddressMap = field(default_factory=AddressMap)
    breakpoints: set = field(default_factory=set)  # isasim addresses
    watchpoints: list = field(default_factory=list)
    history_start: int = 0  # the first step a reverse run may reach (a write from gdb moves it)
    swbreak: bool = False  # gdb understands the swbreak stop reason
    last_stop: str = ""  # the reply to '?': the last stop reply (none yet: stopped before the first instruction)
    end_shown: bool = False  # the stop at the return address was reported: going on ends the process
    gone: bool = False  # W or X sent: the process has ended
    poll_interrupt: object = None  # () -> bool: whether gdb asked to stop

    def __post_init__(self):
        self.registers = self.target.registers
        self.documents = self.target.documents()
        self.pc_number = next(i for i, r in enumerate(self.registers) if r.name == self.target.pc_register)
        self.code_numbers = {i for i, r in enumerate(self.registers)
                             if r.name in self.target.code_registers or i == self.pc_number}
        program = self.stepper.program
        try:
            code = program.code if program.base + len(program.code) == program.end else b""
        except IsasimError:  # a text-only ISA's program has no bytes to show
            code = b""
        self.code_image = (program.base, code)
        self.console_text = io.StringIO()
        self.stepper.out = Console(file=self.console_text, width=MONITOR_WIDTH, color_system=None,
                                   highlight=False, soft_wrap=True)
        self.stepper.out.quiet = False
        self.output = None  # while a packet is handled: how to send gdb console text, if gdb takes it now

    # ---- the machine ---------------------------------------------------------------------------------
    @property
    def machine(self):
        return self.stepper.machine

    def _ended(self) -> bool:
        machine = self.machine
        return machine.finished or machine.state.pc == self.stepper.program.end

    def _pc(self) -> int:
        return self.machine.state.pc

    # ---- packets -------------------------------------------------------------------------------------
    def handle(self, packet: bytes, output) -> str | None:
        """The reply to one packet (None: no reply, the session ends).  ``output`` sends console text to gdb
        (an 'O' packet) while a command runs."""
        if not packet:
            return ""
        head = packet[:1]
        # gdb takes console text ('O' packets) before the reply only to a run or a monitor command
        takes_console = head in (b"c", b"s", b"C", b"S", b"b") or packet.startswith((b"vCont;", b"qRcmd,"))
        self.output = output if takes_console else None
        try:
            handler = _HANDLERS.get(head)
            if handler is None:
                return ""
            return handler(self, packet)
        except BadPacket:
            return MALFORMED
        except IsasimError as error:  # e.g. a view refusing a monitor command: say why, in gdb's console
            self._say(f"{error}\n")
            return MALFORMED
        except Exception as error:  # noqa: BLE001 - a bug in isasim must not end the session: say it, answer
            self._say(f"isasim: internal error: {error.__class__.__name__}: {error}\n")
            return MALFORMED

    def _say(self, text: str) -> None:
        if not text:
            return
        if self.output is not None:
            self.output(text)
        else:
            sys.stderr.write(text)

    # general queries
    def q_packet(self, packet: bytes) -> str:
        if packet.startswith(b"qSupported"):
            features = packet.partition(b":")[2].split(b";")
            self.swbreak = b"swbreak+" in features
            return (f"PacketSize={PACKET_SIZE:x};qXfer:features:read+;swbreak+;hwbreak+;QStartNoAckMode+;"
                    "ReverseStep+;ReverseContinue+;vContSupported+")
        if packet.startswith(b"qXfer:features:read:"):
            return self._features(packet[len(b"qXfer:features:read:"):])
        if packet.startswith(b"qXfer:"):
            return ""
        if packet == b"qC":
            return "QC1"
        if packet == b"qfThreadInfo":
            return "m1"
        if packet == b"qsThreadInfo":
            return "l"
        if packet.startswith(b"qAttached"):
            return "1"
        if packet.startswith(b"qSymbol"):
            return "OK"
        if packet.startswith(b"qRcmd,"):
            return self._monitor(_hex_bytes(packet[6:]).decode("utf-8", "replace"))
        return ""

    def Q_packet(self, packet: bytes) -> str:
        if packet == b"QStartNoAckMode":  # serve() stops acknowledging once this OK is sent
            return "OK"
        return ""

    def _features(self, rest: bytes) -> str:
        annex, _, window = rest.partition(b":")
        offset, comma, length = window.partition(b",")
        if not comma:
            raise BadPacket()
        offset, length = _number(offset), _number(length)
        document = self.documents.get(annex.decode("latin-1"))
        if document is None:
            return "E00"
        data = document.encode()
        chunk = data[offset:offset + length]
        return ("l" if offset + length >= len(data) else "m") + chunk.decode("latin-1")

    # stop reasons
    def question(self, packet: bytes) -> str:
        return self.last_stop or self._stop(SIGTRAP)

    def H_packet(self, packet: bytes) -> str:
        thread = packet[2:]
        if len(packet) < 2 or thread not in (b"0", b"-1", b"1", b"p1.1", b"p1.-1", b"p1"):
            raise BadPacket()
        return "OK"

    def T_packet(self, packet: bytes) -> str:
        return "OK" if packet[1:] in (b"1", b"p1.1") else "E01"

    # registers
    def _register_bytes(self, number: int) -> bytes:
        register = self.registers[number]
        data = register.read(self.machine.state)
        if number in self.code_numbers:
            value = self.addresses.to_gdb(int.from_bytes(data, "little"))
            data = value.to_bytes(len(data), "little")
        return data

    def g_packet(self, packet: bytes) -> str:
        if len(packet) != 1:
            raise BadPacket()
        return "".join(self._register_bytes(n).hex() for n in range(len(self.registers)))

    def G_packet(self, packet: bytes) -> str:
        data = _hex_bytes(packet[1:])
        offset = 0
        writes = []
        for number, register in enumerate(self.registers):
            size = register.bitsize // 8
            if offset + size > len(data):
                break  # gdb may send fewer registers than it knows
            writes.append((number, data[offset:offset + size]))
            offset += size
        if offset != len(data):
            raise BadPacket()
        changed = [(n, value) for n, value in writes if value != self._register_bytes(n)]
        if any(self.registers[n].write is None for n, _ in changed):
            return EINVAL
        for number, value in changed:
            self._write_register(number, value)
        return "OK"

    def p_packet(self, packet: bytes) -> str:
        number = _number(packet[1:])
        if number >= len(self.registers):
            return MALFORMED
        return self._register_bytes(number).hex()

    def P_packet(self, packet: bytes) -> str:
        number, equals, value = packet[1:].partition(b"=")
        if not equals:
            raise BadPacket()
        number, value = _number(number), _hex_bytes(value)
        if number >= len(self.registers) or len(value) != self.registers[number].bitsize // 8:
            return MALFORMED
        if value == self._register_bytes(number):
            return "OK"
        if self.registers[number].write is None:
            return EINVAL
        self._write_register(number, value)
        return "OK"

    def _write_register(self, number: int, value: bytes) -> None:
        if number in self.code_numbers:
            value = self.addresses.to_sim(int.from_bytes(value, "little")).to_bytes(len(value), "little")
        self.registers[number].write(self.machine.state, value)
        self._new_history()

    # memory
    def _address_length(self, text: bytes) -> tuple[int, int]:
        address, comma, length = text.partition(b",")
        if not comma:
            raise BadPacket()
        return _number(address), _number(length)

    def m_packet(self, packet: bytes) -> str:
        address, length = self._address_length(packet[1:])
        length = min(length, PACKET_SIZE // 2)
        data = bytearray()
        for start, size in self.addresses.sim_spans(address, length):
            piece = self._read(start, size)
            data += piece
            if len(piece) < size:  # gdb's m takes the readable prefix
                break
        return data.hex() if data or not length else EFAULT

    def _read(self, start: int, size: int) -> bytes:
        """The bytes at [start, start+size) that can be read, from the start: memory, or the program's code
        (which isasim keeps as instructions, not in memory)."""
        memory = self.machine.memory
        out = bytearray()
        address, end = start, start + size
        while address < end:
            code_base, code = self.code_image
            if code_base <= address < code_base + len(code):
                take = min(end, code_base + len(code)) - address
                out += code[address - code_base:address - code_base + take]
            elif memory.is_mapped(address, 1):
                take = 1
                while address + take < end and memory.is_mapped(address + take, 1) and \
                        not code_base <= address + take < code_base + len(code):
                    take += 1
                out += memory.read(address, take)
            else:
                break
            address += take
        return bytes(out)

    def _write_memory(self, address: int, data: bytes) -> str:
        memory = self.machine.memory
        spans = self.addresses.sim_spans(address, len(data))
        if not all(memory.is_mapped(start, size, "write") for start, size in spans):
            return EFAULT
        offset = 0
        for start, size in spans:
            memory.write(start, data[offset:offset + size])
            offset += size
        if data:
            self.machine._translations.clear()  # code may have changed: translate again
            self._new_history()
        return "OK"

    def M_packet(self, packet: bytes) -> str:
        where, colon, value = packet[1:].partition(b":")
        if not colon:
            raise BadPacket()
        address, length = self._address_length(where)
        data = _hex_bytes(value)
        if len(data) != length:
            raise BadPacket()
        return self._write_memory(address, data)

    def X_packet(self, packet: bytes) -> str:
        where, colon, data = packet[1:].partition(b":")
        if not colon:
            raise BadPacket()
        address, length = self._address_length(where)
        if len(data) != length:
            raise BadPacket()
        return self._write_memory(address, data)

    # breakpoints and watchpoints
    def _point(self, packet: bytes) -> tuple[int, int, int]:
        fields = packet[1:].split(b";")[0].split(b",")
        if len(fields) != 3:
            raise BadPacket()
        return _number(fields[0]), _number(fields[1]), _number(fields[2])

    def Z_packet(self, packet: bytes, insert: bool = True) -> str:
        kind, address, length = self._point(packet)
        if kind in (0, 1):
            where = self.addresses.to_sim(address)
            (self.breakpoints.add if insert else self.breakpoints.discard)(where)
            return "OK"
        if kind in (2, 3, 4):
            name = {2: "watch", 3: "rwatch", 4: "awatch"}[kind]
            if insert:
                if length == 0 or length > 1 << 20:
                    return MALFORMED
                self.watchpoints.append(Watchpoint(name, address, length))
            else:
                found = next((w for w in self.watchpoints if (w.kind, w.address, w.length) == (name, address, length)),
                             None)
                if found is not None:
                    self.watchpoints.remove(found)
            return "OK"
        return ""

    def z_packet(self, packet: bytes) -> str:
        return self.Z_packet(packet, insert=False)

    # running
    def c_packet(self, packet: bytes) -> str | None:
        self._resume_at(packet[1:])
        return self._run(single_step=False)

    def s_packet(self, packet: bytes) -> str | None:
        self._resume_at(packet[1:])
        return self._run(single_step=True)

    def C_packet(self, packet: bytes) -> str | None:  # continue with a signal: the fault the process stopped with
        signal, _, where = packet[1:].partition(b";")
        _number(signal)
        self._resume_at(where)
        return self._run(single_step=packet[:1] == b"S", deliver=_number(signal))

    S_packet = C_packet

    def _resume_at(self, where: bytes) -> None:
        if where:
            self._write_register(self.pc_number, self.addresses.to_gdb(
                _number(where)).to_bytes(self.registers[self.pc_number].bitsize // 8, "little"))

    def v_packet(self, packet: bytes) -> str | None:
        if packet == b"vCont?":
            return "vCont;c;C;s;S;r"
        if packet.startswith(b"vCont;"):
            actions = packet[6:].split(b";")
            action = actions[0].split(b":")[0]
            if not action or action[:1] not in b"cCsSrt":
                raise BadPacket()
            if action[:1] == b"t":
                return "OK"
            if action[:1] == b"r":  # step while the pc is in [start, end): gdb's range stepping
                start, comma, end = action[1:].partition(b",")
                if not comma:
                    raise BadPacket()
                low, high = _number(start), _number(end)
                first = self.addresses.to_sim(low)  # the range is one line of one function: one piece
                return self._run(single_step=True, within=(first, first + max(0, high - low)))
            deliver = _number(action[1:]) if action[:1] in b"CS" else 0
            return self._run(single_step=action[:1] in b"sS", deliver=deliver)
        if packet.startswith(b"vKill"):
            self.gone = True
            return "OK"
        if packet == b"vMustReplyEmpty":
            return ""
        return ""

    def b_packet(self, packet: bytes) -> str:
        if packet == b"bs":
            return self._reverse(single_step=True)
        if packet == b"bc":
            return self._reverse(single_step=False)
        raise BadPacket()

    def k_packet(self, packet: bytes) -> None:
        self.gone = True
        return None

    def D_packet(self, packet: bytes) -> str:
        self.gone = True
        return "OK"

    # ---- running forwards ----------------------------------------------------------------------------
    def _end_reply(self) -> StopReply:
        machine = self.machine
        if machine.fault is not None:
            return self._fault_reply()
        returns_to = [address for address in self.breakpoints if self.stepper.program.at(address) is None]
        if returns_to and not self.end_shown:
            # a breakpoint where no instruction is can only be where the function returns to (gdb's finish puts
            # one there): stop there, so the results can be read, before the process ends.  The machine's pc
            # after the return is the end of the code; gdb is shown the address the caller would continue at.
            self.end_shown = True
            if self.target.complete_return is not None:
                self.target.complete_return(self.machine.state, self.machine.memory)
            elif len(returns_to) == 1:
                self.machine.state.pc = returns_to[0]
            return StopReply(self._stop(SIGTRAP, "swbreak:;" if self.swbreak else ""))
        return StopReply("W00", ended=True)

    def _fault_reply(self) -> StopReply:
        fault = self.machine.fault
        self._say(f"{fault.describe()}\n")
        return StopReply(self._stop(self.target.signal(fault.kind)))

    def _stop(self, signal: int, reason: str = "") -> str:
        pc = self._register_bytes(self.pc_number).hex()
        return f"T{signal:02x}{self.pc_number:x}:{pc};{reason}thread:1;"

    def _run(self, *, single_step: bool, deliver: int = 0, within: tuple[int, int] | None = None) -> str | None:
        if self.gone:
            return "E01"
        reply = self._forward(single_step=single_step, deliver=deliver, within=within)
        self.last_stop = reply.text
        if reply.ended:
            self.gone = True
        return reply.text

    def _forward(self, *, single_step: bool, deliver: int, within) -> StopReply:
        """Run forwards: one instruction, the instructions while the pc is ``within`` [start, end) (range
        stepping), or until something stops the run.  ``deliver`` is the signal gdb resumes with: it matters
        only after a fault (the simulated process has no signal handlers, and nothing else raises a signal
        in it)."""
        if self.machine.fault is not None:
            if deliver:
                # gdb passes the fault's signal on (its default for SIGILL, SIGSEGV, SIGFPE): the signal's default
                # action ends the process, as the kernel's does
                return StopReply(f"X{deliver:02x}", ended=True)
            # resumed without the signal (gdb's `signal 0`, or `handle ... nopass`): the instruction runs again,
            # in the same state, and faults again
            return self._fault_reply()
        if self._ended():
            return self._end_reply()
        first = True
        ran = 0
        while True:
            pc = self._pc()
            if not first and pc in self.breakpoints:
                return StopReply(self._stop(SIGTRAP, "swbreak:;" if self.swbreak else ""))
            if ran % INTERRUPT_POLL_STEPS == INTERRUPT_POLL_STEPS - 1 and self.poll_interrupt and self.poll_interrupt():
                return StopReply(self._stop(SIGINT))
            first = False
            try:
                record, hit = self._watched_step()
            except IsasimError as error:  # the step limit
                self._say(f"{error}\n")
                return StopReply(self._stop(SIGTRAP))
            ran += 1
            if record is None:
                return self._end_reply()
            if record.fault is not None:
                return self._fault_reply()
            if hit is not None:
                return StopReply(self._stop(SIGTRAP, hit))
            if self._ended():
                return self._end_reply()
            if single_step:
                if within is None or not (within[0] <= self._pc() < within[1]):
                    return StopReply(self._stop(SIGTRAP))

    def _watched_step(self):
        """One step of the stepper (its record, None at the end) and the stop reason of the watchpoint it set
        off (None: none); memory accesses are recorded only while there are watchpoints."""
        before = [(w, self._watched_bytes(w)) for w in self.watchpoints]
        if not self.watchpoints:
            return self.stepper._one_step(), None
        with self.machine.memory.record_accesses() as accesses:
            record = self.stepper._one_step()
        return record, (self._watch_hit(before, accesses) if record is not None else None)

    def _watched_bytes(self, watch: Watchpoint) -> bytes | None:
        memory = self.machine.memory
        return memory.read(watch.address, watch.length) if memory.is_mapped(watch.address, watch.length) else None

    def _watch_hit(self, before, accesses) -> str | None:
        for watch, old in before:
            touched_read = touched_write = False
            for kind, address, what in accesses:
                size = what if kind == "read" else len(what)
                if address < watch.address + watch.length and watch.address < address + size:
                    if kind == "read":
                        touched_read = True
                    else:
                        touched_write = True
            changed = self._watched_bytes(watch) != old
            if watch.kind == "watch" and (touched_write or changed):
                return f"watch:{watch.address:x};"
            if watch.kind == "rwatch" and touched_read:
                return f"rwatch:{watch.address:x};"
            if watch.kind == "awatch" and (touched_read or touched_write or changed):
                return f"awatch:{watch.address:x};"
        return None

    # ---- running backwards ---------------------------------------------------------------------------
    def _reverse(self, *, single_step: bool) -> str:
        if self.gone:
            return "E01"
        stepper = self.stepper
        position = stepper.position
        self.end_shown = False
        if position <= self.history_start:
            reply = self._stop(SIGTRAP, "replaylog:begin;")
        elif single_step:
            stepper._replay_to(position - 1)
            reply = self._stop(SIGTRAP)
        else:
            target, reason = self._last_stop_before(position)
            if reason is None:  # gdb interrupted the search: stop where the replay is, an earlier step
                reply = self._stop(SIGINT)
            else:
                stepper._replay_to(target)
                reply = self._stop(SIGTRAP, reason)
        self.last_stop = reply
        return reply

    def _last_stop_before(self, position: int) -> tuple[int, str | None]:
        """Where a reverse run from step ``position`` stops, and the stop reply's reason: the latest earlier
        step whose next instruction is at a breakpoint, or that comes just before the instruction that
        accessed a watched location (gdb's record shows the state before it), or the start of the history.
        Each segment between checkpoints is replayed, newest first, until one holds such a step.  An interrupt
        from gdb stops the search where the replay is (reason None)."""
        stepper = self.stepper
        end = position
        while True:
            starts = [step for step in stepper.checkpoints if self.history_start <= step < end]
            start = max(starts) if starts else self.history_start
            stepper._replay_to(start, rewind=True)
            found = None
            while stepper.position < end:
                step = stepper.position
                if step % INTERRUPT_POLL_STEPS == 0 and self.poll_interrupt and self.poll_interrupt():
                    return step, None
                if self._pc() in self.breakpoints:
                    found = (step, "swbreak:;" if self.swbreak else "")
                record, hit = self._watched_step()
                if record is None:
                    break
                if hit is not None:
                    found = (step, hit)
            if found is not None:
                return found
            if start <= self.history_start:
                return self.history_start, "replaylog:begin;"
            end = start

    def _new_history(self) -> None:
        """gdb changed the machine: what happened before can no longer be replayed to reach this state."""
        stepper = self.stepper
        stepper.checkpoints = {step: kept for step, kept in stepper.checkpoints.items() if step < self.history_start}
        stepper.checkpoints[stepper.position] = (self.machine.checkpoint(), stepper.undefined)
        self.history_start = stepper.position
        if self.machine.fault is None and self.machine.halted and not self._ended():
            self.machine.halted = False

    # ---- monitor ---------------------------------------------------------------------------------------
    def _monitor(self, command: str) -> str:
        command = command.strip()
        words = command.split(None, 1)
        name = words[0].lower() if words else "help"
        if name in ("help", "h"):
            self._say(MONITOR_HELP + "\n" + (self.stepper.isa.stepper_locations and
                                             f"{self.stepper.isa.name} locations:\n{self.stepper.isa.stepper_locations}\n"))
            return "OK"
        if name == "explain":
            return self._monitor_explain()
        if name in ("p", "print", "info", "i", "list", "l"):
            self.console_text.seek(0)
            self.console_text.truncate()
            self.stepper.execute(command)
            text = self.console_text.getvalue()
            self._say(text if text.endswith("\n") or not text else text + "\n")
            return "OK" if self.stepper.error is None else MALFORMED
        if name in ("step", "position"):
            self._say(f"step {self.stepper.position} (the history starts at step {self.history_start})\n")
            return "OK"
        self._say(f"unknown monitor command '{name}' (monitor help lists them)\n")
        return MALFORMED

    def _monitor_explain(self) -> str:
        from .explain import ExplainOptions, explainer, print_explanation

        ins = self.machine.current_instruction()
        if ins is None:
            self._say("no instruction is next: the program has ended\n")
            return MALFORMED
        out = Console(file=io.StringIO(), width=MONITOR_WIDTH, color_system=None, highlight=False, soft_wrap=True)
        module = explainer(self.stepper.isa.name)
        builtin = getattr(ins.form, "group", None) == "builtin"
        code = None if ins.encoding is None or builtin else bytes(ins.encoding)
        options = ExplainOptions(config={k: v for k, v in self.stepper.config.items()
                                         if k in {o.key for o in self.stepper.isa.config_options}})
        try:
            explanation = module.explain(None if code is not None else ins.text, code, options)
        except IsasimError as error:
            self._say(f"{ins.text}: {error}\n")
            return MALFORMED
        print_explanation(explanation, out, plain=True)
        self._say(out.file.getvalue())
        return "OK"


MONITOR_HELP = """isasim monitor commands (monitor COMMAND in gdb):
  monitor p WHAT [TYPE] [hex] [all]   isasim's view of a register, a tile or ZA slice, a region, memory
                                      (e.g. monitor p tmm0 int32, monitor p za.s[w8, 0, vgx4])
  monitor explain                     the next instruction, as isasim explain prints it
  monitor info                        isasim's own breakpoints and watches (gdb's are gdb's)
  monitor list                        the program, with the next instruction marked
  monitor step                        how many instructions have run
  monitor help                        this text"""


_HANDLERS = {
    b"q": DebugSession.q_packet, b"Q": DebugSession.Q_packet, b"?": DebugSession.question,
    b"H": DebugSession.H_packet, b"T": DebugSession.T_packet,
    b"g": DebugSession.g_packet, b"G": DebugSession.G_packet, b"p": DebugSession.p_packet,
    b"P": DebugSession.P_packet, b"m": DebugSession.m_packet, b"M": DebugSession.M_packet,
    b"X": DebugSession.X_packet, b"Z": DebugSession.Z_packet, b"z": DebugSession.z_packet,
    b"c": DebugSession.c_packet, b"s": DebugSession.s_packet, b"C": DebugSession.C_packet,
    b"S": DebugSession.S_packet, b"v": DebugSession.v_packet, b"b": DebugSession.b_packet,
    b"k": DebugSession.k_packet, b"D": DebugSession.D_packet,
}


def serve(session: DebugSession, channel: RemoteChannel) -> None:
    """Answer packets until gdb kills or detaches, or the connection ends."""
    session.poll_interrupt = channel.poll_interrupt

    def output(text: str) -> None:  # console text for gdb while a packet is handled ('O' + hex)
        for start in range(0, len(text), 4096):
            channel.send("O" + text[start:start + 4096].encode("utf-8").hex())

    try:
        while True:
            packet = channel.receive()
            reply = session.handle(packet, output)
            if packet == b"QStartNoAckMode" and reply == "OK":
                channel.send(reply)
                channel.acknowledging = False
                continue
            if reply is not None:
                channel.send(reply)
            if session.gone and packet[:1] in (b"k", b"D") or packet.startswith(b"vKill"):
                return
    except Closed:
        return
