"""The data behind the interactive trace page: a program's run as an initial state and each step's byte patches.

``build_model`` runs a program on a fresh :class:`isasim.core.machine.Machine` and returns a JSON-able dict
(``"format": "isasim-page/1"``) that the page's script turns back into the state of any step:

- ``initial``: ``{"panels": [panel, ...]}``, the state before the first step.  A panel is a named byte array
  and how to show it: ``name`` (unique), ``title``, ``group`` ("registers", "arrays" or "memory"), ``size``,
  ``row_bytes`` (bytes per grid row), ``elements`` (the types it can be viewed as; the viewer adds "hex"),
  ``element`` (the default), ``labels`` (row names, for the registers), ``address`` (memory), ``show`` (open
  at first) and ``data``: its bytes in hex, trailing zero bytes left out (a 512 KiB buffer of zeros is "").
- ``steps[i]``: ``index``, ``pc``, ``instruction`` (the listing index of the instruction that ran),
  ``patches`` (``[panel, byte offset, new bytes hex]``, only the bytes that changed), ``fault`` (None or
  ``{"kind", "rule", "index"}``) and, where a step changed which arrays the state holds or their shape
  (x86: LDTILECFG configures tiles), ``panels`` (whole new definitions, applied before the patches) and
  ``removed`` (names of panels the state no longer holds).
- ``truncated``: None, or a sentence saying which steps the page leaves out and why.
- ``workings``: whether the ISA gives accounts of the elements a step writes (``Isa.element_workings``);
  then a step that has any carries ``workings``: ``[{"panel", "offset", "size", "title", "equal"}]`` (the
  element's panel and its byte offset there, and whether every check in its account agreed) and
  ``workings_html``: the accounts as core.explain.html_page renders them, a JSON list in the same order,
  gzip-compressed and base64-encoded (an Mmad's 1,200 tables of 70 products are 13 MB of HTML, 1 MB so);
  ``workings_truncated`` is None or a sentence saying from which step on the accounts were left out
  (``workings_until``: the index of the first step without them) to keep the page small.

- ``steps[i]["outlines"]``: the array bytes the step's instruction addressed as operands (``Isa.page_outlines``,
  read from the state before the step): ``[{"panel", "spans": [[start, end], ...], "label", "role"}]``, absent
  where it gives none (and past the steps that keep their accounts); ``outlines_error`` names the hook's failure
  at that step.
- ``views``: the ISA's derived views of its arrays (``Isa.page_views``: ZA's tiles, L0C as the Mmad's matrix),
  each ``{"name", "panel", "element", "elements", "rows", "cols", "note", "show"}`` and its cells' byte
  offsets into the panel: ``"base"``, ``"row_stride"``, ``"col_stride"`` where they are regular (cell (i, j)
  at base + i * row_stride + j * col_stride), else ``"offsets"``, the rows x cols offsets row by row; a view
  whose cells are bit fields also has ``"fields"`` (``[{"name", "first_bit", "width", "kind", "add", "note"}]``)
  and "fields" first in its ``elements``;
  ``views_error`` names a hook that failed (the page then has no views).

Nothing here knows an ISA: registers come from ``state.register_names()``/``read_register``, arrays from
``Isa.arrays`` and ``Isa.observed_arrays``, memory from the init's named regions, and what a step changed
from its journal writes (a register name, an array name, or a memory address).
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import IsasimError
from ..explain.html_page import html_block
from ..explain.model import Check
from ..isa import Isa, PageField, PageOutline, PageView, get_isa
from ..machine import Machine
from ..numerics import ELEMENT_TYPES
from ..program import Program
from ..trace import Init, Trace

FORMAT = "isasim-page/1"
PAGE_STEP_LIMIT = 100_000  # the steps a page holds unless told otherwise
DEFAULT_PATCH_BUDGET = 20 * 1024 * 1024  # characters of patch hex the page may hold (about 10 MB of changes)
MAX_UNNAMED_REGION = 16 * 1024  # an init region without a name is shown when at most this big
REGISTER_TYPES = ("uint64", "int64")
FIELD_KINDS = ("unsigned", "signed", "float_top")
# The accounts of written elements (click-for-working) are kept for at most this many steps and this many
# characters as stored (compressed HTML): a 100,000-step kernel writes too many elements to explain each one.
WORKINGS_STEP_LIMIT = 5_000
DEFAULT_WORKINGS_BUDGET = 8 * 1024 * 1024
# Changed bytes closer than this are sent as one patch: fewer, slightly longer patches are smaller in JSON.
MERGE_GAP = 8


class _Panel:
    """One panel while the model is built: its definition and its current bytes (a uint8 array)."""

    __slots__ = ("name", "title", "group", "row_bytes", "elements", "element", "labels", "address", "show",
                 "data")

    def __init__(self, name: str, title: str, group: str, data: bytes, row_bytes: int | None,
                 elements: tuple[str, ...], element: str, *, labels: list[str] | None = None,
                 address: int | None = None, show: bool = True):
        self.name, self.title, self.group = name, title, group
        self.data = np.frombuffer(bytes(data), dtype=np.uint8).copy()
        self.row_bytes = row_bytes if row_bytes and row_bytes > 0 else _default_row_bytes(len(data))
        self.elements, self.element, self.labels = tuple(elements), element, labels
        self.address, self.show = address, show

    def definition(self) -> dict:
        data = self.data.tobytes().rstrip(b"\0")
        panel = {"name": self.name, "title": self.title, "group": self.group, "size": int(self.data.size),
                 "row_bytes": self.row_bytes, "elements": list(self.elements), "element": self.element,
                 "show": self.show, "data": data.hex()}
        if self.labels is not None:
            panel["labels"] = self.labels
        if self.address is not None:
            panel["address"] = self.address
        return panel


def _default_row_bytes(size: int) -> int:
    """Rows of 64 bytes (a cache line, a tile row, a 512-bit vector) when the size allows, else one row."""
    return 64 if size > 64 and size % 64 == 0 else max(size, 1)


def _changed_ranges(old: np.ndarray, new: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) ranges where ``new`` differs from ``old`` (same length), gaps under MERGE_GAP merged."""
    where = np.flatnonzero(old != new)
    if where.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(where) > MERGE_GAP)
    starts = np.concatenate(([where[0]], where[breaks + 1]))
    ends = np.concatenate((where[breaks], [where[-1]])) + 1
    return list(zip(starts.tolist(), ends.tolist()))


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """[low, high) address spans sorted and joined where they overlap or nearly touch (a tile store writes
    16 rows one after another: one read of memory instead of sixteen)."""
    merged: list[list[int]] = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1] + MERGE_GAP:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return [(low, high) for low, high in merged]


