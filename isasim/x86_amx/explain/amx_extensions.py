"""``isasim explain`` of the AMX extensions (forms/amx_extensions.py), SPEC ONLY, NO SILICON SEEN.

The extension TMULs (AMX-COMPLEX, AMX-FP8, AMX-TF32) get the TMUL set-up (C, A, B generated, loaded, the
instruction stepped) and an account of one element C[m][n] in their own element formats, recomputed from the
ISE's loop and checked against the machine.  The AMX-AVX512 forms (EVEX, zmm destination) get their own
explanation: the facts, the EVEX bytes, operands, operation, faults, and a worked row.
"""

from __future__ import annotations

import numpy as np

from ...core import numerics
from ...core.explain import Cell, Check, Code, Encoding, Explanation, Paragraph, Section, Table, fault_blocks, setup_blocks
from ...core.explain.model import BitField, EncodingUnit
from ..config import CPU_MODELS
from ..faults import INVALID_OPCODE
from ..forms import amx_extensions
from ..numerics import fp8 as fp8_numerics
from ..numerics import tmul_add32_reference, tmul_fma32_reference
from ..operands import tile_number
from ..state import BYTES_PER_ROW, MAX_ROWS
from .common import (
    A_ADDR, B_ADDR, C_ADDR, CFG_ADDR, ISA_NAME, REGION, command, default_cpu, facts, fp32_text, free_address,
    half_text, run_after_setup, scratch, short_fp32,
)
from .settings import Settings
from .tilecfg import tilecfg_image

SPEC_NOTE = ("Spec only, no silicon seen: this form follows the pseudocode Intel publishes for it (sources and "
             "choices: docs/x86_amx/amx-extensions.md); no host that runs it has been compared with the simulator.")


def _kind(form) -> str:
    return {"AMX-COMPLEX": "complex", "AMX-FP8": "fp8", "AMX-TF32": "tf32"}[form.feature]


def _fp8_formats(form) -> tuple[str, str]:
    types = dict(zip(form.operand_roles, form.element_types))
    return types["A"], types["B"]


def _nearest_fp8(values, fmt: str) -> np.ndarray:
    table = fp8_numerics.FORMATS[fmt]
    codes = [c for c in range(256) if table[c][0] == "finite"]
    exact = np.array([table[c][1] / 65536 for c in codes])
    return np.array([codes[int(np.argmin(np.abs(exact - v)))] for v in values], dtype=np.uint8)


