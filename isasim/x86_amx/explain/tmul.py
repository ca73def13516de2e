"""The TMUL forms (TDPB[SU][SU]D, TDPBF16PS, TDPFP16PS): one output element C[m][n] worked through.

The set-up loads C, A and B (generated, or the init file's regions named by role) into
the tiles the operands name, by their declared roles; the account recomputes C[m][n]
from the tile bytes the machine held before the step (for the float forms through the
numerics reference, whose notes are the per-step rounding account) and checks it
against the machine's element after.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import numerics
from ...core.explain import (
    Arrow, Cell, Check, ExplainError, Grid, Paragraph, Table, fault_blocks, setup_blocks,
)
from .. import numerics as tmul_numerics
from ..operands import tile_number
from ..state import BYTES_PER_ROW, MAX_ROWS
from .common import (
    A_ADDR, B_ADDR, C_ADDR, CFG_ADDR, REGION, example_figure, fp32_text, free_address, half_text, init_regions,
    run_after_setup, scratch, short_fp32, signed32,
)
from .settings import Settings
from .tilecfg import tilecfg_image



def _tdp_kind(form):
    """("int", (A signed, B signed)) or ("bf16" / "fp16", None), from the form's declared element types."""
    types = dict(zip(form.operand_roles, form.element_types))
    if types["C"] == "int32":
        return "int", (types["A"] == "int8", types["B"] == "int8")
    return types["A"], None