def _element_size(element: str) -> int:
    return ELEMENT_TYPES[element].size if element in ELEMENT_TYPES else 1


class _Workings:
    """The accounts of the elements each step writes (``Isa.element_workings``), while the budget lasts.

    The hook wants the machine as it was just before the step.  A second machine runs the same program one
    step behind the model's and is that state: stepping it costs about what the step itself costs, where a
    checkpoint per step would copy every mapped byte (a 2 MB buffer 5,000 times).  It exists only for an ISA
    that overrides the hook, and is dropped once the accounts stop."""

    def __init__(self, builder: "_Builder", config: dict, program: Program, init: Init, step_limit: int,
                 budget: int):
        self.builder = builder
        self.before: Machine | None = Machine(builder.isa, config)
        self.before.load_init(program, init)
        self.step_limit, self.budget, self.size = step_limit, budget, 0
        self.until: int | None = None  # the first step whose accounts were left out
        self.reason = ""

    def _stop(self, index: int, reason: str) -> None:
        self.until, self.reason, self.before = index, reason, None

    def after_step(self, record: Any, after: Machine, step: dict) -> None:
        """The step's accounts into ``step`` (``workings``, ``workings_html``, or the hook's error in one line
        as ``workings_error``); then the second machine takes the same step."""
        before = self.before
        if before is None:
            return
        if record.index >= self.step_limit:
            self._stop(record.index, f"the page keeps them for the first {self.step_limit:,} steps")
            return
        kept: list[tuple[dict, str]] = []
        if record.fault is None:
            try:
                workings = self.builder.isa.element_workings(record.instruction, before, after)
            except Exception as failure:  # an account that fails must not cost the page: the step says so
                workings = []
                step["workings_error"] = f"{type(failure).__name__}: {failure}".splitlines()[0]
            kept = [w for w in (self.builder.working(working) for working in workings) if w is not None]
        if kept:
            packed = _pack([text for _where, text in kept])
            size = len(packed) + sum(len(json.dumps(where)) for where, _text in kept)
            if self.size + size > self.budget:
                self._stop(record.index, f"they would pass the page's budget of "
                                         f"{self.budget / (1024 * 1024):g} MB for them")
                return
            self.size += size
            step["workings"] = [where for where, _text in kept]
            step["workings_html"] = packed
        if not before.finished:
            before.step()


