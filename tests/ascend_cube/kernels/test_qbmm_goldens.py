"""The QBMM Cube kernel against Huawei's own golden for QuantBatchMatmulV3.

tests/ascend_cube/qbmm_cases/ holds 91 cases recorded by running hicann/ops-nn's qbmmv3_kernel_golden.py (see
qbmm_cases/README.md): every input, the golden's C, and its acceptance rule.  Each case the kernel
takes is built, simulated and compared:

- int8 inputs (int32, int8, float16 and bfloat16 C): bit-exact.  The golden's arithmetic is the
  kernel's here (an exact int32 sum, one float32 multiply by the 19-bit scale, one rounding).
  The two cases whose int32 sums leave the int32 range run with ``l0c_int32_overflow=wrap``, the
  golden's numpy int32 (the Mmad page says saturation, so that is isasim's default: the test
  also shows the default gives a different C there).
- fp8 / hifloat8 inputs: the golden's isclose_compare (rtol 1e-3, 1e-4 for float32, and a
  fraction ptol of elements may miss), because the golden sums in numpy's float32 order and the
  cube's order is not public (option mmad_float_accumulation); the bit-exact rate is printed.

The cases the kernel does not take are refused in one line each, and the list of them is fixed
here, with the reason: they belong to the operator's other kernels (the golden models all of
QuantBatchMatmulV3).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from isasim.ascend_cube.kernels import qbmm
from isasim.ascend_cube.kernels.qbmm_run import compare, run

CASES = Path(__file__).parents[1] / "qbmm_cases"
INDEX = json.loads((CASES / "index.json").read_text())["cases"]

# case -> the words its refusal must contain (why the operator runs it on another kernel)
REFUSED = {
    "i8_i32_wrap_k140000": "16-bit field",
    "i8_f16_pcu64_biasf32_tb_m33n70k100": "bias_type float32 with int8",
    "i8_f16_pcf32_m257n15k31": "float32 per channel",
    "i8_bf16_pcf32_m17n130k65": "float32 per channel",
    "i8_bf16_pcbf16_m100n70k33": "bfloat16 per channel",
    "i8_bf16_pcu64_biasf32_m17n70k300": "bias_type float32 with int8",
    "i8_bf16_ptf32_biasf32_m33n15k100": "bias_type float32 with int8",
    "i8_bf16_pcu64_bcast_biasf32_m17n15k33": "bias_type float32 with int8",
    "i8_f32_pcu64_m100n70k300": "no int32 -> float32",
    "i8_f32_ptf32_biasf32_m17n15k33": "bias_type float32 with int8",
    "i8_f32_pcf32_biasi32_tb_m129n130k31": "no int32 -> float32",
    "i8_f32_pcu64_atomic_m33n70k100": "no int32 -> float32",
    "i8_f32_pcu64_atomic_bcast_biasf32_m17n15k33": "bias_type float32 with int8",
    "e4m3_e4m3_f32_dbl_biasf32_m129n130k31": "a bias with x1 and x2 per tensor",
    "e4m3_e5m2_bf16_dbl_biasf32_m17n15k33": "a bias with x1 and x2 per tensor",
    "hif8_hif8_f16_dbl_biasf32_m100n70k300": "a bias with x1 and x2 per tensor",
    "hif8_hif8_f16_dbl_biasf32_m17n15k33": "a bias with x1 and x2 per tensor",
    "hif8_hif8_f32_dbl_b3_bias3_m17n70k33": "a bias with x1 and x2 per tensor",
    "e4m3_e4m3_bf16_dblpc_m17n70k33": "A per-tensor x B per-channel",
    "hif8_hif8_f32_dblpc_biasf32_m33n15k100": "A per-tensor x B per-channel",
    "e4m3_e4m3_f16_pcf32_m100n70k300": "float32 per channel",
}


def _load(name: str) -> qbmm.QbmmCase:
    case = qbmm.load_case(CASES / name / "case.json")
    source = json.loads((CASES / name / "case.json").read_text()).get("source", {})
    if source.get("int32_wraps"):
        case.options = {"l0c_int32_overflow": "wrap"}  # the golden's numpy int32
    return case


def _fp8_per_tensor_float(entry) -> bool:
    return (entry["a_type"] != "int8" and entry["x1_quant_mode"] == "none" and entry["x2_quant_mode"] == "pertensor"
            and entry["scale_b_type"] in ("float32", "bfloat16"))


def _expected_refusal(entry) -> str | None:
    if entry["name"] in REFUSED:
        return REFUSED[entry["name"]]
    if _fp8_per_tensor_float(entry):
        return "to another kernel"  # the host sends fp8/hif8 with a float per-tensor scale to the mix kernels
    return None


@pytest.mark.parametrize("entry", INDEX, ids=[e["name"] for e in INDEX])
def test_qbmm_case_matches_huawei_golden(entry):
    reason = _expected_refusal(entry)
    if reason is not None:
        with pytest.raises(qbmm.CaseError) as refused:
            qbmm.build(_load(entry["name"]))
        message = str(refused.value)
        assert reason in message and "\n" not in message, message
        return
    case = _load(entry["name"])
    kernel = qbmm.build(case)
    c, _machine = run(kernel)
    result = compare(case, c)
    print(f"{entry['name']}: {result.describe()}")
    assert result.passed, result.describe()
    if case.a_type == "int8":
        assert result.bit_exact == result.elements, result.describe()


def test_qbmm_golden_cases_mostly_run_on_this_kernel():
    # a rule that refused everything would pass the test above: most of the golden's cases are this kernel's
    runnable = [e for e in INDEX if _expected_refusal(e) is None]
    assert len(runnable) >= 55 and len({e["c_type"] for e in runnable}) == 5
    assert {e["a_type"] for e in runnable} == {"int8", "float8_e4m3fn", "float8_e5m2", "hifloat8"}


@pytest.mark.parametrize("name", ["i8_i32_wrap_bias_m16n16k64"])
def test_qbmm_int32_overflow_default_saturates_where_the_golden_wraps(name):
    case = qbmm.load_case(CASES / name / "case.json")  # the default options: l0c_int32_overflow saturate
    c, _machine = run(qbmm.build(case))
    result = compare(case, c)
    assert not result.passed and result.bit_exact < result.elements
    assert {int(v) for v in c[c != case.expect]} <= {2**31 - 1, -2**31}  # saturated, where numpy wrapped
