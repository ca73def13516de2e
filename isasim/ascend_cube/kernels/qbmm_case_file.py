"""The ``isasim-qbmm/1`` case file: one quantised batch matmul, its arrays and what C must be.

A case is JSON; array paths are relative to the file::

    {"format": "isasim-qbmm/1", "chip": "950", "m": 100, "n": 70, "k": 300,
     "batch_a": [1,1,2,3], "batch_b": [1,1,1,3], "batch_c": [1,1,2,3],
     "a_type": "int8", "b_type": "int8", "c_type": "bfloat16", "bias_type": "int32",
     "x1_quant_mode": "none", "x2_quant_mode": "perchannel", "scale_b_type": "uint64",
     "a": "a.npy", "b": "b.npy", "bias": "bias.npy", "scale_b": "scale_b.npy",
     "expect": {"c": "c.npy", "compare": "exact"}}

Shapes: a = batch_a + [m, k] ([k, m] with transpose_a), b = batch_b + [k, n] ([n, k] with
transpose_b; with b_format "NZ" the fractal NZ layout of that matrix, see :func:`nz_shape`),
bias [n] (batch_c + [n] with bias_three_dim), scale_b [n] (perchannel) or [1] (pertensor),
scale_a [1], c and c_in batch_c + [m, n].  Leading batch dimensions of 1 may be left out of an
array's shape.  8- and 16-bit floating types are stored as their bit patterns (uint8 /
uint16); int8, int32 and float32 as themselves; uint64 / int64 scales as the packed quant
words; in either byte order (a .npy header records which, and a big-endian array is read as
the same numbers).  Everything is checked before anything runs: a bad case is one :class:`CaseError` line
naming the file and the field.
"""

from __future__ import annotations

import math
from pathlib import Path
from tokenize import TokenError

import numpy as np

from isasim.core.errors import IsasimError
from isasim.core.trace import brief, load_json

from ..operands import shown
from .qbmm_case import STORAGE, CaseError, QbmmCase
from .qbmm_rules import check_combination
from .qbmm_scale import scale_values
from .qbmm_size import MAX_GM_BYTES, gm_image_bytes

FORMAT = "isasim-qbmm/1"
INPUT_TYPES = ("int8", "hifloat8", "float8_e4m3fn", "float8_e5m2")
OUTPUT_TYPES = ("int32", "int8", "float16", "bfloat16", "float32")
BIAS_TYPES = ("int32", "float32")
X1_QUANT_MODES = ("none", "pertensor")
X2_QUANT_MODES = ("none", "pertensor", "perchannel")
SCALE_A_TYPES = ("float32",)
SCALE_B_TYPES = ("uint64", "int64", "float32", "bfloat16")
B_FORMATS = ("ND", "NZ")

ARRAY_KEYS = ("a", "b", "bias", "scale_a", "scale_b", "c_in")
_KEYS = {"format", "chip", "m", "n", "k", "batch_a", "batch_b", "batch_c", "a_type", "b_type", "c_type",
         "bias_type", "bias_three_dim", "x1_quant_mode", "x2_quant_mode", "scale_a_type", "scale_b_type",
         "transpose_a", "transpose_b", "atomic_add", "b_format", "tiling", "options", "expect", "source",
         "description", *ARRAY_KEYS}


def load_case(path: str | Path) -> QbmmCase:
    """The case in ``path``, its arrays read and every field checked; a CaseError names what is wrong."""
    path = Path(path)
    source = str(path)
    if path.is_dir():
        raise CaseError("is a directory, not a case file", source=source)
    try:
        data = load_json(path)
    except IsasimError as error:  # one line naming the file: missing, unreadable, not JSON
        raise CaseError(error.message, source=source, line=error.line) from None
    case = parse_case(data, source)
    image = gm_image_bytes(case)  # from the case's numbers, before any array is read
    if image > MAX_GM_BYTES:
        raise CaseError(f"the kernel's GM image (A, B, bias, scales, C) is {image:,} bytes, more than the limit of "
                        f"{MAX_GM_BYTES:,} (MAX_GM_BYTES, {MAX_GM_BYTES // 2**20} MiB)", source=source)
    base = path.parent
    for key in ARRAY_KEYS:
        if case.needs(key):
            case.arrays[key] = _read_array(base, data[key], key, case, source)
    expect = data.get("expect")
    if expect is not None:
        case.expect = _read_array(base, expect["c"], "expect.c", case, source, shape_key="c")
    check_arrays(case)
    return case


