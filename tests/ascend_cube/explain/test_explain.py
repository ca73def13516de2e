"""``isasim explain`` for the Ascend cube: every form's worked example ends in checks that agree with the
machine, on both chips and several seeds, and a machine that computes or moves the wrong thing is caught.

Those tests are marked ``consistency``: explain's worked example (explain/worked.py, fixpipe_check.py) against
isasim's own machine.  The evidence that the machine is right is outside isasim: the numerics tests against
numpy, ml_dtypes and en_dtypes and the Huawei goldens (numerics/, kernels/test_qbmm_goldens.py), the Ascend C
guide's layout formulas (numerics/test_layouts.py, semantics/test_data_movement_load_2d_v2.py) and numpy's
matrix products (test_gemm.py)."""

from __future__ import annotations

import numpy as np
import pytest

from isasim.core.explain import ExplainOptions
from isasim.ascend_cube.numerics import mmad_math
from isasim.ascend_cube.explain import EXAMPLES, EXPLAINER

MMADS = [
    "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=float16, bType=float16, m=20, n=24, k=40)",
    "Mmad(c=L0C[2048], a=L0A[512], b=L0B[1024], aType=bfloat16, bType=bfloat16, m=16, n=16, k=16, "
    "cmatrixInitVal=false)",
    "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=30, n=40, k=70, cmatrixInitVal=false, "
    "cmatrixSource=true, bias=BT[64])",
    "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=0, n=40, k=70)",
]
FIXPIPES = [
    f"Fixpipe(dst=GM[0x200000], src=L0C[1024], srcType={src}, dstType={dst}, nSize=20, mSize=17, srcStride=32, "
    f"dstStride=24, quantPre={mode}, reluEn={relu}, nz2nd={nd})"
    for src, dst, mode, relu, nd in [("int32", "float16", "DEQF16", "false", "true"),
                                     ("int32", "int8", "VREQ8", "true", "true"),
                                     ("float32", "uint8", "QF322B8_PRE", "false", "false"),
                                     ("float32", "float16", "F322F16", "true", "true"),
                                     ("int32", "float16", "VDEQF16", "false", "false")]
]
FIXPIPES_950 = [
    "Fixpipe(dst=GM[0x200000], src=L0C[0], srcType=int32, dstType=bfloat16, nSize=16, mSize=16, srcStride=16, "
    "dstStride=16, quantPre=VQS322BF16_PRE)",
    "Fixpipe(dst=GM[0x200000], src=L0C[0], srcType=float32, dstType=hifloat8, nSize=16, mSize=16, srcStride=16, "
    "dstStride=16, quantPre=QF322HIF8_PRE_HYBRID)",
    "Fixpipe(dst=GM[0x200000], src=L0C[0], srcType=float32, dstType=float8_e4m3fn, nSize=16, mSize=16, "
    "srcStride=16, dstStride=16, quantPre=QF322FP8_PRE)",
]


def _checks(text: str, chip: str = "910B", seed: int = 1, options: dict | None = None):
    explanation = EXPLAINER.explain(text, None, ExplainOptions(seed=seed, config={"chip": chip,
                                                                                  "options": options or {}}))
    checks = explanation.checks
    assert checks, text
    return checks


@pytest.mark.consistency
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("form_id", sorted(EXAMPLES))
def test_every_forms_example_checks_equal(form_id, seed):
    for check in _checks(EXAMPLES[form_id], seed=seed):
        assert check.equal, (form_id, check)


@pytest.mark.consistency
@pytest.mark.parametrize("text", MMADS + FIXPIPES)
@pytest.mark.parametrize("chip", ["910B", "950"])
def test_mmad_and_fixpipe_examples_check_equal_on_both_chips(text, chip):
    for check in _checks(text, chip):
        assert check.equal, check


@pytest.mark.consistency
@pytest.mark.parametrize("text", FIXPIPES_950 + [
    "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=float8_e4m3fn, bType=float8_e5m2, m=16, n=16, k=64)",
    "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=hifloat8, bType=hifloat8, m=16, n=16, k=32)"])
