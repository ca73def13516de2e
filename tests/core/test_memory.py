"""Memory.record_accesses: the reads and writes one instruction makes, for explain (not only the writes
that changed bytes, which is all the journal keeps)."""

import numpy as np

from isasim.core.journal import Journal
from isasim.core.memory import Memory


def test_reads_and_writes_are_noted_in_order_including_writes_of_equal_bytes():
    memory = Memory(Journal())
    memory.map(0x1000, bytes(range(64)))
    with memory.record_accesses() as accesses:
        memory.read(0x1004, 4)
        memory.write(0x1008, bytes([8, 9]))  # the bytes it already holds: no journal write
        rows = memory.read_rows(0x1000, 16, 3, 8)
    assert accesses == [("read", 0x1004, 4), ("write", 0x1008, bytes([8, 9])),
                        ("read", 0x1000, 8), ("read", 0x1010, 8), ("read", 0x1020, 8)]
    assert rows.shape == (3, 8)
    assert memory.journal.take() == []
    memory.read(0x1000, 1)  # outside the block: not noted, and nothing keeps a list
    assert memory.accesses is None


def test_rows_written_in_one_go_are_noted_row_by_row():
    journal = Journal()
    journal.enabled = False  # write_rows only writes in one go when nothing is journaled
    memory = Memory(journal)
    memory.map(0x2000, 64)
    with memory.record_accesses() as accesses:
        assert memory.write_rows(0x2000, 32, np.arange(16, dtype=np.uint8).reshape(2, 8))
    assert accesses == [("write", 0x2000, bytes(range(8))), ("write", 0x2020, bytes(range(8, 16)))]