def parse_case(data, source: str = "<case>") -> QbmmCase:
    """The case's fields from its JSON object (arrays not read), each checked."""
    def fail(message: str):
        raise CaseError(message, source=source)

    if not isinstance(data, dict):
        fail(f"a qbmm case is a JSON object, not {type(data).__name__}")
    if data.get("format") != FORMAT:
        fail(f"format must be {FORMAT!r}" + (f", not {brief(data.get('format'))}" if "format" in data else ""))
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        fail(f"unknown key '{shown(unknown[0])}' (a qbmm case takes {', '.join(sorted(_KEYS))})")

    def integer(key, lo=1):
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < lo:
            fail(f"{key} must be an integer >= {lo}" + ("" if key not in data else f", not {brief(value)}"))
        return value

    def choice(key, choices, default=None):
        value = data.get(key, default)
        if value not in choices:
            fail(f"{key} must be one of {', '.join(map(str, choices))}, not {brief(value)}")
        return value

    def flag(key):
        value = data.get(key, False)
        if value in (0, 1) and not isinstance(value, bool):
            value = bool(value)  # the seed's uint32 flags (biasThreeDim: 1)
        if not isinstance(value, bool):
            fail(f"{key} must be true or false, not {brief(value)}")
        return value

    def batch(key):
        value = data.get(key, [1, 1, 1, 1])
        if (not isinstance(value, list) or len(value) != 4
                or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value)):
            fail(f"{key} must be 4 integers >= 1 (the seed's batch{key[-1].upper()}1..4), not {brief(value)}")
        return tuple(value)

    chip = data.get("chip", "950")
    if chip not in ("950", "910B"):
        fail(f"chip must be 950, not {brief(chip)}")
    case = QbmmCase(
        m=integer("m"), n=integer("n"), k=integer("k"),
        a_type=choice("a_type", INPUT_TYPES, "int8"), b_type=choice("b_type", INPUT_TYPES, "int8"),
        c_type=choice("c_type", OUTPUT_TYPES), batch_a=batch("batch_a"), batch_b=batch("batch_b"),
        batch_c=batch("batch_c"), bias_type=choice("bias_type", (*BIAS_TYPES, None)),
        bias_three_dim=flag("bias_three_dim"), x1_quant_mode=choice("x1_quant_mode", X1_QUANT_MODES, "none"),
        x2_quant_mode=choice("x2_quant_mode", X2_QUANT_MODES, "none"),
        scale_a_type=choice("scale_a_type", SCALE_A_TYPES, "float32"),
        scale_b_type=choice("scale_b_type", SCALE_B_TYPES, "uint64"),
        transpose_a=flag("transpose_a"), transpose_b=flag("transpose_b"), atomic_add=flag("atomic_add"),
        b_format=choice("b_format", B_FORMATS, "ND"), chip=chip, source=source)
    tiling = data.get("tiling")
    if tiling is not None and not isinstance(tiling, dict):
        fail("tiling is an object of QBMMTiling fields (baseM, baseN, baseK, kAL1, kBL1, nBufferNum, dbL0C)")
    case.tiling = tiling
    options = data.get("options", {})
    if not isinstance(options, dict):
        fail("options is an object of NAME: VALUE (docs/ascend_cube/options.md)")
    case.options = options
    for key in ARRAY_KEYS:
        if case.needs(key) and not isinstance(data.get(key), str):
            fail(f"{key} must name its .npy file (the case needs it: {_why_needed(case, key)})")
        if not case.needs(key) and key in data:
            fail(f"{key} is given but the case does not use it ({_why_unused(case, key)})")
    expect = data.get("expect")
    if expect is not None:
        if not isinstance(expect, dict) or not isinstance(expect.get("c"), str):
            fail('expect must be {"c": "FILE.npy", "compare": "exact" or {"rtol": R, "atol": A}}')
        case.compare = _compare_rule(expect.get("compare", "exact"), fail)
    check_combination(case)
    check_batches(case)
    return case


