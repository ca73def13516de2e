"""The worked example's check line for the AdvSIMD forms of issue 28 (semantics/advsimd.py): each result worked
out here another way, with numpy's whole-vector operations on the V registers' bytes before the step (the
semantics go element by element), beside what the machine holds after it: the destination V
register with the rest of its Z register zeroed, or the general register UMOV/SMOV wrote."""

from __future__ import annotations

import numpy as np

from ...core.explain import Check
from ..state import X_NAMES
from .before_state import register_value

_TYPES = {8: "i1", 16: "<i2", 32: "<i4", 64: "<i8"}


def _bytes(run, n: int) -> np.ndarray:
    return np.frombuffer(bytes(run.before["z"][n][:16]), dtype=np.uint8)


def _lanes(data: np.ndarray, esize: int, signed: bool) -> np.ndarray:
    kind = _TYPES[esize] if signed else _TYPES[esize].replace("i", "u")
    return np.array([int(v) for v in data.view(kind)], dtype=object)  # exact: Python integers


def _to_bytes(values, esize: int) -> bytes:
    mask = (1 << esize) - 1
    return b"".join((int(v) & mask).to_bytes(esize // 8, "little") for v in values)


def _vector_check(run, d: int, data: bytes) -> Check:
    state = run.machine.state
    expected = data + bytes(state.svlb - len(data))
    return Check(f"z{d} (V{d}, the rest of the vector zeroed)", expected.hex(), bytes(state.z[d]).hex())


def advsimd_blocks(ins, run) -> list:
    return [_check(ins, run)]


def _check(ins, run) -> Check:  # noqa: C901  (one branch per family, as the semantics module has them)
    form, ops = ins.form, ins.operands
    name, kw = form.execute.func.__name__ if hasattr(form.execute, "func") else form.execute.__name__, \
        getattr(form.execute, "keywords", {})
    esize, datasize = kw.get("esize", 8), kw.get("datasize", 128)
    count = datasize // esize
    lanes = lambda n, signed=False: _lanes(_bytes(run, n)[:datasize // 8], esize, signed)  # noqa: E731
    if name in ("add_sub", "multiply", "max_min", "add_pairwise", "compare", "compare_zero", "permute"):
        d, n = ops[0], ops[1]
        signed = name == "max_min" and not kw["unsigned"] or name in ("compare", "compare_zero") and \
            kw["cmp"] in ("gt", "ge", "lt", "le")
        a = lanes(n, signed)
        b = lanes(ops[2], signed) if name != "compare_zero" else np.array([0] * count, dtype=object)
        if name == "add_sub":
            r = a - b if kw["sub_op"] else a + b
        elif name == "multiply":
            r = a * b
            if kw["accumulate"]:
                r = lanes(d) - r if kw["sub_op"] else lanes(d) + r
        elif name == "max_min":
            if kw.get("pair"):
                both = np.concatenate([a, b])
                a, b = both[0::2], both[1::2]
            r = np.minimum(a, b) if kw["minimum"] else np.maximum(a, b)
        elif name == "add_pairwise":
            both = np.concatenate([a, b])
            r = both[0::2] + both[1::2]
        elif name == "permute":
            part, half = kw["part"], count // 2
            if kw["op"] == "zip":
                r = np.stack([a[part * half:][:half], b[part * half:][:half]], axis=1).reshape(-1)
            elif kw["op"] == "uzp":
                r = np.concatenate([a, b])[part::2]
            else:
                r = np.stack([a[part::2], b[part::2]], axis=1).reshape(-1)
        else:
            tests = {"gt": np.greater, "ge": np.greater_equal, "hi": np.greater, "hs": np.greater_equal,
                     "eq": np.equal, "lt": np.less, "le": np.less_equal}
            hit = (a & b) != 0 if kw["cmp"] == "tst" else tests[kw["cmp"]](a, b)
            r = np.where(hit, -1, 0)
        return _vector_check(run, d, _to_bytes(r, esize))
    if name == "logical":
        d, n, m = ops
        size = datasize // 8
        a, b, c = (_bytes(run, r)[:size] for r in (n, m, d))
        r = {"and": a & b, "bic": a & ~b, "orr": a | b, "orn": a | ~b, "eor": a ^ b, "bsl": (a & c) | (b & ~c),
             "bit": (a & b) | (c & ~b), "bif": (c & b) | (a & ~b)}[kw["op"]]
        return _vector_check(run, d, r.astype(np.uint8).tobytes())
    if name in ("add_sub_long", "multiply_long", "shift_left_long"):
        d, n = ops[0], ops[1]
        signed, part = not kw["unsigned"], kw["part"]
        half = lambda r: _lanes(_bytes(run, r)[8 * part:8 * part + 8], esize, signed)  # noqa: E731
        if name == "shift_left_long":
            return _vector_check(run, d, _to_bytes(half(n) * (1 << ops[2]), 2 * esize))
        b = half(ops[2])
        if name == "multiply_long":
            r = half(n) * b
            if kw["accumulate"]:
                acc = _lanes(_bytes(run, d), 2 * esize, False)
                r = acc - r if kw["sub_op"] else acc + r
        else:
            a = _lanes(_bytes(run, n), 2 * esize, signed) if kw["wide"] else half(n)
            r = a - b if kw["sub_op"] else a + b
        return _vector_check(run, d, _to_bytes(r, 2 * esize))
    if name == "extract_narrow":
        d, n = ops
        wide = _lanes(_bytes(run, n), 2 * esize, kw["saturate"] and not kw["unsigned"])
        if kw["saturate"]:
            low, high = (0, 2 ** esize - 1) if kw["unsigned"] else (-2 ** (esize - 1), 2 ** (esize - 1) - 1)
            wide = np.clip(wide, low, high)
        narrow = _to_bytes(wide, esize)
        return _vector_check(run, d, bytes(_bytes(run, d)[:8]) + narrow if kw["part"] else narrow)
    if name == "unary":
        d, n = ops
        a = lanes(n, True)
        r = {"neg": -a, "abs": np.abs(a), "not": ~a}[kw["op"]]
        return _vector_check(run, d, _to_bytes(r, esize))
    if name in ("reduce_add", "reduce_max_min"):
        d, n = ops
        a = lanes(n, not kw["unsigned"])
        if name == "reduce_add":
            return _vector_check(run, d, _to_bytes([int(a.sum())], 2 * esize if kw["long"] else esize))
        return _vector_check(run, d, _to_bytes([a.min() if kw["minimum"] else a.max()], esize))
    if name == "add_pair_scalar":
        d, n = ops
        a = _lanes(_bytes(run, n), 64, False)
        return _vector_check(run, d, _to_bytes([int(a[0]) + int(a[1])], 64))
    if name == "dup_general":
        d, n = ops
        return _vector_check(run, d, _to_bytes([register_value(run, n, 64, False)] * count, esize))
    if name == "dup_element":
        d, (n, index) = ops
        element = int(_lanes(_bytes(run, n), esize, False)[index])
        return _vector_check(run, d, _to_bytes([element] * count, esize))
    if name in ("ins_general", "ins_element"):
        (d, index), source = ops
        values = [int(v) for v in _lanes(_bytes(run, d), esize, False)]
        values[index] = (register_value(run, source, 64, False) if name == "ins_general"
                         else int(_lanes(_bytes(run, source[0]), esize, False)[source[1]]))
        return _vector_check(run, d, _to_bytes(values, esize))
    if name == "move_to_general":
        d, (n, index) = ops
        value = int(_lanes(_bytes(run, n), esize, kw["signed"])[index]) & ((1 << datasize) - 1)
        shown = X_NAMES[d] if d < 31 else "xzr"
        return Check(shown, f"{value:#x}" if d < 31 else "0x0", f"{run.machine.state.x[d]:#x}" if d < 31 else "0x0")
    if name == "move_immediate":
        d, imm = ops
        op = kw["op"]
        if isinstance(imm, tuple):
            value, amount = imm
            element = value * 2 ** amount + (2 ** amount - 1 if op.startswith("msl") else 0)
        else:
            element = imm
        pattern = int.from_bytes(_to_bytes([element] * count, esize), "little")
        current = int.from_bytes(bytes(_bytes(run, d)[:datasize // 8]), "little")
        full = 2 ** datasize - 1
        result = {"movi": pattern, "mslmovi": pattern, "mvni": full - pattern, "mslmvni": full - pattern,
                  "orr": current | pattern, "bic": current & (full - pattern)}[op]
        return _vector_check(run, d, result.to_bytes(datasize // 8, "little"))
    if name == "table_lookup":
        d, first, m = ops
        table = np.concatenate([_bytes(run, (first + r) % 32) for r in range(kw["regs"])])
        indices = _bytes(run, m)[:datasize // 8]
        fallback = np.zeros(datasize // 8, dtype=np.uint8) if kw["is_tbl"] else _bytes(run, d)[:datasize // 8]
        result = np.where(indices < len(table), table[np.minimum(indices, len(table) - 1)], fallback)
        return _vector_check(run, d, result.astype(np.uint8).tobytes())
    if name == "extract":
        d, n, m, position = ops
        size = datasize // 8
        both = np.concatenate([_bytes(run, n)[:size], _bytes(run, m)[:size]])
        return _vector_check(run, d, both[position:position + size].tobytes())
    # shift_immediate
    d, n, shift = ops
    a = lanes(n, kw["op"] == "sshr")
    r = a * (1 << shift) if kw["op"] == "shl" else a // (1 << shift)
    return _vector_check(run, d, _to_bytes(r, esize))
