"""What a semantics function sees: the registers, the accumulator and memory, in the manual's words.

The semantics never touch the state's lists or the core's memory directly: R(n), set_R(n, v), ACC(i),
set_ACC(i, v), load_word and store_word are the manual's accessors, and every write goes through the
state, which records it in the journal (what ``isasim step`` shows).
"""

from __future__ import annotations

from isasim.core.faults import MemoryFault

from .faults import memfault
from .state import ToyState


class ToyContext:
    def __init__(self, state: ToyState, memory):
        self.state, self.memory = state, memory

    def R(self, n: int) -> int:
        return self.state.regs[n]

    def set_R(self, n: int, value: int) -> None:
        self.state.write_reg(n, value)

    def ACC(self, i: int) -> int:
        return self.state.acc[i]

    def set_ACC(self, i: int, value: int) -> None:
        self.state.write_acc(i, value)

    def load_word(self, address: int) -> int:
        try:
            return int.from_bytes(self.memory.read(address, 4), "little")
        except MemoryFault as fault:
            raise memfault(fault) from None

    def store_word(self, address: int, value: int) -> None:
        try:
            self.memory.write(address, value.to_bytes(4, "little"))
        except MemoryFault as fault:
            raise memfault(fault) from None