def _why_needed(case: QbmmCase, key: str) -> str:
    return {"a": "A", "b": "B", "bias": f"bias_type {case.bias_type}", "scale_a": "x1_quant_mode pertensor",
            "scale_b": f"x2_quant_mode {case.x2_quant_mode}", "c_in": "atomic_add adds C to it"}[key]


def _why_unused(case: QbmmCase, key: str) -> str:
    return {"bias": "no bias_type", "scale_a": f"x1_quant_mode {case.x1_quant_mode}",
            "scale_b": "x2_quant_mode none", "c_in": "atomic_add is false: C is written, not added to"}[key]


_LARGEST_FLOAT = float(np.finfo(np.float64).max)  # a tolerance is a float: a larger integer has none


def _compare_rule(rule, fail):
    if rule == "exact":
        return rule
    if isinstance(rule, dict) and set(rule) <= {"rtol", "atol", "ptol", "rule", "note"} and {"rtol", "atol"} & set(rule):
        for key in ("rtol", "atol", "ptol"):
            value = rule.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= _LARGEST_FLOAT:
                fail(f"expect.compare.{key} must be a finite number >= 0, not {brief(value)}")
        return {"rtol": float(rule.get("rtol", 0)), "atol": float(rule.get("atol", 0)),
                "ptol": float(rule.get("ptol", 0))}
    fail(f'expect.compare must be "exact" or {{"rtol": R, "atol": A[, "ptol": P]}}, not {brief(rule)}')


def check_batches(case: QbmmCase) -> None:
    """Each batch dimension of A and B is 1 (broadcast) or C's."""
    for name, dims in (("batch_a", case.batch_a), ("batch_b", case.batch_b)):
        for i, (got, c) in enumerate(zip(dims, case.batch_c)):
            if got not in (1, c):
                raise CaseError(f"{name}[{i}] = {got} does not broadcast to batch_c[{i}] = {c} (it must be 1 or {c})",
                                source=case.source)


def _read_array(base: Path, name, key: str, case: QbmmCase, source: str, shape_key: str | None = None) -> np.ndarray:
    """The array file, its .npy header checked against what the case needs before its data is read."""
    where = f"{key} ({name})"
    path = base / name
    case.files.append(str(path))
    key = shape_key or key
    try:
        with open(path, "rb") as file:
            shape, fortran, dtype = _npy_header(file, where, source)
            _check_header(shape, dtype, key, case, where, source)
            file.seek(0)  # read_array reads the header again, then the data
            array = np.lib.format.read_array(file, allow_pickle=False)
    except FileNotFoundError:
        raise CaseError(f"{where}: no such file", source=source) from None
    except IsADirectoryError:
        raise CaseError(f"{where}: a directory, not a .npy file", source=source) from None
    except (ValueError, OSError, EOFError) as error:
        first_line = (str(error).split("\n") + [""])[0] or type(error).__name__  # numpy's, cut to one line
        raise CaseError(f"{where}: not a .npy array ({first_line[:120]})", source=source) from None
    want = np.dtype(STORAGE[case.type_of(key)])
    if array.dtype != want:  # the same type in the other byte order: .npy records which, so convert
        array = array.astype(want)
    return np.ascontiguousarray(array.reshape(case.shape_of(key)))