def _pack(texts: list[str]) -> str:
    """A list of strings as the page stores them: JSON, gzip (no time stamp: the same run gives the same
    page), base64.  The page's script unpacks it with the browser's DecompressionStream."""
    data = json.dumps(texts, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(data, compresslevel=6, mtime=0)).decode("ascii")


def unpack_workings_html(step: dict) -> list[str]:
    """A step's accounts as HTML, in the order of its ``workings`` ([] for a step without any)."""
    packed = step.get("workings_html")
    return json.loads(gzip.decompress(base64.b64decode(packed))) if packed else []


class _Builder:
    def __init__(self, isa_name: str, config: dict, program: Program, init: Init):
        self.isa = get_isa(isa_name)
        self.machine = Machine(self.isa, config)
        self.machine.load_init(program, init)
        self.program = program
        self.state = self.machine.state
        self.register_names = [name for name in self.state.register_names() if name != self.isa.pc_register]
        self.register_row = {name: i for i, name in enumerate(self.register_names)}
        self.register_bytes = 8
        self.specs = {spec.name: spec for spec in self.isa.arrays(self.machine.config)}
        self.panels: dict[str, _Panel] = {}
        # an array's row count as the journal showed it (a field "rows" written, or the rows a step wrote),
        # which shapes an array whose ArraySpec has no row_bytes (x86: a tile of its configured rows x colsb)
        self.rows_seen: dict[str, int] = {}
        self._add_registers()
        self._add_arrays(self.isa.observed_arrays(self.state))
        self.memory_panels: list[tuple[int, int, _Panel]] = []  # (start, end, panel), named regions
        self._add_memory(init)

    # ---- the initial panels ------------------------------------------------------------------------------
    def _register_image(self) -> bytes:
        values = [self.state.read_register(name) & ((1 << 128) - 1) for name in self.register_names]
        if self.register_bytes == 8 and any(v >> 64 for v in values):
            raise IsasimError("a register wider than 64 bits cannot be shown on the page")
        return b"".join(v.to_bytes(8, "little") for v in values)

    def _add_registers(self) -> None:
        panel = _Panel("registers", "registers", "registers", self._register_image(), 8, REGISTER_TYPES,
                       "uint64", labels=self.register_names)
        self.panels[panel.name] = panel

    def _array_panel(self, name: str, data: bytes) -> _Panel:
        spec = self.specs.get(name)
        elements = tuple(spec.elements) if spec is not None else ("uint8",)
        row_bytes = self._row_bytes(name, len(data))
        # open at first only when it holds something; the viewer opens a closed panel when a step writes it
        return _Panel(name, name, "arrays", data, row_bytes, elements, elements[0], show=any(data))

    def _row_bytes(self, name: str, size: int) -> int:
        spec = self.specs.get(name)
        if spec is not None and spec.row_bytes:
            return spec.row_bytes
        rows = self.rows_seen.get(name)
        if rows and size % rows == 0:
            return size // rows
        return _default_row_bytes(size)

    def _array_bytes(self, observed: dict[str, bytes], name: str) -> bytes | None:
        """An array's bytes now: as observed, or (an array of fixed size the state reports only when it is
        not all zero, as the Ascend buffers) zeros; None when the state does not hold it."""
        if name in observed:
            return observed[name]
        spec = self.specs.get(name)
        return bytes(spec.size) if spec is not None and spec.size else None

    def _add_arrays(self, observed: dict[str, bytes]) -> None:
        for name in [*self.specs, *(n for n in observed if n not in self.specs)]:
            data = self._array_bytes(observed, name)
            if data is not None:
                self.panels[name] = self._array_panel(name, data)

    def _add_memory(self, init: Init) -> None:
        views = {view.address: view for view in init.views}
        taken = set(self.panels)
        for address, data, _writable in init.memory:
            view = views.get(address)
            if view is None and len(data) > MAX_UNNAMED_REGION:
                continue
            if view is not None:
                rows, cols = view.shape
                size = min(len(data), rows * cols * _element_size(view.element))
                title, element = view.name, view.element
                row_bytes = cols * _element_size(view.element)
                show = view.show
            else:
                size, title, element, row_bytes, show = len(data), f"memory {address:#x}", "uint8", 16, False
            name = title if title not in taken else f"{title} (memory)"
            taken.add(name)
            elements = (element,) + tuple(e for e in ("int8", "uint8", "int16", "int32", "uint32", "bf16",
                                                        "fp16", "fp32") if e != element)
            panel = _Panel(name, title, "memory", self.machine.memory.read(address, size), row_bytes, elements,
                           element, address=address, show=show)
            self.panels[name] = panel
            self.memory_panels.append((address, address + size, panel))

    # ---- the account of one written element --------------------------------------------------------------
    def place(self, location: str, offset: int, size: int) -> tuple[str, int] | None:
        """The panel and byte offset that show ``size`` bytes at ``offset`` of ``location`` (an array's name,
        a register's, or "memory" with an address); None where the page shows no such bytes."""
        if location == "memory":
            for start, end, panel in self.memory_panels:
                if start <= offset and offset + size <= end:
                    return panel.name, offset - start
            return None
        if location in self.register_row:
            if offset + size > self.register_bytes:
                return None
            return "registers", self.register_row[location] * self.register_bytes + offset
        panel = self.panels.get(location)
        if panel is None or panel.group != "arrays" or offset + size > panel.data.size:
            return None
        return panel.name, offset

    def working(self, working: Any) -> tuple[dict, str] | None:
        """One ElementWorking as the page keeps it: where it is and what it says, and its HTML (None: it
        names bytes the page does not show)."""
        if not isinstance(working.offset, int) or not isinstance(working.size, int) or working.size <= 0 \
                or working.offset < 0:
            return None
        placed = self.place(working.location, working.offset, working.size)
        if placed is None:
            return None
        checks = [block for block in working.blocks if isinstance(block, Check)]
        return ({"panel": placed[0], "offset": placed[1], "size": working.size, "title": str(working.title),
                 "equal": bool(checks) and all(check.equal for check in checks)},
                "".join(html_block(block) for block in working.blocks))

    # ---- one step ---------------------------------------------------------------------------------------
    def _patch(self, panel: _Panel, new: np.ndarray, start: int, patches: list) -> None:
        """Patches for ``panel``'s bytes [start, start+len(new)) becoming ``new``, and the panel updated."""
        old = panel.data[start:start + new.size]
        if old.tobytes() == new.tobytes():  # most re-read panels did not change: a byte compare says so fastest
            return
        for a, b in _changed_ranges(old, new):
            patches.append([panel.name, start + a, new[a:b].tobytes().hex()])
        panel.data[start:start + new.size] = new

    def _refresh_arrays(self, names: set[str] | None, patches: list, changed: list, removed: list) -> None:
        """Read the arrays again (``names``: only these; None: all, as after a write the model cannot place)."""
        observed = self.isa.observed_arrays(self.state)
        candidates = [*self.specs, *(n for n in observed if n not in self.specs)] if names is None else names
        for name in candidates:
            data = self._array_bytes(observed, name)
            panel = self.panels.get(name)
            if data is None:
                if panel is not None:
                    del self.panels[name]
                    removed.append(name)
                continue
            if panel is None or panel.data.size != len(data) or panel.row_bytes != self._row_bytes(name, len(data)):
                panel = self._array_panel(name, data)
                self.panels[name] = panel
                changed.append(panel)
                continue
            self._patch(panel, np.frombuffer(data, dtype=np.uint8), 0, patches)

    def outlines(self) -> tuple[list[dict], str | None]:
        """The operands of the instruction about to run, as the page outlines them (before the step runs)."""
        instruction = self.machine.current_instruction()
        if instruction is None:
            return [], None
        try:
            found = self.isa.page_outlines(instruction, self.machine)
            return [outline for outline in (self._outline(o) for o in found) if outline is not None], None
        except Exception as failure:  # an outline that fails must not cost the page: the step says so
            return [], f"{type(failure).__name__}: {failure}".splitlines()[0]

    def _outline(self, outline: Any) -> dict | None:
        """One PageOutline as the model keeps it, its spans clipped to its panel (None: no panel shows it)."""
        if not isinstance(outline, PageOutline):
            raise IsasimError(f"page_outlines gives PageOutlines, not {type(outline).__name__}")
        panel = self.panels.get(outline.location)
        if panel is None or panel.group != "arrays":
            return None
        size = panel.data.size
        spans = [[max(0, int(a)), min(size, int(b))] for a, b in outline.spans if int(a) < size and int(b) > 0]
        spans = [span for span in spans if span[0] < span[1]]
        joined: list[list[int]] = []  # a tile's rows one after another are one span: a smaller page
        for span in spans:
            if joined and span[0] == joined[-1][1]:
                joined[-1][1] = span[1]
            else:
                joined.append(span)
        spans = joined
        if not spans:
            return None
        return {"panel": panel.name, "spans": spans, "label": str(outline.label), "role": str(outline.role)}

    def step(self, workings: _Workings | None = None, *, outline: bool = False) -> dict:
        machine = self.machine
        outlines, outlines_error = self.outlines() if outline else ([], None)
        with machine.memory.record_accesses() as accesses:
            record = machine.step()
        patches: list = []
        changed: list[_Panel] = []
        removed: list[str] = []
        registers = False
        arrays: set[str] | None = set()
        spans: list[tuple[int, int]] = []
        for write in record.writes:
            where = write.where
            if isinstance(where, int):
                spans.append((where, where + len(write.new)))
                continue
            name = where.name
            if name in self.register_row and where.subscript is None and where.field is None:
                registers = True
            elif name in self.specs and where.field is None:
                if arrays is not None:
                    arrays.add(name)
                if isinstance(where.subscript, int) and where.subscript >= 0:
                    self.rows_seen[name] = max(self.rows_seen.get(name, 0), where.subscript + 1)
            else:  # a field, a flag, a configuration: the model cannot place it, so read everything again
                if name in self.specs and where.field == "rows" and isinstance(write.new, int):
                    self.rows_seen[name] = write.new
                registers, arrays = True, None
        spans.extend((address, address + len(data)) for kind, address, data in accesses if kind == "write")
        if registers:
            self._patch(self.panels["registers"], np.frombuffer(self._register_image(), dtype=np.uint8), 0,
                        patches)
        if arrays is None or arrays:
            self._refresh_arrays(arrays, patches, changed, removed)
        for low, high in _merged(spans):
            for start, end, panel in self.memory_panels:
                a, b = max(low, start), min(high, end)
                if a < b:
                    data = np.frombuffer(machine.memory.read(a, b - a), dtype=np.uint8)
                    self._patch(panel, data, a - start, patches)
        step = {"index": record.index, "pc": record.pc, "instruction": record.instruction.index,
                "patches": patches, "fault": None}
        if record.fault is not None:
            step["fault"] = {"kind": record.fault.kind, "rule": record.fault.rule, "index": record.fault.index}
        if changed:
            step["panels"] = [panel.definition() for panel in changed]
        if removed:
            step["removed"] = removed
        if outlines:
            step["outlines"] = outlines
        if outlines_error:
            step["outlines_error"] = outlines_error
        if workings is not None:
            workings.after_step(record, machine, step)
        return step


