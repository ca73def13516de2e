"""The toy's architectural state: four 32-bit registers, a pc, and the accumulator array ``acc``.

Every write goes through :meth:`ToyState.write_reg` or :meth:`ToyState.write_acc`, which
record it in the journal (what ``isasim step`` shows and a trace's ``steps`` hold).
"""

from __future__ import annotations

from isasim.core.errors import IsasimError
from isasim.core.journal import Journal, Location

REGISTER_COUNT = 4
REGISTER_NAMES = tuple(f"r{n}" for n in range(REGISTER_COUNT))
ACC_ELEMENTS = 4  # acc holds four 32-bit elements: 16 bytes
ACC_BYTES = 4 * ACC_ELEMENTS
WORD = 1 << 32

# the journal's locations, made once (a Location is the text a trace stores in steps[].writes[].where)
REGISTER_LOCATIONS = tuple(Location(name) for name in REGISTER_NAMES)
ACC_LOCATIONS = tuple(Location("acc", i) for i in range(ACC_ELEMENTS))


class ToyState:
    def __init__(self, journal: Journal):
        self.journal = journal
        self.regs = [0] * REGISTER_COUNT
        self.acc = [0] * ACC_ELEMENTS  # each element an unsigned 32-bit value
        self.pc = 0

    # ---- what the core asks for (isasim.core.isa.State) ----------------------------------
    def register_names(self) -> list[str]:
        return [*REGISTER_NAMES, "pc"]

    def read_register(self, name: str) -> int:
        name = name.lower()
        if name == "pc":
            return self.pc
        return self.regs[self._number(name)]

    def write_register(self, name: str, value: int) -> None:
        name = name.lower()
        if name == "pc":
            raise IsasimError("pc is set by the program's start, not by init.regs")
        self.write_reg(self._number(name), value)

    @staticmethod
    def _number(name: str) -> int:
        if name not in REGISTER_NAMES:
            raise IsasimError(f"unknown register '{name}' (toy has r0-r3 and pc)")
        return REGISTER_NAMES.index(name)

    # ---- what the semantics use ------------------------------------------------------------
    def write_reg(self, n: int, value: int) -> None:
        old, new = self.regs[n], value % WORD
        self.regs[n] = new
        self.journal.record("reg", REGISTER_LOCATIONS[n], old, new)

    def write_acc(self, i: int, value: int) -> None:
        old, new = self.acc[i], value % WORD
        self.acc[i] = new
        self.journal.record("array", ACC_LOCATIONS[i], old.to_bytes(4, "little"), new.to_bytes(4, "little"))

    def acc_bytes(self) -> bytes:
        return b"".join(value.to_bytes(4, "little") for value in self.acc)

    def set_acc_bytes(self, data: bytes) -> None:
        for i in range(ACC_ELEMENTS):
            self.write_acc(i, int.from_bytes(data[4 * i : 4 * i + 4], "little"))
