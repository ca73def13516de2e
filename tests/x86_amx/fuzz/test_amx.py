"""The numpy AMX case drawer (fuzz_amx.AmxCaseDrawer): reproducible per seed, reaching every instruction and
fault kind the hypothesis strategy amx_cases reaches, and every case one the simulator runs to its end or to
an architectural fault.  (Whether the simulator's results are right is the silicon fuzz tests' question,
tests/x86_amx/fuzz/test_fuzz_vs_silicon.py, on hosts with AMX.)"""

from __future__ import annotations

from collections import Counter

import numpy as np

from isasim.core.faults import Fault
from isasim.core.fuzz.drawing import draw_cases
from isasim.core.machine import Machine
from isasim.x86_amx.fuzz import amx as fuzz_amx
from isasim.x86_amx.kernels import tile_config

# What amx_cases writes (its code's every branch), by the assembled instruction's mnemonic
EXPECTED_FORMS = {"ldtilecfg", "sttilecfg", "tilezero", "tileloadd", "tileloaddt1", "tilestored", "tilerelease",
                  "tdpbssd", "tdpbsud", "tdpbusd", "tdpbuud", "tdpbf16ps", "tdpfp16ps", "ret"}
ARCHITECTURAL_FAULTS = {"#UD", "#GP", "#PF"}


def first_words(cases) -> set[str]:
    return {line.split()[0] for case in cases for line in case.lines}


def test_the_same_seed_draws_the_same_cases_whatever_the_batches():
    one = fuzz_amx.draw_amx_cases(60, 7)
    assert one == fuzz_amx.draw_amx_cases(60, 7)
    drawer = fuzz_amx.AmxCaseDrawer(7)
    assert drawer.draw(25) + drawer.draw(35) == one  # chunked draws do not change the sequence
    assert len(set(one)) == 60
    assert not set(one) & set(fuzz_amx.draw_amx_cases(60, 8))


def test_cases_are_amx_cases_whose_text_init_and_truncation_work():
    case = fuzz_amx.draw_amx_cases(1, 3)[0]
    assert isinstance(case, fuzz_amx.AmxCase) and case.lines[0] == "ldtilecfg [rcx]" and case.lines[-1] == "ret"
    text, init = case.standalone()
    assert text.split("\n") == list(case.lines)
    assert init.regs["rcx"] == fuzz_amx.AMX_CFG and init.regs["rsi"] == 64
    assert [len(data) for _, data, _ in init.memory] == [0x1000, fuzz_amx.AMX_SPAN, fuzz_amx.AMX_SPAN]
    assert case.truncated(0).lines == ("ldtilecfg [rcx]", "ret")


def test_data_seeds_come_from_one_pool_per_seed():
    cases = fuzz_amx.draw_amx_cases(400, 11)
    seeds = {case.data_seed for case in cases}
    assert len(seeds) > fuzz_amx.DATA_POOL // 2 and max(seeds) - min(seeds) < fuzz_amx.DATA_POOL
    assert all(0 <= s <= 1 << 32 for s in seeds)


def test_configuration_images_are_tile_configs():
    rng = np.random.default_rng(5)
    for _ in range(200):
        shapes = [(int(r), int(c)) for r, c in zip(rng.choice(fuzz_amx._ROWS, 8), rng.choice(fuzz_amx._COLSB, 8))]
        start_row, palette = int(rng.integers(0, 256)), int(rng.choice((0, 1, 2, 255)))
        assert bytes(fuzz_amx._config_image(shapes, start_row, palette)) == \
            tile_config(dict(enumerate(shapes)), start_row, palette=palette)


def test_every_instruction_kind_is_drawn():
    """Over 2,000 cases every form amx_cases writes is assembled, TDPs with repeated tiles (.byte) among them,
    in both flavours' proportions, and with configurations and strides of every kind."""
    cases = fuzz_amx.draw_amx_cases(2000, 2024)
    machine = Machine("x86_amx")
    forms: Counter = Counter()
    repeated = 0
    for case in cases:
        for ins in machine.assemble("\n".join(case.lines)).instructions:
            forms[ins.form.mnemonic] += 1
            names = [op.name for op in ins.operands if hasattr(op, "name")]
            repeated += ins.form.mnemonic.startswith("tdp") and len(set(names)) < len(names)
    assert set(forms) == EXPECTED_FORMS, set(forms) ^ EXPECTED_FORMS
    assert min(forms.values()) >= 50, forms
    assert repeated >= 20
    assert forms["tdpbf16ps"] > max(forms[f] for f in fuzz_amx.INT_TDP_FORMS)  # bf16 is the heavier flavour
    lines = [line for case in cases for line in case.lines]
    assert any(line.startswith("ldtilecfg [rcx+0xc0]") for line in lines)  # the fourth configuration
    strides = Counter(value for case in cases for name, value in case.regs if name in ("r8", "r9", "r10"))
    assert {0, 1, 65, (-64) % (1 << 64), 1024} <= set(strides)
    later = [case.configs[64 * i : 64 * i + 64] for case in cases for i in range(1, 4)]
    palettes = Counter(image[0] for image in later if any(image))
    assert {0, 1, 2, 255} <= set(palettes), palettes


def test_it_reaches_what_the_hypothesis_strategy_reaches():
    """The kinds of statement and of data zone a few of amx_cases' cases hold, the drawer's hold too."""
    strategy = draw_cases(fuzz_amx.amx_cases(), 40, 9)
    drawn = fuzz_amx.draw_amx_cases(400, 9)
    assert first_words(strategy) <= first_words(drawn)
    assert {case.dest_fill for case in strategy} <= {case.dest_fill for case in drawn} == {0, 0xCC}


def test_every_case_runs_to_its_end_or_to_an_architectural_fault():
    """No internal error on any drawn case; the runs end in each of the faults the strategy reaches (#UD,
    #GP, #PF) and without one; and a case cut before its faulting instruction runs to its end."""
    ends: Counter = Counter()
    for case in fuzz_amx.draw_amx_cases(400, 77):
        text, init = case.standalone()
        machine = Machine("x86_amx")
        machine.load_init(machine.assemble(text), init)
        result = machine.run(100_000)
        if result.fault is None:
            assert result.halted, text
            ends[None] += 1
            continue
        assert isinstance(result.fault, Fault) and result.fault.kind in ARCHITECTURAL_FAULTS, (text, result.fault)
        ends[result.fault.kind] += 1
        if result.fault.index > 0 and ends[f"cut {result.fault.kind}"] < 5:
            cut_text, cut_init = case.truncated(result.fault.index - 1).standalone()
            cut = Machine("x86_amx")
            cut.load_init(cut.assemble(cut_text), cut_init)
            after = cut.run(100_000)
            assert after.fault is None and after.halted, (cut_text, after.fault)
            ends[f"cut {result.fault.kind}"] += 1
    assert all(ends[kind] >= 3 for kind in (None, *ARCHITECTURAL_FAULTS)), ends