def _view(builder: "_Builder", view: Any) -> dict:
    """One PageView as the model keeps it (see the module's text); IsasimError when it does not fit its panel."""
    if not isinstance(view, PageView):
        raise IsasimError(f"page_views gives PageViews, not {type(view).__name__}")
    panel = builder.panels.get(view.panel)
    spec = builder.specs.get(view.panel)
    size = spec.size if spec is not None and spec.size else (panel.data.size if panel is not None else None)
    if size is None:
        raise IsasimError(f"view {view.name}: the page has no panel {view.panel!r}")
    if view.element not in ELEMENT_TYPES:
        raise IsasimError(f"view {view.name}: unknown element type {view.element!r}")
    width = _element_size(view.element)
    offsets = np.asarray(view.offsets.tolist() if hasattr(view.offsets, "tolist") else view.offsets,
                         dtype=np.int64)
    if offsets.ndim != 2 or offsets.size == 0:
        raise IsasimError(f"view {view.name}: offsets must be rows x cols, not of shape {offsets.shape}")
    if offsets.min() < 0 or offsets.max() + width > size:
        raise IsasimError(f"view {view.name}: an element lies outside {view.panel}'s {size} bytes")
    rows, cols = offsets.shape
    # the element types of the panel with the view's element size, the view's own first (the page adds hex)
    elements = [view.element] + [e for e in (spec.elements if spec is not None else panel.elements)
                                 if e != view.element and e in ELEMENT_TYPES and _element_size(e) == width]
    fields = [_field(view.name, field, 8 * width) for field in view.fields]
    out = {"name": str(view.name), "panel": view.panel, "element": view.element,
           "elements": (["fields"] if fields else []) + elements,
           "rows": rows, "cols": cols, "note": str(view.note), "show": bool(view.show)}
    if fields:
        out["fields"] = fields
    base = int(offsets[0, 0])
    row_stride = int(offsets[1, 0] - base) if rows > 1 else 0
    col_stride = int(offsets[0, 1] - base) if cols > 1 else 0
    regular = base + np.arange(rows)[:, None] * row_stride + np.arange(cols)[None, :] * col_stride
    if np.array_equal(regular, offsets):
        out.update(base=base, row_stride=row_stride, col_stride=col_stride)
    else:
        out["offsets"] = offsets.reshape(-1).tolist()
    return out