def _tdp_data(kind: str, rng, cols_bytes: int, role: str) -> bytes:
    """One row of generated example data: full-range bytes, or small floats with some mantissa bits."""
    if role == "C":
        if kind == "int":
            return rng.integers(-1000, 1000, cols_bytes // 4, dtype=np.int32).tobytes()
        values = np.round(rng.uniform(-8, 8, cols_bytes // 4), 3)
        return np.array([numerics.float_to_fp32_bits(float(v)) for v in values], dtype=np.uint32).tobytes()
    if kind == "int":
        return rng.integers(0, 256, cols_bytes, dtype=np.uint8).tobytes()
    convert = numerics.float_to_bf16_bits if kind == "bf16" else numerics.float_to_fp16_bits
    values = np.round(rng.uniform(-2, 2, cols_bytes // 2), 2)
    return np.array([convert(float(v)) for v in values], dtype=np.uint16).tobytes()


@dataclass
class WorkedElement:
    """C[m][n] of one TMUL step: the tiles by role, their bytes before and C after, and the shape."""

    ins: object  # the Instruction
    encoding: object  # its Encoding, drawn on top of the figure
    tiles: dict  # role ("C", "A", "B") -> tile number
    A: np.ndarray  # M x 4K bytes of A before the step
    B: np.ndarray  # K x 4N bytes of B before
    C_before: np.ndarray  # M x N dwords
    C_after: np.ndarray  # M x N dwords, as the machine computed them
    m: int
    n: int
    M: int
    K: int
    N: int


def example(ins, form, settings: Settings, cpu: str, encoding):
    """The set-up, the tile shapes, and the account of C[m][n] checked against the machine."""
    kind, signs = _tdp_kind(form)
    init, views = init_regions(settings)
    if len(ins.operands) != 3:
        return [Paragraph("These bytes do not decode to operands, so there is nothing to run.")], None
    tiles = {role: tile_number(o.name) for role, o in zip(form.operand_roles, ins.operands)}
    tc, ta, tb = tiles["C"], tiles["A"], tiles["B"]
    rng = np.random.default_rng(settings.seed)
    memory = list(init.memory) if init else []
    regs = dict(init.regs) if init else {}
    cfg_reg, a_reg, b_reg, c_reg, a_stride, b_stride, c_stride = scratch(set(regs), 7)
    M, K, N = (settings.shape + (4, 4, 4))[:3] if settings.shape else (4, 4, 4)
    sources = {}  # role -> (address, row stride, (rows, columns))
    if init is not None and ("a" in views or "b" in views):
        for role in ("A", "B", "C"):
            view = views.get(role.lower())
            if view is not None:
                etype = numerics.ELEMENT_TYPES.get(view.element)
                sources[role] = (view.address, view.shape[1] * (etype.size if etype else 1), view.shape)
        if "A" not in sources or "B" not in sources:
            raise ExplainError(f"{settings.init_source}: the init file needs named regions 'A' and 'B' (and "
                               "optionally 'C' and 'tilecfg') to explain a TDP instruction")
        if "tilecfg" in views:
            cfg_at = views["tilecfg"].address
        else:
            (_, a_row, (a_rows, _)), (_, b_row, (b_rows, _)) = sources["A"], sources["B"]
            c_shape = (sources["C"][2][0], sources["C"][1]) if "C" in sources else (a_rows, b_row)
            cfg_at = free_address(memory, 64, CFG_ADDR)
            memory.append((cfg_at, tilecfg_image({tc: (c_shape[0], min(c_shape[1], 64)),
                                                  ta: (a_rows, min(a_row, 64)), tb: (b_rows, min(b_row, 64))}), True))
        data_note = f"A, B{', C' if 'C' in sources else ''} from {settings.init_source}"
    else:
        cfg_at = free_address(memory, 64, CFG_ADDR)
        memory.append((cfg_at, tilecfg_image({tc: (M, 4 * N), ta: (M, 4 * K), tb: (K, 4 * N)}), True))
        for role, address, (rows, width) in (("C", C_ADDR, (M, 4 * N)), ("A", A_ADDR, (M, 4 * K)),
                                             ("B", B_ADDR, (K, 4 * N))):
            address = free_address(memory, REGION, address)
            image = bytearray(REGION)
            for r in range(min(rows, MAX_ROWS)):
                row = _tdp_data(kind, rng, min(width, BYTES_PER_ROW), role)
                image[64 * r: 64 * r + len(row)] = row
            memory.append((address, bytes(image), True))
            sources[role] = (address, 64, (rows, width))
        data_note = f"A, B and C generated with --seed {settings.seed}"
    regs[cfg_reg] = cfg_at
    setup = [f"ldtilecfg [{cfg_reg}]"]
    for role, tile, reg, sreg in (("C", tc, c_reg, c_stride), ("A", ta, a_reg, a_stride), ("B", tb, b_reg, b_stride)):
        if role in sources:
            regs[reg], regs[sreg] = sources[role][0], sources[role][1]
            setup.append(f"tileloadd tmm{tile}, [{reg}+{sreg}*1]")
        else:
            setup.append(f"tilezero tmm{tile}")
    run = run_after_setup(ins, setup, cpu=cpu, regs=regs, memory=memory, max_steps=settings.max_steps)
    blocks = setup_blocks(run, data_note)
    cfg = run.before.get("tilecfg") or run.machine.state.tilecfg
    shape_rows = [[f"tmm{t}", role, str(cfg.rows[t]), str(cfg.colsb[t]), meaning]
                  for t, role, meaning in ((tc, "C", "M rows × N dwords"), (ta, "A", "M rows × K dwords"),
                                           (tb, "B", "K rows × N dwords"))]
    blocks.append(Table(["tile", "role", "rows", "colsb", "shape rule"], shape_rows,
                        title="Tile shapes (TILECFG as the machine holds it)"))
    if run.fault:
        return blocks + fault_blocks(run), example_figure(ins, encoding, [], [])
    M, K, N = cfg.rows[tc], cfg.colsb[ta] // 4, cfg.colsb[tc] // 4
    m, n = settings.element
    m = min(1, M - 1) if m is None else m
    n = min(2, N - 1) if n is None else n
    if not 0 <= m < M:
        raise ExplainError(f"--m {m} is outside C's rows (M = {M}: 0..{M - 1})")
    if not 0 <= n < N:
        raise ExplainError(f"--n {n} is outside C's dword columns (N = {N}: 0..{N - 1})")
    tiles_before = run.before["tiles"]
    element = WorkedElement(
        ins, encoding, tiles,
        A=np.ascontiguousarray(tiles_before[ta, :M, :4 * K]), B=np.ascontiguousarray(tiles_before[tb, :K, :4 * N]),
        C_before=np.ascontiguousarray(tiles_before[tc, :M, :4 * N]).view(np.uint32),
        C_after=np.ascontiguousarray(run.machine.state.settled_tiles()[tc, :M, :4 * N]).view(np.uint32),
        m=m, n=n, M=M, K=K, N=N)
    account, explained = element_account(element, kind, signs)
    blocks += account
    figure = _int_figure(element, signs, explained) if kind == "int" else _float_figure(element, kind, explained)
    blocks += [g for row in figure.rows for g in row if isinstance(g, Grid)]
    return blocks, figure


def element_account(e: WorkedElement, kind: str, signs: tuple[bool, bool] | None):
    """The account of C[m][n] (what the element is, its sums and roundings) ending with the check of the
    recomputed value against the machine's C after the step: (blocks, the recomputed value).  ``kind`` and
    ``signs`` as _tdp_kind gives them.  ``isasim explain`` and the trace viewer's workings both call this."""
    m, n, tc, ta, tb = e.m, e.n, e.tiles["C"], e.tiles["A"], e.tiles["B"]
    machine_value = int(e.C_after[m, n])
    blocks = [Paragraph(f"The worked element: C[{m}][{n}] = tmm{tc}.dword[{n}] of row {m}, from A's row {m} "
                        f"(tmm{ta}) and dword {n} of each of B's {e.K} rows (tmm{tb}); M={e.M}, K={e.K}, N={e.N}.")]
    if kind == "int":
        account, explained = _int_element(e, signs)
        blocks += account
        blocks.append(Check(f"C[{m}][{n}] (int32)", str(explained), str(signed32(machine_value))))
    else:
        account, explained = _float_element(e, kind)
        blocks += account
        blocks.append(Check(f"C[{m}][{n}] (fp32)", fp32_text(explained), fp32_text(machine_value)))
    return blocks, explained


def _int_element(e: WorkedElement, signs: tuple[bool, bool]):
    """DPBD: C[m][n] += Σ over k, i of ext(A[m].byte[4k+i]) × ext(B[k].byte[4n+i]), wrapping mod 2^32."""
    a_signed, b_signed = signs
    m, n, K = e.m, e.n, e.K
    a_bytes, b_bytes = e.A.view(np.int8 if a_signed else np.uint8), e.B.view(np.int8 if b_signed else np.uint8)
    a_vals, b_vals = a_bytes.astype(np.int64), b_bytes.astype(np.int64)
    ext_a, ext_b = ("sext" if a_signed else "zext"), ("sext" if b_signed else "zext")
    rows = []
    total = 0
    for k in range(K):
        a4 = [int(a_vals[m, 4 * k + i]) for i in range(4)]
        b4 = [int(b_vals[k, 4 * n + i]) for i in range(4)]
        products = [x * y for x, y in zip(a4, b4)]
        total += sum(products)
        rows.append([Cell(str(k), f"k{k}"), f"{4 * k}..{4 * k + 3}", " ".join(map(str, a4)),
                     f"B[{k}] {4 * n}..{4 * n + 3}", " ".join(map(str, b4)), " ".join(map(str, products)),
                     str(sum(products)), str(total)])
    c_before = signed32(int(e.C_before[m, n]))
    wide = c_before + total
    explained = signed32(wide)
    table = Table(["k", f"A[{m}] bytes", f"{ext_a}(A)", "B bytes", f"{ext_b}(B)", "products", "dword sum",
                   "running Σ"], rows, title=f"C[{m}][{n}] += Σ over k, i of {ext_a}(A[{m}].byte[4k+i]) × "
                                           f"{ext_b}(B[k].byte[4·{n}+i])")
    wrap = "" if wide == explained else f"; wraps mod 2^32 to {explained}"
    account = [table, Paragraph(f"C[{m}][{n}] before = {c_before}; {c_before} + {total} = {wide}{wrap}.")]
    return account, explained


def _int_figure(e: WorkedElement, signs: tuple[bool, bool], explained: int):
    a_signed, b_signed = signs
    a_bytes, b_bytes = e.A.view(np.int8 if a_signed else np.uint8), e.B.view(np.int8 if b_signed else np.uint8)
    return _tdp_figure(e, a_values=a_bytes, b_values=b_bytes,
                       c_text=[[str(signed32(int(v))) for v in row] for row in e.C_after], per_dword=4,
                       a_type="int8" if a_signed else "uint8", b_type="int8" if b_signed else "uint8",
                       c_type="int32", result=f"C[{e.m}][{e.n}] = {explained}")


def _float_element(e: WorkedElement, kind: str):
    """TDPBF16PS / TDPFP16PS: the even and odd fp32 lanes, each a chain of FMA32 in increasing k, then
    T = ADD32(E, O) and C = ADD32(C, T), every step through the numerics reference."""
    m, n, K = e.m, e.n, e.K
    widen = numerics.bf16_to_fp32 if kind == "bf16" else numerics.fp16_to_fp32
    a_h = e.A.view(np.uint16)  # M x 2K halves
    b_h = e.B.view(np.uint16)  # K x 2N halves
    lanes = {"E": 0, "O": 0}  # +0.0
    rows = []
    for k in range(K):
        for lane, offset in (("E", 0), ("O", 1)):
            a_bits = int(a_h[m, 2 * k + offset])
            b_bits = int(b_h[k, 2 * n + offset])
            notes: list[str] = []
            before = lanes[lane]
            after = tmul_numerics.tmul_fma32_reference(before, int(widen(a_bits)), int(widen(b_bits)), notes)
            lanes[lane] = after
            rows.append([Cell(str(k), f"k{k}"), Cell(lane, "even" if lane == "E" else "odd"),
                         f"{2 * k + offset} / {2 * n + offset}", half_text(a_bits, kind), half_text(b_bits, kind),
                         short_fp32(before), "\n".join(notes), fp32_text(after)])
    table = Table(["k", "lane", "i / j", f"a = A[{m}].{kind}[i]", f"b = B[k].{kind}[j]", "lane before",
                   "FMA32(lane, a, b): account (numerics reference)", "lane after"],
                  rows, title="E and O start at +0; each step is FMA32(lane, a, b), in increasing k")
    notes_t: list[str] = []
    T = tmul_numerics.tmul_add32_reference(lanes["E"], lanes["O"], notes_t)
    notes_c: list[str] = []
    c_before = int(e.C_before[m, n])
    result = tmul_numerics.tmul_add32_reference(c_before, T, notes_c)
    finish = Table(["step", "operands", "account (numerics reference)", "result"], [
        ["T := ADD32(E, O)", f"{short_fp32(lanes['E'])} + {short_fp32(lanes['O'])}", "\n".join(notes_t),
         fp32_text(T)],
        [f"C[{m}][{n}] := ADD32(C, T)", f"{short_fp32(c_before)} + {short_fp32(T)}", "\n".join(notes_c),
         Cell(fp32_text(result), "c")],
    ])
    return [table, finish], result


def _float_figure(e: WorkedElement, kind: str, result: int):
    return _tdp_figure(e, a_values=e.A.view(np.uint16), b_values=e.B.view(np.uint16),
                       c_text=[[f"{float(np.uint32(v).view(np.float32)):.6g}" for v in row] for row in e.C_after],
                       per_dword=2, a_type=kind, b_type=kind, c_type="fp32",
                       result=f"C[{e.m}][{e.n}] = {short_fp32(result)}")


def _tdp_figure(e: WorkedElement, *, a_values, b_values, c_text, per_dword: int, a_type: str, b_type: str,
                c_type: str, result: str):
    """Tile shapes, the data flow of C[m][n], and B's K-packing (``per_dword`` elements of A and B per dword)."""
    m, n, M, K, N = e.m, e.n, e.M, e.K, e.N
    per = per_dword
    is_float = per == 2

    def value(x, kind):
        if kind in ("bf16", "fp16"):  # compact in the picture; the tables give exact values
            v = numerics.bf16_bits_to_float(int(x)) if kind == "bf16" else numerics.fp16_bits_to_float(int(x))
            return f"{v:.4g}"
        return str(int(x))

    def role_of(k, j):
        if is_float:
            return "even" if j % 2 == 0 else "odd"
        return f"k{k}"

    A, B = a_values, b_values
    tc, ta, tb = e.tiles["C"], e.tiles["A"], e.tiles["B"]
    a_cells = [[Cell(value(A[r, c], a_type), role_of(c // per, c) if r == m else None) for c in range(K * per)]
               for r in range(M)]
    b_cells = [[Cell(value(B[k, c], b_type), role_of(k, c) if c // per == n else None) for c in range(N * per)]
               for k in range(K)]
    c_cells = [[Cell(c_text[r][c], "c" if (r, c) == (m, n) else None) for c in range(N)] for r in range(M)]
    a_grid = Grid(f"A = tmm{ta}", a_cells, None, [str(c) for c in range(K * per)], group=per,
                  caption=f"{M} rows × {K * per} {a_type} (K = {K} dwords)")
    b_grid = Grid(f"B = tmm{tb}", b_cells, None, [str(c) for c in range(N * per)], group=per,
                  caption=f"{K} rows × {N * per} {b_type}: row k holds K-slice k")
    c_grid = Grid(f"C = tmm{tc} after", c_cells, None, [str(c) for c in range(N)],
                  caption=f"{M} × {N} {c_type}; {result}")
    # B as the logical K x N matrix before packing: element (k*per + i, n) sits in B[k].(4n + i)
    logical = [[Cell(value(B[kk // per, nn * per + kk % per], b_type),
                     role_of(kk // per, kk % per) if nn == n else None,
                     f"b[{kk}][{nn}] is stored in B[{kk // per}].{'byte' if not is_float else b_type}"
                     f"[{nn * per + kk % per}]") for nn in range(N)] for kk in range(K * per)]
    logical_grid = Grid("B before packing", logical, None, [str(c) for c in range(N)],
                        caption=f"{K * per} × {N}: b[k'][n] goes to B[k'/{per}], element {per}n + k'%{per}")
    arrows = [Arrow(a_grid.title, (m, K * per - 1), c_grid.title, (m, 0), "a", f"row {m}", "right", "left"),
              Arrow(b_grid.title, (min(m, K - 1), 0), c_grid.title, (m, N - 1), "b", f"dword {n}",
                    "left", "right")]
    if is_float:
        legend = [("even", f"even lane E: {a_type} 2k of each dword (bits 15:0)"),
                  ("odd", f"odd lane O: {a_type} 2k+1 (bits 31:16)"), ("c", f"C[{m}][{n}]")]
    else:
        legend = [(f"k{k}", f"k = {k}: A[{m}].dword[{k}] meets B[{k}].dword[{n}]") for k in range(min(K, 8))]
        legend.append(("c", f"C[{m}][{n}]"))
    caption = (f"C[{m}][{n}] adds the products of A's row {m} with dword {n} of every row of B; each dword of B "
               f"packs {per} consecutive K values of one column n.")
    return example_figure(e.ins, e.encoding, [[a_grid, c_grid, b_grid], [logical_grid]], arrows, legend=legend,
                          caption=caption)
