"""The Arm SME2 oracles: clang (from zig) for encodings, QEMU >= 10.1 for execution.

    encode(line) / encode_many(lines)           instruction words, as clang assembles them
    run(snippet, state, svl) / run_many(...)    the state after a snippet, as QEMU runs it
    qemu_problem() / clang_problem()            None when the oracle works here, else why not

``tools/install_oracles.sh`` fetches both tools into the project's ``.oracles/``.
"""

from .assemble import AsmError, encode, encode_many
from .qemu import MEMORY_BASE, SVLS, Fault, OracleError, OracleFault, build, run, run_many
from .tools import OracleUnavailable, clang_problem, oracle_dir, qemu_problem

__all__ = ["AsmError", "encode", "encode_many", "MEMORY_BASE", "SVLS", "Fault", "OracleError", "OracleFault",
           "build", "run", "run_many", "OracleUnavailable", "clang_problem", "oracle_dir", "qemu_problem"]