def _field(view_name: str, field: Any, bits: int) -> dict:
    """One PageField as the model keeps it; IsasimError when it does not lie inside the view's cells."""
    if not isinstance(field, PageField):
        raise IsasimError(f"view {view_name}: fields are PageFields, not {type(field).__name__}")
    if field.kind not in FIELD_KINDS:
        raise IsasimError(f"view {view_name}: field {field.name} has kind {field.kind!r}, not one of "
                          f"{', '.join(FIELD_KINDS)}")
    if not (isinstance(field.first_bit, int) and isinstance(field.width, int) and field.first_bit >= 0
            and field.width >= 1 and field.first_bit + field.width <= bits):
        raise IsasimError(f"view {view_name}: field {field.name} (bits {field.first_bit}, width {field.width}) "
                          f"does not lie inside a {bits}-bit cell")
    if field.kind == "float_top" and field.width > 32:
        raise IsasimError(f"view {view_name}: field {field.name} is the top bits of a binary32: at most 32 bits")
    return {"name": str(field.name), "first_bit": field.first_bit, "width": field.width, "kind": field.kind,
            "add": int(field.add), "note": str(field.note)}


def view_offsets(view: dict) -> np.ndarray:
    """A model view's cells as a rows x cols array of byte offsets into its panel (either encoding)."""
    rows, cols = view["rows"], view["cols"]
    if "offsets" in view:
        return np.asarray(view["offsets"], dtype=np.int64).reshape(rows, cols)
    return (view["base"] + np.arange(rows)[:, None] * view["row_stride"]
            + np.arange(cols)[None, :] * view["col_stride"])