def _data(form, rng, width: int, role: str) -> bytes:
    kind = _kind(form)
    if role == "C":
        values = np.round(rng.uniform(-8, 8, width // 4), 3)
        return np.array([numerics.float_to_fp32_bits(float(v)) for v in values], dtype=np.uint32).tobytes()
    if kind == "complex":
        values = np.round(rng.uniform(-2, 2, width // 2), 2)
        return np.array([numerics.float_to_fp16_bits(float(v)) for v in values], dtype=np.uint16).tobytes()
    if kind == "fp8":
        a_fmt, b_fmt = _fp8_formats(form)
        return _nearest_fp8(rng.uniform(-3, 3, width), a_fmt if role == "A" else b_fmt).tobytes()
    values = rng.uniform(-4, 4, width // 4)  # fp32 with every fraction bit: TF32 drops 13 of them
    return np.array([numerics.float_to_fp32_bits(float(v)) for v in values], dtype=np.uint32).tobytes()


def _fp8_text(code: int, fmt: str) -> str:
    kind, value, bits = fp8_numerics.FORMATS[fmt][code]
    return f"{short_fp32(bits)} ({code:#04x})" if kind == "finite" or kind == "inf" else f"nan ({code:#04x})"


def tmul_example(ins, form, settings: Settings, cpu: str, encoding):
    """The TMUL set-up (generated data), the tile shapes and the account of C[m][n] checked against the machine."""
    if len(ins.operands) != 3:
        return [Paragraph("These bytes do not decode to operands, so there is nothing to run.")], None
    tiles = {role: tile_number(o.name) for role, o in zip(form.operand_roles, ins.operands)}
    tc, ta, tb = tiles["C"], tiles["A"], tiles["B"]
    rng = np.random.default_rng(settings.seed)
    memory, regs = [], {}
    cfg_reg, a_reg, b_reg, c_reg, a_stride, b_stride, c_stride = scratch(set(), 7)
    M, K, N = (settings.shape + (4, 4, 4))[:3] if settings.shape else (4, 4, 4)
    cfg_at = free_address(memory, 64, CFG_ADDR)
    memory.append((cfg_at, tilecfg_image({tc: (M, 4 * N), ta: (M, 4 * K), tb: (K, 4 * N)}), True))
    regs[cfg_reg] = cfg_at
    setup = [f"ldtilecfg [{cfg_reg}]"]
    for role, tile, reg, sreg, address, (rows, width) in (
            ("C", tc, c_reg, c_stride, C_ADDR, (M, 4 * N)), ("A", ta, a_reg, a_stride, A_ADDR, (M, 4 * K)),
            ("B", tb, b_reg, b_stride, B_ADDR, (K, 4 * N))):
        address = free_address(memory, REGION, address)
        image = bytearray(REGION)
        for r in range(min(rows, MAX_ROWS)):
            row = _data(form, rng, min(width, BYTES_PER_ROW), role)
            image[64 * r: 64 * r + len(row)] = row
        memory.append((address, bytes(image), True))
        regs[reg], regs[sreg] = address, 64
        setup.append(f"tileloadd tmm{tile}, [{reg}+{sreg}*1]")
    run = run_after_setup(ins, setup, cpu=cpu, regs=regs, memory=memory, max_steps=settings.max_steps)
    blocks = setup_blocks(run, f"A, B and C generated with --seed {settings.seed}")
    blocks.insert(0, Paragraph(SPEC_NOTE))
    if run.fault:
        return blocks + fault_blocks(run), None
    cfg = run.machine.state.tilecfg
    M, K, N = cfg.rows[tc], cfg.colsb[ta] // 4, cfg.colsb[tc] // 4
    m, n = settings.element
    m = min(1, M - 1) if m is None else m
    n = min(2, N - 1) if n is None else n
    before = run.before["tiles"]
    A, B = np.ascontiguousarray(before[ta, :M, :4 * K]), np.ascontiguousarray(before[tb, :K, :4 * N])
    c_before = int(np.ascontiguousarray(before[tc, :M, :4 * N]).view(np.uint32)[m, n])
    machine = int(np.ascontiguousarray(run.machine.state.settled_tiles()[tc, :M, :4 * N]).view(np.uint32)[m, n])
    blocks += element_account(form, tiles, A, B, c_before, machine, m, n, (M, K, N))
    return blocks, None


def element_account(form, tiles: dict, A, B, c_before: int, machine: int, m: int, n: int, shape: tuple) -> list:
    """The account of C[m][n] from A (M x 4K bytes) and B (K x 4N bytes) before the step and C[m][n] before,
    ending with the check against ``machine``, C[m][n] after.  ``isasim explain`` and the trace viewer's
    workings both call this."""
    M, K, N = shape
    tc, ta, tb = tiles["C"], tiles["A"], tiles["B"]
    blocks = [Paragraph(f"The worked element: C[{m}][{n}] = tmm{tc}.dword[{n}] of row {m}, from A's row {m} "
                        f"(tmm{ta}) and dword {n} of each of B's {K} rows (tmm{tb}); M={M}, K={K}, N={N}.")]
    account, explained = {"complex": _complex_account, "fp8": _fp8_account, "tf32": _tf32_account}[_kind(form)](
        form, A, B, c_before, m, n, K)
    blocks += account
    blocks.append(Check(f"C[{m}][{n}] (fp32)", fp32_text(explained), fp32_text(machine)))
    return blocks


def _complex_account(form, A, B, c_before, m, n, K):
    a_h, b_h = A.view(np.uint16), B.view(np.uint16)
    imaginary = form.mnemonic == "tcmmimfp16ps"
    lanes = {"E": 0, "O": 0}
    rows = []
    for k in range(K):
        are, aim = int(a_h[m, 2 * k]), int(a_h[m, 2 * k + 1])
        bre, bim = int(b_h[k, 2 * n]), int(b_h[k, 2 * n + 1])
        steps = (("E", are, bim, "a.re × b.im"), ("O", aim, bre, "a.im × b.re")) if imaginary else \
            (("E", are, bre, "a.re × b.re"), ("O", aim ^ 0x8000, bim, "(-a.im) × b.im"))
        for lane, a_bits, b_bits, what in steps:
            notes: list[str] = []
            old = lanes[lane]
            lanes[lane] = tmul_fma32_reference(old, int(numerics.fp16_to_fp32(a_bits)), int(numerics.fp16_to_fp32(b_bits)), notes)
            rows.append([Cell(str(k), f"k{k}"), Cell(lane, "even" if lane == "E" else "odd"), what,
                         half_text(a_bits, "fp16"), half_text(b_bits, "fp16"), short_fp32(old), "\n".join(notes),
                         fp32_text(lanes[lane])])
    table = Table(["k", "lane", "product", "a", "b", "lane before", "FMA32(lane, a, b) (numerics reference)",
                   "lane after"], rows, title="E and O start at +0; each step is FMA32(lane, a, b), in increasing k")
    t = tmul_add32_reference(lanes["E"], lanes["O"])
    result = tmul_add32_reference(c_before, t)
    finish = Table(["step", "operands", "result"], [
        ["T := ADD32(E, O)", f"{short_fp32(lanes['E'])} + {short_fp32(lanes['O'])}", fp32_text(t)],
        [f"C[{m}][{n}] := ADD32(C, T)", f"{short_fp32(c_before)} + {short_fp32(t)}", Cell(fp32_text(result), "c")]])
    return [table, finish], result


def _fp8_account(form, A, B, c_before, m, n, K):
    a_fmt, b_fmt = _fp8_formats(form)
    a_table, b_table = fp8_numerics.FORMATS[a_fmt], fp8_numerics.FORMATS[b_fmt]
    temp = 0
    rows = []
    for k in range(K):
        a4 = [int(A[m, 4 * k + i]) for i in range(4)]
        b4 = [int(B[k, 4 * n + i]) for i in range(4)]
        old = temp
        temp = fp8_numerics._step(temp, [(a_table[p], b_table[q]) for p, q in zip(a4, b4)])
        rows.append([Cell(str(k), f"k{k}"), " ".join(_fp8_text(p, a_fmt) for p in a4),
                     " ".join(_fp8_text(q, b_fmt) for q in b4), short_fp32(old), fp32_text(temp)])
    table = Table(["k", f"A[{m}].{a_fmt}[4k..4k+3]", f"B[k].{b_fmt}[4·{n}..4·{n}+3]", "T before",
                   "T := ROUND32(T + Σ of the 4 exact products)"], rows,
                  title=f"T starts at +0; one rounding per k (FP8_GROUP_ROUNDING = {fp8_numerics.FP8_GROUP_ROUNDING!r})")
    result = tmul_add32_reference(c_before, temp)
    finish = Table(["step", "operands", "result"], [
        [f"C[{m}][{n}] := ADD32(C, T)", f"{short_fp32(c_before)} + {short_fp32(temp)}", Cell(fp32_text(result), "c")]])
    return [table, finish], result


def _tf32_account(form, A, B, c_before, m, n, K):
    a_w, b_w = A.view(np.uint32), B.view(np.uint32)
    lane = 0
    rows = []
    for k in range(K):
        a, b = int(a_w[m, k]), int(b_w[k, n])
        ta, tb = (int(x) for x in fp8_numerics.tf32_inputs(np.array([a, b], dtype=np.uint32)))
        notes: list[str] = []
        old = lane
        lane = tmul_fma32_reference(old, ta, tb, notes)
        rows.append([Cell(str(k), f"k{k}"), f"{short_fp32(a)} → {short_fp32(ta)}", f"{short_fp32(b)} → {short_fp32(tb)}",
                     short_fp32(old), "\n".join(notes), fp32_text(lane)])
    table = Table(["k", f"A[{m}].fp32[k] → tf32", f"B[k].fp32[{n}] → tf32", "T before",
                   "FMA32(T, a, b) (numerics reference)", "T after"], rows,
                  title="T starts at +0; inputs: sNaN quieted, fraction bits 12:0 cleared")
    result = tmul_add32_reference(lane, c_before)
    finish = Table(["step", "operands", "result"], [
        [f"C[{m}][{n}] := ADD32(T, C)", f"{short_fp32(lane)} + {short_fp32(c_before)}", Cell(fp32_text(result), "c")]])
    return [table, finish], result


# ---- AMX-AVX512 -------------------------------------------------------------------------------------------


def _unit(code: bytes, offset: int, name: str, fields: list[tuple[str, int, str]]) -> EncodingUnit:
    """One byte of the encoding with its fields (name, width, meaning), most significant first."""
    byte, first, out = code[offset], 8, []
    for field_name, width, meaning in fields:
        first -= width
        out.append(BitField(first, width, field_name, byte >> first & ((1 << width) - 1), meaning))
    return EncodingUnit(offset, code[offset:offset + 1], name, out)


def _evex_encoding(ins, form) -> Encoding:
    code = ins.encoding
    units = [
        _unit(code, 0, "EVEX", [("62", 8, "four-byte EVEX escape")]),
        _unit(code, 1, "EVEX P0", [("R̄", 1, "bit 3 of zmm1 (stored inverted)"), ("X̄", 1, "must be 1"),
                                   ("B̄", 1, "must be 1 (tmm0-7)"), ("R̄'", 1, "bit 4 of zmm1 (stored inverted)"),
                                   ("0", 1, "must be 0"), ("mmm", 3, f"opcode map {form.opcode.text.split('.')[3]}")]),
        _unit(code, 2, "EVEX P1", [("W", 1, "W0"), ("v̄v̄v̄v̄", 4, "1111: unused" if form.opcode.imm8 else
                                                               "the r32 operand (stored inverted)"),
                                   ("1", 1, "must be 1"), ("pp", 2, f"implied prefix {form.opcode.text.split('.')[2]}")]),
        _unit(code, 3, "EVEX P2", [("z", 1, "0"), ("L'L", 2, "10: 512 bits"), ("b", 1, "0"), ("V̄'", 1, "1"),
                                   ("aaa", 3, "000: no write mask")]),
        _unit(code, 4, "opcode", [("opcode", 8, f"{code[4]:02X}")]),
        _unit(code, 5, "ModRM", [("mod", 2, "11: register operands"), ("reg", 3, "zmm1 bits 2:0"),
                                 ("r/m", 3, "tmm2")]),
    ]
    if form.opcode.imm8 and len(code) > 6:
        units.append(_unit(code, 6, "imm8", [("imm8", 8, "row_index = imm8[5:0], row_chunk = imm8[7:6] × 64")]))
    return Encoding(units)


def explain_evex(ins, form, settings: Settings) -> Explanation:
    cpu = default_cpu(form.feature, settings.cpu)
    having = [name for name, model in CPU_MODELS.items() if form.feature in model.features]
    form_facts = [("ISE opcode", form.opcode.text), ("CPUID feature", f"{form.feature} ({', '.join(having)})"),
                  ("evidence", amx_extensions.SPEC_ONLY)]
    expl = Explanation(ISA_NAME, form.syntax, ins.text, ins.encoding, form.summary, facts(ins, cpu, form_facts))
    expl.command = command(ins, settings)
    expl.sections.append(Section("Encoding", [Paragraph(f"ISE opcode column: {form.opcode.text}"), _evex_encoding(ins, form)]))
    rows = [[name, enc.split(" (")[0], enc.partition(" (")[2].rstrip(")"), str(op)]
            for name, enc, op in zip(form.operand_names, form.operand_encoding, ins.operands)]
    expl.sections.append(Section("Operands", [Table(["operand", "encoded in", "access", "here"], rows)]))
    expl.sections.append(Section("Operation (the semantics the simulator executes)", [Code(form.doc)]))
    lacking = [name for name, model in CPU_MODELS.items() if form.feature not in model.features]
    faults = [[Cell(INVALID_OPCODE, "bad"), f"the CPU lacks {form.feature} (here: {', '.join(lacking)})"]]
    faults += [[Cell(kind, "bad"), rule] for kind, rule in form.faults]
    expl.sections.append(Section("Faults", [Table(["fault", "when"], faults)]))
    expl.sections.append(Section("Worked example", _row_example(ins, form, settings, cpu)))
    return expl


def _row_example(ins, form, settings: Settings, cpu: str) -> list:
    zmm, tmm, row = ins.operands
    t = tile_number(tmm.name)
    rng = np.random.default_rng(settings.seed)
    memory, regs = [], {}
    avoid = {row.name.replace("e", "r", 1) if row.name.startswith("e") else row.name.removesuffix("d")} \
        if not form.opcode.imm8 else set()
    cfg_reg, data_reg, stride_reg = scratch(avoid, 3)
    cfg_at = free_address(memory, 64, CFG_ADDR)
    memory.append((cfg_at, tilecfg_image({t: (16, 64)}), True))
    if form.mnemonic == "tcvtrowd2ps":
        data = rng.integers(-(1 << 30), 1 << 30, 256, dtype=np.int64).astype(np.int32).tobytes()
    else:
        data = np.array([numerics.float_to_fp32_bits(float(v)) for v in rng.uniform(-100, 100, 256)], dtype=np.uint32).tobytes()
    address = free_address(memory, REGION, A_ADDR)
    memory.append((address, data, True))
    regs.update({cfg_reg: cfg_at, data_reg: address, stride_reg: 64})
    index = 3
    if not form.opcode.imm8:
        regs[avoid.pop()] = index
    else:
        index = ins.operands[2].value & 0x3F
    run = run_after_setup(ins, [f"ldtilecfg [{cfg_reg}]", f"tileloadd {tmm.name}, [{data_reg}+{stride_reg}*1]"],
                          cpu=cpu, regs=regs, memory=memory, max_steps=settings.max_steps)
    blocks = [Paragraph(SPEC_NOTE)] + setup_blocks(run, f"tmm{t} 16 × 64 bytes, generated with --seed {settings.seed}")
    if run.fault:
        return blocks + fault_blocks(run)
    result = run.machine.state.read_vector(int(zmm.name[3:])).to_bytes(64, "little")
    source = bytes(run.before["tiles"][t, index % 16]) if index < 16 else bytes(64)
    words = np.frombuffer(source, dtype=np.uint32)
    out = np.frombuffer(result, dtype=np.uint32)
    rows = [[str(i), f"{int(words[i]):#010x}", f"{int(out[i]):#010x}"] for i in range(16)]
    blocks.append(Table(["dword i", f"tmm{t}.row[{index}].dword[i]", f"{zmm.name}.dword[i]"], rows,
                        title=f"row_index = {index}, row_chunk = 0 (the whole 64-byte row)"))
    return blocks


# ---- the reference pages and the page on what the extensions are ---------------------------------------------


def reference_pages() -> list:
    """One page per extension form, grouped by CPUID feature; the group names the evidence."""
    from ...core.explain import ReferencePage

    pages = []
    for form in amx_extensions.FORMS:
        group = f"{form.feature} ({amx_extensions.SPEC_ONLY})"
        if isinstance(form, amx_extensions.AmxEvexForm):
            row = "3" if form.opcode.imm8 else "eax"
            pages.append(ReferencePage(form.slug, group, f"{form.mnemonic} zmm1, tmm2, {row}", form.syntax, form.summary))
        elif "sibmem" in form.operand_kinds:
            pages.append(ReferencePage(form.mnemonic, group, f"{form.mnemonic} tmm1, [rdi+r8*1+0x40]", form.syntax,
                                       form.summary))
        else:
            pages.append(ReferencePage(form.mnemonic, group, f"{form.mnemonic} tmm0, tmm1, tmm2", form.syntax,
                                       form.summary))
    return pages


EXTENSIONS_PAGE = """\
# The AMX extensions: what isasim simulates, from what, and what it does not

Generated by `isasim docs`; the text lives in isasim/x86_amx/explain/amx_extensions.py.

Intel publishes the AMX extensions beyond AMX-TILE, AMX-INT8, AMX-BF16 and AMX-FP16 in its *Architecture
Instruction Set Extensions and Future Features Programming Reference* (the ISE, document 319433).  isasim
declares each form from the ISE's opcode row and runs its Operation pseudocode with the project's
exact-arithmetic rules.  **Spec only, no silicon seen**: no host with these features has run isasim's tests;
the silicon backend probes each extension by executing one of its instructions (AMX-COMPLEX: Granite
Rapids-D, CPUID family 6 model 174) and runs the extension where a host has it, so the first such host turns
"spec only" into a comparison (tests/x86_amx/semantics/test_amx_extensions.py has AMX-COMPLEX's).

Sources, as read for this work: the opcode rows are checked byte for byte against LLVM 22's MC tests and zig's
clang; the Operation loops are those Intel publishes with the intrinsics (as LLVM 22's clang headers
amxcomplexintrin.h, amxfp8intrin.h, amxtf32intrin.h and amxavx512intrin.h reproduce them), and the fp32
rounding statements ("FP32 FMA with DAZ=FTZ=1, RNE", fp16 denormals kept) are the SDM's for TDPFP16PS and
TDPBF16PS.  Where those texts leave a choice, or differ in structure, isasim names it below.

| extension | forms | CPU model | evidence |
| --- | --- | --- | --- |
| AMX-COMPLEX | TCMMIMFP16PS, TCMMRLFP16PS | granite-rapids-d, diamond-rapids | ISE pseudocode; encodings = LLVM 22 MC tests and zig's clang |
| AMX-FP8 | TDPBF8PS, TDPBHF8PS, TDPHBF8PS, TDPHF8PS | diamond-rapids | ISE pseudocode; encodings = LLVM 22 and zig's clang |
| AMX-TF32 | TMMULTF32PS | diamond-rapids | ISE pseudocode (up to rev. 061, see below); LLVM 22 and zig's clang |
| AMX-MOVRS | TILELOADDRS, TILELOADDRST1 | diamond-rapids | ISE pseudocode; LLVM 22 and zig's clang (VEX forms; the APX EVEX forms with r16-r31 are not simulated) |
| AMX-AVX512 | TCVTROWD2PS, TCVTROWPS2BF16H/L, TCVTROWPS2PHH/L, TILEMOVROW (r32 and imm8) | diamond-rapids | ISE pseudocode; LLVM 22 and zig's clang |
| AMX-TILE | LDTILECFG/STTILECFG [rip+disp32] | every model | GNU as 2.40, LLVM 22 |

The diamond-rapids model's features are those zig's clang (LLVM 22) defines for `-march=diamondrapids`:
AMX-TILE, -INT8, -BF16, -FP16, -COMPLEX, -FP8, -TF32, -MOVRS, -AVX512.

## Decisions

* **AMX-TRANSPOSE is not simulated.**  Intel removed all its instructions (T2RPNTLVW*, TTRANSPOSED, TTDPBF16PS,
  TTDPFP16PS, TTCMMIMFP16PS, TTCMMRLFP16PS, TCONJTCMMIMFP16PS, TCONJTFP16, TTMMULTF32PS and their MOVRS forms)
  from the ISE in revision 059 (September 2025); LLVM removed them (llvm-project pull requests 165556 and
  171906) and LLVM 22 does not know them.  No CPU model lists the feature.
* **AMX-TF32** was removed from the ISE in revision 062 (LLVM pull request 207673, July 2026, after LLVM 22).
  isasim keeps TMMULTF32PS as revisions up to 061 specify it (LLVM 22 and zig's clang still encode it) on the
  diamond-rapids model; it is the first form to drop if Intel's silicon lacks it.
* **Numerics the texts leave open** are named constants with a documented default:
  `COMPLEX_LANES = "pair"` (semantics/amx_extensions.py: TCMMIMFP16PS/TCMMRLFP16PS keep two fresh fp32
  lanes per output and add their sum to C, the TDPFP16PS structure; `"sequential"` accumulates every product
  into C in turn, as the intrinsics' text reads);
  `FP8_GROUP_ROUNDING = "group"` (numerics/fp8.py: the four FP8 products of one k and the fp32 accumulator are
  summed exactly and rounded once, RNE with FTZ after rounding; `"sequential"` rounds after each product);
  `FP8_NAN_RULE = "first"` (the first NaN of a0, b0, ..., a3, b3, then the accumulator, made quiet; inf × 0 and
  inf - inf give the default NaN FFC00000H); `CONJUGATE_SIGN_BIT` (semantics/amx_extensions.py: TCMMRLFP16PS
  negates the fp16 a.im before widening, so a NaN there keeps the flipped sign); `ROW_BEYOND_ROWS = "ud"`
  (TCVTROW*/TILEMOVROW with row_index >= tsrc.rows raise #UD, as every other tile access does; the ISE's loop
  does not check).
* The other numerics are the ISE's statements: FP8 (BF8 = E5M2 with infinities and NaNs, HF8 = E4M3 with the
  one NaN S.1111.111 and no infinity) and fp16 decode exactly, denormals kept; the fp32 accumulators use FMA32
  and ADD32 with DAZ, FTZ and RNE (as TDPBF16PS); TF32 inputs have a signalling NaN quieted and fraction bits
  12:0 cleared; TCVTROWD2PS converts with RNE, TCVTROWPS2BF16* with the SDM's convert_fp32_to_bfloat16,
  TCVTROWPS2PH* as VCVTPS2PH with RNE.  MXCSR is neither read nor written.

## How it is checked

* tests/x86_amx/forms/test_amx_extensions.py: every line of LLVM 22's MC tests for these extensions gives
  LLVM's bytes (97 lines; the 8 APX lines are refused in one line), every disassembler line decodes to LLVM's
  instruction (48), zig's clang gives the same bytes for random operands of every form, GNU as agrees on the
  RIP-relative LDTILECFG/STTILECFG.
* tests/x86_amx/semantics/test_amx_extensions.py: the CPUID-feature #UD on every model without the feature;
  consistency tests (an independent exact-rational transcription of the ISE loops; it reads the same
  specification, so it checks the implementation, not the reading); worked examples.
"""
