"""The trace file format ``isasim-trace/2``: read, write, and check expectations.

One JSON object per file::

    {
      "format":   "isasim-trace/2",
      "isa":      "x86_amx",
      "config":   {"cpu": "emerald-rapids"},
      "producer": "where the expectations came from",
      "program":  ["assembly line", ...],
      "init":     {"regs": {"rdi": "0x10000000"}, "args": [...],
                   "memory": [{"addr": "0x10000000", "hex": "00ff..", "readonly": false}],
                   "arrays": {"tilecfg": "hex"}},
      "expect":   {"regs": {...}, "memory": [{"addr": ..., "hex": ...}],
                   "fault": null | {"kind": "#UD", "index": 3},
                   "arrays": {"tmm0": "hex of its bytes", "tilecfg": "hex"}},
      "steps":    [{"index": 0, "pc": "0x400000", "text": "...", "writes": [...], "fault": ...}]
    }

Integers are JSON numbers or "0x" strings.  ``expect`` lists only what is
checked.  Memory not in ``init`` is unmapped.  A memory region may instead of
``hex`` give ``size`` (zero-filled) or ``type`` and ``values`` (little-endian
elements: int8 ... uint64, bf16, fp16, fp32 from numbers), which is convenient
in hand-written init files.  ``arrays`` are the ISA's declared state arrays
(``Isa.arrays``: tiles, ZA, Z and P registers, a cube's buffers), by name.
Unknown keys are ignored, so later versions can add optional keys.

``init.args`` (an init file for a function of an object file, ``isasim run FILE.o --function NAME``)
lists the function's arguments, each a number or the name of a memory region (its address); the
ISA's calling convention puts them in registers (x86_amx: rdi, rsi, rdx, rcx, r8, r9).  A trace
never holds ``args``: ``isasim record`` writes the registers they became.

An init file (``--init``) may also carry ``expect`` and ``producer`` as a trace does (``parse_expect``): ``isasim
run`` then checks the end of the run as ``replay`` checks a trace's and says PASS or FAIL.

``isasim-trace/1`` is still read.  It had no ``arrays``: each ISA names the /1
keys that held its arrays (``Isa.legacy_array_keys``), whose value is one array
(a hex string under that key's name) or an object of arrays by name.  Writing
arrays under a new key is why the version changed: a /1 reader would skip
them without a word, so it must refuse the file instead.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import TraceFormatError

FORMAT = "isasim-trace/2"
READABLE_FORMATS = ("isasim-trace/1", FORMAT)
MAX_REGION = 1 << 26  # 64 MiB: a larger region in a trace is almost certainly a mistake



def _element_types() -> dict:
    """core.numerics.ELEMENT_TYPES, the one table of element types (imported when a region names a type,
    so that reading a trace needs no numpy work up front)."""
    from .numerics import ELEMENT_TYPES

    return ELEMENT_TYPES


@dataclass
class RegionView:
    """How to show a memory region: its name, element type and rows x columns."""

    name: str
    address: int
    element: str
    shape: tuple[int, int]
    show: bool = True  # printed after `isasim run` unless the init file says "show": false


@dataclass
class Init:
    regs: dict[str, int] = field(default_factory=dict)
    memory: list[tuple[int, bytes, bool]] = field(default_factory=list)  # (addr, bytes, writable)
    views: list[RegionView] = field(default_factory=list)
    arrays: dict[str, bytes] = field(default_factory=dict)  # the ISA's state arrays by name (Isa.arrays)
    # a function's arguments in order (an object file's --function; the ISA's calling convention puts
    # them in registers): numbers, a named region already read as its address
    args: list[int] = field(default_factory=list)


@dataclass
class Trace:
    isa: str
    program: list[str]
    config: dict = field(default_factory=dict)
    producer: str = ""
    init: Init = field(default_factory=Init)
    expect: dict = field(default_factory=dict)
    steps: list[dict] | None = None
    source: str = "<trace>"
    format: str = FORMAT  # the version it was read as (an older file is still read; it is written as FORMAT)


# ---- reading --------------------------------------------------------------------


def _fail(where: str, message: str) -> TraceFormatError:
    # ``where`` holds key names from the file: a newline or a 5,000-character key must not
    # break the one-line error or bury the rule
    where = printable(where)
    if len(where) > 2 * BRIEF_CHARS:
        where = where[:BRIEF_CHARS] + "..." + where[-BRIEF_CHARS:]
    return TraceFormatError(f"{where}: {message}")


BRIEF_CHARS = 40  # how much of a rejected value an error message quotes


def printable(text: str) -> str:
    """``text`` with control characters (NUL, ESC, newlines ...) written as escapes, so an error
    message stays one honest line and cannot drive the terminal."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def brief(value: Any) -> str:
    """A rejected value as an error message quotes it: JSON-like, printable, and at most
    BRIEF_CHARS characters (a 5,000-digit number is shown by its length)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # not JSON data (an in-process caller's object)
        text = type(value).__name__
    text = printable(text)
    return text if len(text) <= BRIEF_CHARS else text[:BRIEF_CHARS - 3] + "..."


def clipped(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, its middle left out and said so, for an error message
    that quotes what a user typed (a 5,000-character command stays a readable line)."""
    if len(text) <= limit:
        return text
    keep = max(1, (limit - 30) // 2)
    return f"{text[:keep]}...({len(text) - 2 * keep} characters)...{text[-keep:]}"


# Only ASCII digits: int() would also take full-width and other Unicode digits ("１２"), which no
# assembler or JSON reader treats as a number.
_DECIMAL = re.compile(r"-?[0-9]+", re.ASCII)
_HEXADECIMAL = re.compile(r"-?0x[0-9a-f]+", re.ASCII)
MAX_INTEGER_DIGITS = 200  # far beyond any 64-bit value; keeps int() off pathological strings


def parse_int(value: Any, where: str, *, bits: int | None = 64, signed: bool = False) -> int:
    if isinstance(value, bool):
        raise _fail(where, f"expected an integer, got {brief(value)}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        text = value.strip(" \t\r\n").lower().replace("_", "")
        if len(text) > MAX_INTEGER_DIGITS or not (_DECIMAL.fullmatch(text) or _HEXADECIMAL.fullmatch(text)):
            raise _fail(where, f"{brief(value)} is not an integer (use a number or a \"0x\" string of ASCII digits)")
        number = int(text, 16 if "x" in text else 10)
    else:
        raise _fail(where, f"expected an integer, got {brief(value)}")
    if bits is not None:
        low = -(1 << (bits - 1)) if signed else 0
        high = (1 << bits) - 1
        if not low <= number <= high:
            raise _fail(where, f"{brief(value)} does not fit in {bits} bits")
    return number


def parse_hex(value: Any, where: str) -> bytes:
    if not isinstance(value, str):
        raise _fail(where, "expected a hex string")
    text = re.sub(r"[ \t\r\n]+", "", value)  # ASCII spacing only, as for integers
    if len(text) % 2:
        raise _fail(where, "hex string has an odd number of digits")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise _fail(where, "not a hex string") from None


def _encode_values(type_name: str, values: Any, where: str) -> bytes:
    from . import numerics  # imported here: trace reading must not need numpy work up front

    if not isinstance(values, list):
        raise _fail(where, "values must be a list")
    out = bytearray()
    element = numerics.ELEMENT_TYPES[type_name]
    for i, v in enumerate(values):
        at = f"{where}[{i}]"
        if element.format == "int":
            size, signed = element.size, element.signed
            n = parse_int(v, at, bits=size * 8, signed=signed)
            out += (n % (1 << (size * 8))).to_bytes(size, "little")
        else:
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                raise _fail(at, f"expected a number, got {brief(v)}")
            if isinstance(v, str) and (len(v) > MAX_INTEGER_DIGITS or not v.isascii()):
                raise _fail(at, f"{brief(v)} is not a number")
            try:
                x = float(v)
            except ValueError:
                raise _fail(at, f"{brief(v)} is not a number") from None
            except OverflowError:  # an integer such as 10**400: no double holds it
                raise _fail(at, f"{brief(v)} is too large for {type_name}") from None
            if math.isinf(x) and isinstance(v, str) and "inf" not in v.lower():
                # "1e400" reads as infinity; only a string that says so may be infinite
                raise _fail(at, f"{brief(v)} is too large for {type_name} (write \"inf\" for infinity)")
            if type_name == "fp32":
                out += int(numerics.float_to_fp32_bits(x)).to_bytes(4, "little")
            elif type_name == "bf16":
                out += int(numerics.float_to_bf16_bits(x)).to_bytes(2, "little")
            else:
                out += int(numerics.float_to_fp16_bits(x)).to_bytes(2, "little")
    return bytes(out)


def parse_region(entry: Any, where: str) -> tuple[int, bytes, bool]:
    return parse_region_and_view(entry, where)[0]


def parse_region_and_view(entry: Any, where: str) -> tuple[tuple[int, bytes, bool], RegionView | None]:
    """A region and, if it has a "name", how to show it ("type" and "shape" [rows, cols])."""
    if not isinstance(entry, dict):
        raise _fail(where, "a memory region must be an object with addr and hex")
    if "addr" not in entry:
        raise _fail(where, "missing 'addr'")
    address = parse_int(entry["addr"], f"{where}.addr")
    given = [k for k in ("hex", "size", "values") if k in entry]
    if len(given) != 1:
        raise _fail(where, "give exactly one of 'hex', 'size', or 'type' with 'values'")
    if "hex" in entry:
        data = parse_hex(entry["hex"], f"{where}.hex")
    elif "size" in entry:
        size = parse_int(entry["size"], f"{where}.size")
        if size > MAX_REGION:
            raise _fail(f"{where}.size", f"{size} bytes is more than the {MAX_REGION >> 20} MiB limit per region")
        data = bytes(size)
    kind = entry.get("type")
    if (kind is not None or "values" in entry) and (
            not isinstance(kind, str) or kind not in _element_types()):
        raise _fail(f"{where}.type", f"unknown element type {brief(kind)} "
                    f"(known: {', '.join(_element_types())})")
    if "values" in entry:
        data = _encode_values(kind, entry["values"], f"{where}.values")
    if not data:
        raise _fail(where, "region is empty")
    if address + len(data) > 1 << 64:
        raise _fail(where, "region runs past the end of the 64-bit address space")
    readonly = entry.get("readonly", False)
    if not isinstance(readonly, bool):
        raise _fail(f"{where}.readonly", "must be true or false")
    view = None
    if "name" in entry:
        name = entry["name"]
        if not isinstance(name, str) or not name:
            raise _fail(f"{where}.name", "must be a non-empty string")
        element = kind or "uint8"
        size = _element_types()[element].size
        count = len(data) // size
        shape = entry.get("shape", [1, count])
        whole_numbers = isinstance(shape, list) and all(
            isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape)  # True is an int to Python
        if (not whole_numbers or len(shape) != 2
                or shape[0] * shape[1] * size > len(data)):
            raise _fail(f"{where}.shape", f"must be [rows, columns] fitting in {count} {element} elements")
        show = entry.get("show", True)
        if not isinstance(show, bool):
            raise _fail(f"{where}.show", "must be true or false")
        view = RegionView(name, address, element, (shape[0], shape[1]), show)
    return (address, data, not readonly), view


def parse_init(data: Any, where: str = "init") -> Init:
    if data is None:
        return Init()
    if not isinstance(data, dict):
        raise _fail(where, "must be an object with 'regs', 'memory' and 'arrays'")
    regs_in = data.get("regs", {})
    if not isinstance(regs_in, dict):
        raise _fail(f"{where}.regs", "must be an object mapping register names to values")
    regs = {}
    for name, value in regs_in.items():
        regs[str(name).lower()] = parse_int(value, f"{where}.regs.{name}")
    memory_in = data.get("memory", [])
    if not isinstance(memory_in, list):
        raise _fail(f"{where}.memory", "must be a list of regions")
    parsed = [parse_region_and_view(entry, f"{where}.memory[{i}]") for i, entry in enumerate(memory_in)]
    memory = [region for region, _view in parsed]
    views = [view for _region, view in parsed if view is not None]
    ordered = sorted(memory, key=lambda r: r[0])
    for (a, da, _), (b, _db, _) in zip(ordered, ordered[1:]):
        if a + len(da) > b:
            raise _fail(f"{where}.memory", f"regions at {a:#x} and {b:#x} overlap")
    args = parse_args(data.get("args", []), views, f"{where}.args")
    return Init(regs, memory, views, parse_arrays(data.get("arrays", {}), f"{where}.arrays"), args)


def parse_args(data: Any, views: list[RegionView], where: str) -> list[int]:
    """``"args"``: the arguments of the function an object file's --function runs, each a number (a JSON
    number or a "0x"/decimal string; negative numbers are two's complement) or the name of one of the
    init file's memory regions, meaning its address."""
    if not isinstance(data, list):
        raise _fail(where, "must be a list of numbers or region names")
    by_name = {view.name: view.address for view in views}
    out = []
    for i, value in enumerate(data):
        if isinstance(value, str) and value in by_name:
            out.append(by_name[value])
        elif isinstance(value, str) and not (_DECIMAL.fullmatch(value.strip().lower().replace("_", ""))
                                             or _HEXADECIMAL.fullmatch(value.strip().lower().replace("_", ""))):
            known = ", ".join(repr(name) for name in by_name) or "none: give a region a \"name\""
            raise _fail(f"{where}[{i}]", f"{brief(value)} is neither a number nor the name of a memory region "
                        f"(named regions: {known})")
        else:
            negative = (isinstance(value, int) and value < 0) or (isinstance(value, str) and
                                                                  value.strip().startswith("-"))
            out.append(parse_int(value, f"{where}[{i}]", signed=negative) % (1 << 64))
    return out


def parse_arrays(data: Any, where: str) -> dict[str, bytes]:
    """``{"name": "hex"}`` as {name: bytes}; which names exist is the ISA's to check (Isa.arrays)."""
    if not isinstance(data, dict):
        raise _fail(where, "must be an object mapping array names to hex")
    return {str(name).lower(): parse_hex(value, f"{where}.{name}") for name, value in data.items()}


def _legacy_arrays(expect: dict, isa: str) -> dict[str, bytes]:
    """The arrays an isasim-trace/1 file's ``expect`` held under the keys its ISA names."""
    from .errors import ConfigError
    from .isa import get_isa

    try:
        keys = get_isa(isa).legacy_array_keys
    except ConfigError:  # an ISA this version does not know: nothing to translate (replay says so)
        keys = ()
    arrays: dict[str, bytes] = {}
    for key in keys:
        if key not in expect:
            continue
        value = expect[key]
        if isinstance(value, dict):
            arrays.update(parse_arrays(value, f"expect.{key}"))
        else:
            arrays[key] = parse_hex(value, f"expect.{key}")
    return arrays


def parse_trace(data: Any, source: str = "<trace>") -> Trace:
    if not isinstance(data, dict):
        raise TraceFormatError("a trace must be a JSON object", source=source)
    try:
        fmt = data.get("format")
        if fmt not in READABLE_FORMATS:
            raise _fail("format", f"expected \"{FORMAT}\" (or the older \"{READABLE_FORMATS[0]}\"), got {brief(fmt)}")
        isa = data.get("isa")
        if not isinstance(isa, str):
            raise _fail("isa", "missing or not a string")
        program = data.get("program")
        if not isinstance(program, list) or not all(isinstance(line, str) for line in program):
            raise _fail("program", "must be a list of assembly lines (strings)")
        config = data.get("config", {}) or {}
        if not isinstance(config, dict):
            raise _fail("config", "must be an object")
        producer = data.get("producer", "")
        if not isinstance(producer, str):
            raise _fail("producer", "must be a string")
        init = parse_init(data.get("init"))
        if init.args:  # what a replay would not apply: a trace holds the registers the arguments became
            raise _fail("init.args", "a trace gives a function's arguments as the registers they are in "
                        "(init.regs); args belong in an init file for --function")
        checked = parse_expect(data.get("expect"), fmt, isa)
        steps = data.get("steps")
        if steps is not None:
            if not isinstance(steps, list):
                raise _fail("steps", "must be a list of step objects")
            for i, step in enumerate(steps):
                check_step(step, f"steps[{i}]")
    except TraceFormatError as error:
        raise error.located(source)
    return Trace(isa, program, config, producer, init, checked, steps, source, fmt)


def parse_expect(expect: Any, fmt: str = FORMAT, isa: str = "", where: str = "expect") -> dict:
    """A trace's (or an init file's) ``expect``: what the end of the run must be, checked as given
    (``regs``, ``memory`` regions as in ``init``, ``fault``, ``arrays``).  ``fmt``: the file's format, since
    an ``isasim-trace/1`` file held the ISA's arrays under keys of its own (``_legacy_arrays``)."""
    expect = expect or {}
    if not isinstance(expect, dict):
        raise _fail(where, "must be an object")
    checked = {}
    if "regs" in expect:
        if not isinstance(expect["regs"], dict):
            raise _fail(f"{where}.regs", "must be an object")
        checked["regs"] = {str(k).lower(): parse_int(v, f"{where}.regs.{k}") for k, v in expect["regs"].items()}
    if "memory" in expect:
        if not isinstance(expect["memory"], list):
            raise _fail(f"{where}.memory", "must be a list of regions")
        checked["memory"] = [parse_region(e, f"{where}.memory[{i}]")[:2] for i, e in enumerate(expect["memory"])]
    if "fault" in expect:
        fault = expect["fault"]
        if fault is not None:
            if not isinstance(fault, dict) or not isinstance(fault.get("kind"), str):
                raise _fail(f"{where}.fault", "must be null or {\"kind\": KIND, \"index\": N}")
            fault = {"kind": fault["kind"].strip(),
                     "index": parse_int(fault.get("index"), f"{where}.fault.index") if "index" in fault else None}
        checked["fault"] = fault
    if fmt == FORMAT and "arrays" in expect:
        checked["arrays"] = parse_arrays(expect["arrays"], f"{where}.arrays")
    elif fmt != FORMAT and (legacy := _legacy_arrays(expect, isa)):
        checked["arrays"] = legacy
    return checked


_STEP_FAULT = "must be null or {\"kind\": KIND, \"rule\": \"...\"}"


def check_step(step: Any, where: str) -> None:
    """One recorded step must have the shape ``replay.step_json`` writes, so that every
    consumer (replay, run, show) can read it without guarding each key again."""
    if not isinstance(step, dict):
        raise _fail(where, "a step must be an object with index, pc, text, writes and fault")
    if "index" in step:
        parse_int(step["index"], f"{where}.index", bits=None)
    if "pc" in step:
        parse_int(step["pc"], f"{where}.pc")
    if not isinstance(step.get("text", ""), str):
        raise _fail(f"{where}.text", "must be a string (the instruction)")
    writes = step.get("writes", [])
    if not isinstance(writes, list):
        raise _fail(f"{where}.writes", "must be a list of {\"kind\", \"where\", \"old\", \"new\"} objects")
    for j, write in enumerate(writes):
        at = f"{where}.writes[{j}]"
        if not isinstance(write, dict):
            raise _fail(at, "a write must be an object with kind, where, old and new")
        if not isinstance(write.get("kind"), str):
            raise _fail(f"{at}.kind",
                        f"must be a string (the ISA's kind of write: reg, mem, ...), got {brief(write.get('kind'))}")
        if not isinstance(write.get("where"), (str, int)) or isinstance(write.get("where"), bool):
            raise _fail(f"{at}.where", f"must be a string or an address, got {brief(write.get('where'))}")
        for key in ("old", "new"):
            value = write.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))):
                raise _fail(f"{at}.{key}", f"must be a hex string or a number, got {brief(value)}")
    fault = step.get("fault")
    if fault is not None:
        if not isinstance(fault, dict) or not isinstance(fault.get("kind"), str):
            raise _fail(f"{where}.fault", _STEP_FAULT)
        if not isinstance(fault.get("rule", ""), str):
            raise _fail(f"{where}.fault.rule", "must be a string")


