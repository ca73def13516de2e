"""What an ISA shows a debugger: its registers as gdb's target descriptions describe them.

``isasim gdbserver`` (core/gdbserver.py) is ISA-neutral: it asks the ISA's ``debug_target(config)`` hook for
a :class:`DebugTarget` and serves what that says.  A target is a list of :class:`DebugFeature`, each a gdb
target-description feature (``org.gnu.gdb.aarch64.sme``, ``org.gnu.gdb.i386.amx`` ...) holding its type
definitions as XML text and its registers; the register numbers gdb uses (the order of ``g`` and the
numbers of ``p``/``P``) are the registers' order across the features, as the XML lists them.

Each :class:`DebugRegister` reads its value from the ISA's state as the little-endian bytes gdb expects
(``bitsize // 8`` of them) and writes it back through the state's recording writes, so a value set in gdb
is a journalled write like any instruction's.  A register gdb's description must have but isasim does not
model (x87's st0-7 on x86, say) has a constant value and no ``write``: gdb shows it, and setting it is
refused with an error reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable
from xml.sax.saxutils import quoteattr

# The signal numbers of gdb's remote protocol (gdb/signals.def, the same as Linux's for these)
SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV = 4, 5, 7, 8, 11


@dataclass(frozen=True)
class DebugRegister:
    name: str
    bitsize: int
    type: str  # a gdb predefined type ("int", "uint64", "code_ptr", "data_ptr", "i387_ext" ...) or a defined one
    read: Callable[[Any], bytes]  # state -> bitsize // 8 little-endian bytes
    write: Callable[[Any, bytes], None] | None = None  # (state, bytes); None: gdb may not set it
    group: str | None = None  # gdb's register group ("general", "float", "vector" ...), None: gdb's default

    def xml(self, regnum: int) -> str:
        group = f" group={quoteattr(self.group)}" if self.group else ""
        return (f'<reg name={quoteattr(self.name)} bitsize="{self.bitsize}" type={quoteattr(self.type)} '
                f'regnum="{regnum}"{group}/>')


@dataclass(frozen=True)
class DebugFeature:
    name: str  # gdb's feature name, e.g. "org.gnu.gdb.aarch64.core"
    registers: tuple[DebugRegister, ...]
    types: str = ""  # the feature's <vector>/<union>/<flags>/<struct> definitions, as XML

    @property
    def annex(self) -> str:
        """The file name the feature is served under (qXfer:features:read:<annex>)."""
        return self.name.replace("org.gnu.gdb.", "") + ".xml"


@dataclass(frozen=True)
class DebugTarget:
    """An ISA's registers as a gdb target, and how its faults reach gdb."""

    architecture: str  # gdb's <architecture>: "i386:x86-64", "aarch64"
    features: tuple[DebugFeature, ...]
    signals: dict[str, int] = field(default_factory=dict)  # fault kind -> signal number (others: SIGSEGV)
    osabi: str | None = "GNU/Linux"
    pc_register: str = "pc"  # the register gdb's stop replies carry as the pc
    code_registers: tuple[str, ...] = ()  # registers that hold code addresses (a return address): mapped like pc
    # (state, memory) -> None: what the return that ended the run does on hardware and isasim leaves undone
    # (x86: isasim's last RET ends the run without popping; gdb's `finish` needs the popped stack to know
    # the caller's frame).  Called once, when a run ends at a breakpoint on the return address.
    complete_return: Callable[[Any, Any], None] | None = None

    @property
    def registers(self) -> list[DebugRegister]:
        return [register for feature in self.features for register in feature.registers]

    def signal(self, fault_kind: str) -> int:
        return self.signals.get(fault_kind, SIGSEGV)

    def documents(self) -> dict[str, str]:
        """Every annex qXfer:features:read serves: target.xml, which includes one file per feature."""
        files: dict[str, str] = {}
        includes = []
        regnum = 0
        for feature in self.features:
            lines = []
            for register in feature.registers:
                lines.append(register.xml(regnum))
                regnum += 1
            files[feature.annex] = ('<?xml version="1.0"?>\n<!DOCTYPE feature SYSTEM "gdb-target.dtd">\n'
                                    f'<feature name={quoteattr(feature.name)}>\n{feature.types}\n'
                                    + "\n".join(lines) + "\n</feature>\n")
            includes.append(f'<xi:include href={quoteattr(feature.annex)}/>')
        osabi = f"<osabi>{self.osabi}</osabi>\n" if self.osabi else ""
        files["target.xml"] = ('<?xml version="1.0"?>\n<!DOCTYPE target SYSTEM "gdb-target.dtd">\n'
                               f'<target version="1.0" xmlns:xi="http://www.w3.org/2001/XInclude">\n<architecture>{self.architecture}</architecture>\n'
                               f'{osabi}' + "\n".join(includes) + "\n</target>\n")
        return files


def little_endian(value: int, bits: int) -> bytes:
    """``value`` (masked to ``bits``) as gdb's register bytes."""
    return (value & ((1 << bits) - 1)).to_bytes(bits // 8, "little")
