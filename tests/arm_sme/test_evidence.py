"""The reference index's evidence column (isasim/arm_sme/explain/evidence.py) says only what the tests do.

A form the column calls QEMU-checked is one that a QEMU test selects: the union of the forms the tests under
tests/arm_sme/semantics/*_vs_qemu.py, test_infrastructure_vs_qemu.py and test_advsimd.py list at module level,
and the instructions of test_base_vs_qemu.py's cases.  A form listed as not run there is indeed in none of them
(so the list shrinks when a test starts running one).
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

from isasim.arm_sme import ISA
from isasim.arm_sme.explain.evidence import NOT_RUN_ON_QEMU, evidence
from isasim.arm_sme.forms import FORMS, A64Form

HERE = Path(__file__).parent
QEMU_TESTS = sorted((HERE / "semantics").glob("*_vs_qemu.py")) + [HERE / "test_infrastructure_vs_qemu.py",
                                                                   HERE / "test_advsimd.py"]


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(f"evidence_of_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def forms_run_on_qemu() -> set[str]:
    ids = set()
    for path in QEMU_TESTS:
        module = _module(path)
        for value in vars(module).values():
            if isinstance(value, (list, tuple)) and value and all(isinstance(item, A64Form) for item in value):
                ids |= {form.id for form in value}
        if path.name == "test_base_vs_qemu.py":  # snippets of calls, addresses, system registers, frames
            for _label, text, _state in module._cases(random.Random(1), 128):
                ids |= {instruction.form.id for instruction in ISA.assemble(text).instructions}
    return ids


def test_every_form_called_qemu_checked_is_run_by_a_qemu_test():
    run = forms_run_on_qemu()
    claimed = [form.id for form in FORMS if form.id not in NOT_RUN_ON_QEMU]
    assert [name for name in claimed if name not in run] == []
    assert all(evidence(form).startswith("clang") for form in FORMS)


def test_every_form_said_not_to_run_there_is_not_run_there():
    run = forms_run_on_qemu()
    ids = {form.id for form in FORMS}
    assert set(NOT_RUN_ON_QEMU) <= ids, set(NOT_RUN_ON_QEMU) - ids
    assert sorted(set(NOT_RUN_ON_QEMU) & run) == []
