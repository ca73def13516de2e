"""The toy ISA: the worked example of docs/adding-an-engine.md, and the ISA-conformance tests' extra subject.

It is laid out as every ISA package is (config, state, faults, context, forms, semantics, operands,
assembler, encoding, decoder, views, explain, fuzz: the same part, the same file name), small enough to
read in one sitting, and it proves that an ISA is a package and one registry line: nothing in
``isasim/`` knows it.  The tests plug it in with
``monkeypatch.setitem(KNOWN_ISAS, "toy", "toy_isa")`` (this folder is on sys.path, as
for every shared test helper).  It has what the Ascend cube will have and x86 has
not: no binary encoding (instructions are text, one address apart, and
``Instruction.encoding`` is None) and an array that is not memory (``acc``).  Its twin
``toy_isa.encoded`` ("toy32") has the same instructions with an eight-byte encoding,
so a disassemble round trip is tested for an ISA other than x86 too.

State: r0-r3 (32 bits), pc, the accumulator ``acc`` (four 32-bit elements, 16 bytes,
viewed as int32 or uint8) and memory.  Instructions (see :mod:`.forms` and :mod:`.semantics`): li, add, addi,
ld, st, mac, mova, bnz, halt.  Faults: MEMFAULT (a load or store outside the mapped
memory); an accumulator index past acc[3] is UNDEFINED: refused when assembling text,
raised when executing toy32 bytes that hold one (written ``.byte ...``).
"""

from __future__ import annotations

from isasim.core.errors import ConfigError, DecodeError
from isasim.core.isa import ArraySpec, Isa, WatchTarget
from isasim.core.journal import Journal
from isasim.core.program import Instruction, Program

from . import assembler, config, decoder, views
from .context import ToyContext
from .state import ACC_BYTES, ToyState


class Toy(Isa):
    title = "a toy ISA (tests only)"
    config_options = ()  # nothing to configure
    stepper_locations = """    r0 ... r3, pc                  registers (p, w)
    regs                           every register (p)
    acc [int32|uint8] [hex]        the accumulator, four 32-bit elements (p, w)
    acc[i]                         one element of it (w)"""

    def __init__(self, name: str = "toy", *, encoded: bool = False, code_base: int = 0):
        self.name = name
        self.encoded = encoded
        self.code_base = code_base
        self._explainer = None  # made on first use: loading an ISA stays cheap

    def configure(self, settings: dict | None) -> dict:
        return config.configure(self.name, settings)

    def new_state(self, config: dict, journal: Journal) -> ToyState:
        return ToyState(journal)

    def new_context(self, state: ToyState, memory) -> ToyContext:
        return ToyContext(state, memory)

    # ---- programs ----------------------------------------------------------------------------
    def assemble(self, text: str, source: str = "<input>", base: int | None = None) -> Program:
        return assembler.assemble(text, self.name, source, self.code_base if base is None else base, self.encoded)

    def disassemble(self, code: bytes, base: int | None = None) -> Program:
        if not self.encoded:
            raise DecodeError(f"{self.name} has no binary encoding: its programs are text only")
        return decoder.disassemble(code, self.name, self.code_base if base is None else base)

    def source_line(self, instruction: Instruction) -> str:
        """The line that assembles back to ``instruction``: its text, or for an UNDEFINED encoding (which
        no text assembles to) its bytes."""
        if instruction.invalid is None:
            return instruction.text
        return ".byte " + ",".join(f"{b:#04x}" for b in instruction.encoding)

    # ---- observable state ----------------------------------------------------------------------
    def arrays(self, config: dict) -> list[ArraySpec]:
        return [ArraySpec("acc", ACC_BYTES, views.ACC_VIEWS, row_bytes=ACC_BYTES)]

    def observed_arrays(self, state: ToyState) -> dict[str, bytes]:
        return {"acc": state.acc_bytes()}

    def seed_arrays(self, state: ToyState, arrays: dict[str, bytes]) -> None:
        for name, data in arrays.items():
            if name != "acc":
                raise ConfigError(f"init.arrays.{name}: {self.name} has no array '{name}' (its arrays: acc)")
            if len(data) != ACC_BYTES:
                raise ConfigError(f"init.arrays.acc: acc is {ACC_BYTES} bytes, not {len(data)}")
            state.set_acc_bytes(data)

    # ---- views ----------------------------------------------------------------------------------
    def parse_show(self, item: str) -> tuple[str, str]:
        name, _, element = item.strip().partition(":")
        if name.strip() != "acc" or element.strip() not in views.ACC_VIEWS:
            raise ValueError(f"expected acc:TYPE with TYPE one of {', '.join(views.ACC_VIEWS)}")
        return "acc", element.strip()

    def render_state(self, state: ToyState, program: Program | None = None, **options):
        return views.state_view(state, **options)

    def render_step(self, record, state: ToyState, program: Program | None = None, **options):
        return views.step_view(record, state, **options)

    def render_item(self, state: ToyState, what: str, args: list[str], program: Program | None = None, **options):
        return views.item_view(state, what, args, width=options.get("width", 100))

    def watch_value(self, state: ToyState, what: str, element_types: dict[str, str]) -> WatchTarget | None:
        return views.watch_value(state, what, element_types)

    # ---- optional hooks ---------------------------------------------------------------------
    def explainer(self):
        """The explainer of this ISA object (toy and toy32 share the module, not the instance: an
        explainer's explain() is not told which ISA it explains)."""
        if self._explainer is None:
            from .explain import ToyExplainer

            self._explainer = ToyExplainer(self)
        return self._explainer


ISA = Toy()