def _views(builder: "_Builder", program: Program) -> tuple[list[dict], str | None]:
    """The ISA's views of its arrays for this run, and the hook's error in one line (then no views)."""
    try:
        views = [_view(builder, view) for view in builder.isa.page_views(builder.machine.config, program)]
    except Exception as failure:  # a view that fails must not cost the page: the model says so
        return [], f"{type(failure).__name__}: {failure}".splitlines()[0]
    names = [view["name"] for view in views]
    if len(set(names)) != len(names):
        return [], "IsasimError: page_views gave two views of the same name"
    return views, None


def _listing(program: Program) -> list[dict]:
    """The program's lines, each with its form's one-line summary (what the page says of a written element
    the ISA gives no account of)."""
    return [{"index": ins.index, "address": ins.address, "text": ins.text, "label": program.label_at(ins.address),
             "summary": getattr(ins.form, "summary", "") or ""}
            for ins in program.instructions]


def build_model(isa_name: str, config: dict, program: Program, init: Init, *, max_steps: int = PAGE_STEP_LIMIT,
                title: str = "", patch_budget: int = DEFAULT_PATCH_BUDGET,
                workings_steps: int = WORKINGS_STEP_LIMIT, workings_budget: int = DEFAULT_WORKINGS_BUDGET) -> dict:
    """Run ``program`` from ``init`` and return the page's model (see the module's text).

    Stops at the program's end, at a fault (the faulting step is the last, with its ``fault``), after
    ``max_steps`` steps, or once the patches hold ``patch_budget`` characters of hex; the last two set
    ``truncated``.  The accounts of written elements are kept for the first ``workings_steps`` steps while
    their HTML stays within ``workings_budget`` characters; past that ``workings_truncated`` says so."""
    for name, value in (("workings_steps", workings_steps), ("workings_budget", workings_budget)):
        if not isinstance(value, int) or value < 0:
            raise IsasimError(f"{name} must be a whole number, not {value!r}")
    if not isinstance(max_steps, int) or max_steps < 0:
        raise IsasimError(f"max_steps must be a whole number of steps, not {max_steps!r}")
    get_isa(isa_name)  # an unknown ISA is refused by its name before the program is looked at
    if not isinstance(program, Program):
        raise IsasimError(f"build_model runs a Program (from Isa.assemble), not {type(program).__name__}")
    if program.isa != isa_name:
        raise IsasimError(f"the program is for {program.isa}, not {isa_name}")
    builder = _Builder(isa_name, config, program, init)
    machine = builder.machine
    # only an ISA that overrides the hook pays for the machine one step behind
    explains = type(builder.isa).element_workings is not Isa.element_workings
    workings = _Workings(builder, config, program, init, workings_steps, workings_budget) if explains else None
    outlines = type(builder.isa).page_outlines is not Isa.page_outlines
    initial = {"panels": [panel.definition() for panel in builder.panels.values()]}
    views, views_error = _views(builder, program)
    steps: list[dict] = []
    truncated = None
    size = 0
    if machine.program is not None and machine.state.pc == program.end:
        machine.halted = True  # an empty program has ended before its first step
    while not machine.finished:
        if len(steps) >= max_steps:
            truncated = (f"The page shows the first {max_steps:,} steps; the run had not ended there "
                         f"(its step limit for a page is {max_steps:,}).")
            break
        if size >= patch_budget:
            truncated = (f"The page shows the first {len(steps):,} steps: their changes fill the page's budget "
                         f"of {patch_budget // (1024 * 1024)} MB of changes, and the run had not ended there.")
            break
        # outlines are kept for the steps that keep their accounts: both explain the step the reader looks at
        step = builder.step(workings, outline=outlines and len(steps) < workings_steps)
        size += sum(len(patch[2]) for patch in step["patches"]) + sum(
            len(panel["data"]) for panel in step.get("panels", ()))
        steps.append(step)
    end = {"steps": machine.steps, "halted": machine.halted,
           "fault": None if machine.fault is None else {"kind": machine.fault.kind, "rule": machine.fault.rule,
                                                        "index": machine.fault.index}}
    workings_truncated = None
    if workings is not None and workings.until is not None:
        shown = (f"is shown for steps 1 to {workings.until:,}; from step {workings.until + 1:,} on it was left out"
                 if workings.until else "was left out of this page")
        workings_truncated = (f"How each written element was computed {shown} ({workings.reason}): "
                              f"isasim explain gives it for any instruction.")
    return {"format": FORMAT, "isa": builder.isa.name, "config": _jsonable(machine.config),
            "config_title": builder.isa.config_title(machine.config), "title": title or "isasim trace",
            "listing": _listing(program), "initial": initial, "steps": steps, "end": end,
            "truncated": truncated, "workings": explains,
            "workings_until": None if workings is None else workings.until,
            "workings_truncated": workings_truncated, "views": views, "views_error": views_error}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def trace_model(trace: Trace, **kw: Any) -> dict:
    """``build_model`` for a trace file's ISA, configuration, program and initial state (its recorded steps,
    if any, are not needed: the run is made again)."""
    isa = get_isa(trace.isa)
    program = isa.assemble("\n".join(trace.program), source=f"{trace.source}:program")
    kw.setdefault("title", Path(trace.source).name)  # the file's name: a page may travel, its folder need not
    return build_model(trace.isa, trace.config, program, trace.init, **kw)
