"""``isasim show TRACE``: a trace file rendered for reading (terminal, or HTML via rich's recorder)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .isa import get_isa
from .render import markup_safe
from .trace import Trace, printable


# Text from the trace is shown as it is: "tileloadd tmm1,[rsi+rdx*1]" keeps its operand, a file
# "y[red].trace.json" its name, and control bytes are escaped.
_plain = markup_safe


def _value(v) -> str:
    return v if isinstance(v, str) else (hex(v) if isinstance(v, int) else str(v))


def _bytes_preview(data: bytes, note: str = "") -> str:
    """``N bytes[note]: the first 16 in hex ...`` (the one way this page shows bytes)."""
    return f"{len(data)} bytes{note}: {data[:16].hex(' ')}" + (" ..." if len(data) > 16 else "")


def show_trace(trace: Trace, out: Console) -> None:
    out.print(Text(printable(trace.source), style="bold"))
    out.print(f"format {trace.format} · isa {_plain(trace.isa)} · config {_plain(trace.config or '{}')}")
    out.print(f"producer: {_plain(trace.producer or '(not given)')}")
    try:
        program = get_isa(trace.isa).assemble("\n".join(trace.program), source=f"{trace.source}:program")
        listing = Table(title="program", title_justify="left", box=None, padding=(0, 1))
        for column in ("#", "address", "bytes", "instruction"):
            listing.add_column(column)
        for ins in program.instructions:
            label = program.label_at(ins.address)
            listing.add_row(str(ins.index), f"{ins.address:#x}", ins.encoding.hex(" ") if ins.encoding else "-",
                            _plain((f"{label}: " if label else "") + ins.text))
        out.print(listing)
    except Exception as error:  # a trace whose program does not assemble is still worth showing
        out.print(Text(printable(f"program (does not assemble: {error})"), style="red"))
        for line in trace.program:
            out.print(f"  {_plain(line)}")
    init = Table(title="initial state", title_justify="left", box=None, padding=(0, 1))
    init.add_column("where")
    init.add_column("value")
    for name, value in trace.init.regs.items():
        init.add_row(_plain(name), hex(value))
    for address, data, writable in trace.init.memory:
        view = next((v for v in trace.init.views if v.address == address), None)
        name = f" {_plain(view.name)} ({view.element} {view.shape[0]}x{view.shape[1]})" if view else ""
        init.add_row(f"memory {address:#x}{name}", _bytes_preview(data, "" if writable else ", read-only"))
    for name, data in trace.init.arrays.items():
        init.add_row(_plain(name), _bytes_preview(data))
    out.print(init)
    if trace.steps:
        steps = Table(title="steps", title_justify="left", box=None, padding=(0, 1))
        for column in ("step", "pc", "instruction", "changes"):
            steps.add_column(column)
        for step in trace.steps:
            writes = step.get("writes", [])
            parts = [_plain(f"{w.get('kind')} {_value(w.get('where'))}: {_value(w.get('old'))[:18]} -> "
                            f"{_value(w.get('new'))[:18]}") for w in writes[:6]]
            if len(writes) > 6:
                parts.append(f"... {len(writes) - 6} more")
            if step.get("fault"):
                parts.append(_plain(f"FAULT {step['fault'].get('kind')}: {step['fault'].get('rule', '')}"))
            steps.add_row(_plain(step.get("index", "?")), _plain(_value(step.get("pc", ""))),
                          _plain(step.get("text", "")),
                          "\n".join(parts) or "-")
        out.print(steps)
    expect = Table(title="expectations", title_justify="left", box=None, padding=(0, 1))
    expect.add_column("what")
    expect.add_column("expected")
    fault = trace.expect.get("fault", "unchecked")
    if fault != "unchecked":
        expect.add_row("fault", "none" if fault is None
                       else _plain(f"{fault['kind']} at instruction {fault.get('index')}"))
    for name, value in trace.expect.get("regs", {}).items():
        expect.add_row(_plain(name), hex(value))
    for name, data in trace.expect.get("arrays", {}).items():
        expect.add_row(_plain(name), _bytes_preview(data))
    for address, data in trace.expect.get("memory", []):
        expect.add_row(f"memory {address:#x}", _bytes_preview(data))
    out.print(expect)