def _finite_float(text: str) -> float:
    """JSON reads 1e400 as infinity without a word; a number no double holds is an error instead."""
    number = float(text)
    if math.isinf(number):
        raise TraceFormatError(f"the number {brief(text)} is out of the range of a double")
    return number


def parse_json_text(text: str, source: str) -> Any:
    """JSON text as data, every failure a TraceFormatError naming ``source``."""
    try:
        return json.loads(text, parse_float=_finite_float)
    except json.JSONDecodeError as error:
        raise TraceFormatError(f"not valid JSON ({error.msg})", source=source, line=error.lineno) from None
    except TraceFormatError as error:
        raise error.located(source) from None
    except RecursionError:
        raise TraceFormatError("JSON nested too deeply", source=source) from None
    except ValueError:  # Python's limit on the digits of an integer (4,300 by default)
        raise TraceFormatError("a number in it has too many digits (more than "
                               f"{getattr(sys, 'get_int_max_str_digits', lambda: 4300)()})", source=source) from None


def load_json(path: str | Path) -> Any:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TraceFormatError("no such file", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise TraceFormatError(f"cannot read: {error.__class__.__name__}", source=str(path)) from None
    return parse_json_text(text, str(path))


def read_trace(path: str | Path) -> Trace:
    return parse_trace(load_json(path), source=str(path))


# ---- writing --------------------------------------------------------------------


def hex_int(value: int) -> str:
    return f"{value:#x}"


def region_json(address: int, data: bytes, writable: bool = True, view: RegionView | None = None) -> dict:
    entry = {"addr": hex_int(address), "hex": data.hex()}
    if not writable:
        entry["readonly"] = True
    if view is not None:
        entry.update({"name": view.name, "type": view.element, "shape": list(view.shape)})
        if not view.show:
            entry["show"] = False
    return entry


def _view_at(init: Init, address: int) -> RegionView | None:
    return next((v for v in init.views if v.address == address), None)


def trace_json(trace: Trace) -> dict:
    out: dict[str, Any] = {"format": FORMAT, "isa": trace.isa, "config": trace.config,
                           "producer": trace.producer, "program": trace.program,
                           "init": {"regs": {k: hex_int(v) for k, v in trace.init.regs.items()},
                                    "memory": [region_json(*r, _view_at(trace.init, r[0]))
                                               for r in trace.init.memory]}}
    if trace.init.arrays:
        out["init"]["arrays"] = {name: data.hex() for name, data in trace.init.arrays.items()}
    expect: dict[str, Any] = {}
    for key, value in trace.expect.items():
        if key == "regs":
            expect["regs"] = {k: hex_int(v) for k, v in value.items()}
        elif key == "memory":
            expect["memory"] = [region_json(a, d) for a, d in value]
        elif key == "arrays":
            expect["arrays"] = {k: v.hex() for k, v in value.items()}
        else:
            expect[key] = value
    out["expect"] = expect
    if trace.steps is not None:
        out["steps"] = trace.steps
    return out


def write_trace(trace: Trace, path: str | Path, *, force: bool = False) -> None:
    """Write ``trace`` as an isasim-trace/2 file; an existing file is replaced only with ``force``."""
    from .output import write_output

    write_output(path, json.dumps(trace_json(trace), indent=1) + "\n", force=force)


def expectations(final: Any, init: Init, *, every_register: bool = False) -> dict:
    """What a trace of a finished run expects, in trace terms: the fault (or none), the registers the run
    changed or the init set (``every_register``: all of them, as a fuzzer's reproducing trace checks, so a
    wrong write to a register the program never names is caught too), every array the state holds, and
    every writable init region.  ``isasim record`` and the fuzzer's reproducing traces both write this, so
    their traces check the same things."""
    fault = final.fault
    expect: dict[str, Any] = {"fault": None if fault is None else {"kind": fault.kind, "index": fault.index}}
    expect["regs"] = {k: v for k, v in final.observed.get("regs", {}).items()
                      if every_register or v != init.regs.get(k, 0) or k in init.regs}
    if final.observed.get("arrays"):
        expect["arrays"] = dict(final.observed["arrays"])
    expect["memory"] = [(address, final.read_memory(address, len(data)))
                        for address, data, writable in init.memory if writable]
    return expect