def test_950_extras_check_equal(text):
    for check in _checks(text, "950"):
        assert check.equal, check


@pytest.mark.consistency
@pytest.mark.parametrize("options", [{"mmad_float_accumulation": "fp32_per_k_step"},
                                     {"mmad_float_accumulation": "exact_single_rounding"}])
def test_the_float_accumulation_option_is_what_the_example_works_out(options):
    for check in _checks(MMADS[0], options=options):
        assert check.equal, check


@pytest.mark.consistency
def test_a_machine_that_adds_wrong_is_caught(monkeypatch):
    real = mmad_math.mmad
    monkeypatch.setattr(mmad_math, "mmad", lambda *a, **k: (np.asarray(real(*a, **k)) + 1).astype(np.uint32))
    assert not all(c.equal for c in _checks(EXAMPLES["Mmad"]))


@pytest.mark.consistency
def test_a_machine_that_moves_wrong_is_caught(monkeypatch):
    from isasim.ascend_cube import context

    real = context.AscendContext.write

    def shifted(self, buffer, offset, data, what):
        real(self, buffer, offset + 32, data, what)

    monkeypatch.setattr(context.AscendContext, "write", shifted)
    for form_id in ("DataCopy_GM_to_L1", "LoadData_L1_to_L0A", "DataCopy_L1_to_BT"):
        assert not all(c.equal for c in _checks(EXAMPLES[form_id])), form_id


def test_explain_shows_the_options_a_run_used():
    explanation = EXPLAINER.explain(EXAMPLES["Mmad"], None, ExplainOptions(config={"options": {
        "l0c_int32_overflow": "wrap"}}))
    rows = explanation.section("Configuration").blocks[0].rows
    assert ["l0c_int32_overflow", "wrap"] in rows and ["chip", "910B"] in rows


def _fixpipe_cases():
    from isasim.ascend_cube.numerics.fixpipe_math import QUANT_MODES

    for mode, spec in QUANT_MODES.items():
        for out in spec.outputs:
            if out in ("float8_e4m3fn", "hifloat8"):
                continue  # the 950's fp8 / HiFloat8 outputs: not worked out a second time
            for src in spec.l0c_dtypes:
                if mode == "NoQuant" and src != out:
                    continue
                for chip in spec.chips:
                    yield mode, src, out, chip


@pytest.mark.consistency
@pytest.mark.parametrize("mode, src, out, chip", list(_fixpipe_cases()), ids=lambda v: str(v))
@pytest.mark.parametrize("options", [{}, {"int8_rounding": "ties_away", "fixpipe_multiply": "exact",
                                          "fixpipe_float_overflow": "inf_nan", "relu_zero_sign": "product_sign"}],
                         ids=["defaults", "other settings"])
def test_fixpipe_element_is_worked_out_again_with_fractions(mode, src, out, chip, options):
    """Every mode whose output this explanation works out itself (fixpipe_check, exact fractions from the
    word's fields), over seeds, ReLU on and off and two sets of option settings: the check is that
    independent arithmetic, and it equals the machine."""
    independent = 0
    for relu in ("false", "true"):
        text = (f"Fixpipe(dst=GM[0x200000], src=L0C[0], srcType={src}, dstType={out}, nSize=20, mSize=17, "
                f"srcStride=32, dstStride=24, quantPre={mode}, reluEn={relu})")
        for seed in (1, 2, 3):
            explanation = EXPLAINER.explain(text, None, ExplainOptions(seed=seed, config={"chip": chip,
                                                                                          "options": options}))
            check = explanation.checks[-1]
            assert check.equal, (text, chip, seed, check)
            independent += any("works the element out again here" in getattr(block, "text", "")
                               for section in explanation.sections for block in section.blocks)
    assert independent >= 3, f"{mode} on {chip}: the independent arithmetic ran in only {independent} of 6 examples"
