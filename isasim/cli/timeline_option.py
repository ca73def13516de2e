"""``--timeline FILE.json`` of the commands that run a program (run, step, replay): the run's schedule as Chrome
trace-event JSON (Perfetto, chrome://tracing), from the ISA's ``Isa.timeline`` hook.

An ISA without the hook (one instruction stream, nothing to draw) is refused in one line before anything runs,
and so is a file that cannot be written (a directory, a missing folder, an existing file without --force, a file
the command reads).  The file is written after the run, also when the run faulted: the timeline then shows the
instructions that completed before the fault.
"""

from __future__ import annotations

import json

from ..core.errors import UsageError
from ..core.isa import Isa, get_isa
from ..core.output import check_outputs, write_output
from ..core.render import markup_safe

HELP = ("also write the run's schedule as Chrome trace-event JSON (open it in Perfetto or chrome://tracing): a "
        "track per pipe, a box per instruction, an arrow per flag; ts is the run-order step, not time (ISAs "
        "with parallel pipes: ascend_cube)")


def add_timeline_option(parser) -> None:
    parser.add_argument("--timeline", metavar="FILE", help=HELP)


def has_timeline(isa: Isa) -> bool:
    """Whether ``isa`` overrides the Isa.timeline hook (the default says it has none)."""
    return type(isa).timeline is not Isa.timeline


def check_timeline(args, isa_name: str, *, inputs: tuple = (), others: dict | None = None) -> None:
    """Before the run: refuse --timeline for an ISA without a timeline, or a FILE that cannot be written.
    ``others``: the command's other output options (option -> path), checked with it so no two are one file."""
    path = getattr(args, "timeline", None)
    if not path:
        return
    if not has_timeline(get_isa(isa_name)):
        raise UsageError(f"--timeline: {isa_name} has no timeline to write (the Isa.timeline hook; "
                         f"ascend_cube has one: its pipes)")
    check_outputs({**(others or {}), "--timeline": path}, force=getattr(args, "force", False), inputs=inputs)


def write_timeline(args, machine, out) -> None:
    """After the run: write the timeline of ``machine``'s run to --timeline's FILE, and say so on ``out``."""
    path = getattr(args, "timeline", None)
    if not path:
        return
    document = machine.isa.timeline(machine.state)
    if document is None:
        raise UsageError(f"--timeline: this {machine.isa.name} run has no timeline; nothing was written")
    write_output(path, document_text(document), force=getattr(args, "force", False))
    boxes = sum(1 for event in document["traceEvents"] if event.get("ph") == "X")
    tracks = sum(1 for event in document["traceEvents"] if event.get("name") == "thread_name")
    out.print(f"wrote {markup_safe(path)}: {boxes} instruction{'' if boxes == 1 else 's'} on {tracks} "
              f"track{'' if tracks == 1 else 's'} (Chrome trace-event JSON; ts is the run-order step, not time)")


def document_text(document: dict) -> str:
    """The document as JSON with one trace event a line (small, and a reader or diff sees event by event)."""
    events = ",\n".join("  " + json.dumps(event) for event in document["traceEvents"])
    rest = "".join(f",\n \"{key}\": {json.dumps(value)}" for key, value in document.items() if key != "traceEvents")
    return "{\"traceEvents\": [\n" + events + "\n ]" + rest + "\n}\n"