def _npy_header(file, where: str, source: str):
    """(shape, fortran_order, dtype) from a .npy file's header."""
    if file.read(2) == b"PK":
        raise CaseError(f"{where}: an .npz archive, not one .npy array", source=source)
    file.seek(0)
    version = np.lib.format.read_magic(file)
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    if version in readers:
        try:
            return readers[version](file)
        except (SyntaxError, TokenError, TypeError, RecursionError) as error:  # numpy parses the header as
            # Python text: a damaged one fails as text does (ValueError, its own complaint, is caught above)
            raise CaseError(f"{where}: not a .npy array (its header does not read: {type(error).__name__})",
                            source=source) from None
    raise CaseError(f"{where}: .npy format version {version[0]}.{version[1]} (isasim reads 1.0 and 2.0, which "
                    f"numpy writes for every plain array)", source=source)


def _check_header(shape: tuple, dtype: np.dtype, key: str, case: QbmmCase, where: str, source: str) -> None:
    """The array's type (its bits, in either byte order) and shape are the case's, and it is no larger than the
    kernel's GM image may be, all before its data is read."""
    kind = case.type_of(key)
    want = np.dtype(STORAGE[kind])
    if dtype.kind != want.kind or dtype.itemsize != want.itemsize or dtype.fields is not None:
        how = "its bit patterns" if kind in ("hifloat8", "float8_e4m3fn", "float8_e5m2", "float16", "bfloat16") \
            else "itself"
        raise CaseError(f"{where}: {kind} is stored as {want.name} ({how}), not {_type_name(dtype)}", source=source)
    size = math.prod(shape)
    if size * want.itemsize > MAX_GM_BYTES:
        raise CaseError(f"{where}: {size:,} elements ({size * want.itemsize:,} bytes) is more than the kernel's GM may "
                        f"hold ({MAX_GM_BYTES:,} bytes, MAX_GM_BYTES)", source=source)
    needed = case.shape_of(key)
    padded = (1,) * (len(needed) - len(shape)) + tuple(shape) if len(shape) <= len(needed) else tuple(shape)
    if padded != needed:
        raise CaseError(f"{where}: shape {list(shape)}, the case needs {list(needed)}" + _shape_hint(key, case),
                        source=source)


def _type_name(dtype: np.dtype) -> str:
    """A dtype as a message names it: its name, and its byte order where that is not the machine's."""
    order = {">": "big-endian ", "<": "little-endian "}.get(dtype.byteorder, "") if not dtype.isnative else ""
    return f"{order}{dtype.name}"


def _shape_hint(key: str, case: QbmmCase) -> str:
    return {"a": f" (batch_a + [{'k, m' if case.transpose_a else 'm, k'}])",
            "b": " (batch_b + " + ("the NZ fractals (ceil(cols/C0), ceil(rows/16), 16, C0) of "
                                    if case.b_format == "NZ" else "")
                 + f"[{'n, k' if case.transpose_b else 'k, n'}])",
            "bias": " (bias_three_dim: batch_c + [n])" if case.bias_three_dim else " ([n])",
            "scale_b": " ([n] per channel)" if case.x2_quant_mode == "perchannel" else " ([1] per tensor)",
            "c": " (batch_c + [m, n])", "c_in": " (batch_c + [m, n])"}.get(key, "")


def check_arrays(case: QbmmCase) -> None:
    """Values the arrays' dtypes allow but the kernel does not: non-finite float scales."""
    for key in ("scale_a", "scale_b"):
        if key not in case.arrays:
            continue
        kind = case.type_of(key)
        if kind in ("float32", "bfloat16"):
            values = scale_values(case.arrays[key], kind)
            if not np.all(np.isfinite(values)):
                raise CaseError(f"{key}: a scale is inf or NaN (the Fixpipe's M1 must be finite)", source=case.source)
