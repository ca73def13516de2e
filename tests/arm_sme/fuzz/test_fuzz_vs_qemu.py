"""`isasim fuzz --isa arm_sme`: random programs over every form, on isasim and QEMU, through the ISA-neutral engine.

The tests without the oracles check what the cases are made of: every form is drawn, operands land
in mapped memory, branches go forward.  Those with QEMU run small campaigns (a few dozen cases per
SVL, at two SVLs), and one plants a bug in isasim to see it found and shrunk to a one-instruction trace.
"""

import json
from collections import Counter

import pytest

from cli_harness import error_line
from isasim import cli
from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.fuzz.cases import draw_slot, fuzzable, slot_text
from isasim.arm_sme.fuzz.form_generator import MIXED, FormGenerator, subsets
from isasim.core.fuzz.drawing import draw_cases
from isasim.core.machine import Machine


def needs_oracles(test):
    return pytest.mark.needs_qemu(pytest.mark.needs_clang(test))

ALWAYS_UNDEFINED = {"UDF"}  # no encoding of it is a valid instruction: nothing to draw


def test_the_subsets_are_mixed_and_every_form_group():
    groups = {form.group for form in FORMS}
    assert subsets()[0] == MIXED and set(subsets()[1:]) == groups
    assert ISA.fuzz_subsets == subsets()


def test_every_form_gets_random_valid_encodings_that_assemble_back_to_the_same_word():
    from isasim.arm_sme.config import CODE_BASE

    for form in FORMS:
        if form.id in ALWAYS_UNDEFINED or not fuzzable(form):
            assert draw_slot(form, 1) is None
            continue
        for seed in range(3):
            slot = draw_slot(form, seed)
            assert slot is not None, form.id
            text = slot_text(slot, 0, 1, CODE_BASE)
            instruction = ISA.assemble(text).instructions[0]
            assert instruction.form is form, (form.id, text)
            assert "x30" not in text and "w30" not in text


@pytest.mark.parametrize("svl", [128, 2048])
def test_cases_run_on_isasim_mostly_without_faults_and_branches_stay_inside(svl):
    # Memory operands point into the block, so faults are the planted edge cases (x18/x19 near the end).
    faults, cases, forms = Counter(), 0, Counter()
    for subset in subsets():
        for case in draw_cases(FormGenerator(subset, svl).cases(), 10, 5):
            text, init = case.standalone()
            program = ISA.assemble(text)  # a branch target outside the program would not assemble
            machine = Machine("arm_sme", {"svl": svl})
            machine.load_init(program, init)
            result = machine.run(100, keep_records=True)
            cases += 1
            forms.update(record.instruction.form.group for record in result.records if record.fault is None)
            if result.fault is not None:
                faults[result.fault.kind] += 1
    assert sum(faults.values()) < cases // 5, faults
    # every group ran, but AdvSIMD: UNDEFINED in streaming mode, where these cases run (tests/arm_sme/
    # test_advsimd.py runs it outside streaming mode against QEMU)
    assert set(forms) == {form.group for form in FORMS} - {"advsimd"}


def test_the_known_qemu_differences_are_kept_out_of_the_cases():
    # vertical ZA tile-slice loads are governed by the all-true P7 (QEMU's sme_ld1 leaves inactive
    # elements after the last active one unzeroed); stores and ZA tile-slice loads never use the bases
    # near the block's end (isasim's partial writes before a fault, QEMU's none; QEMU's abort on a ZA
    # slice element split across the end of mapped memory)
    from isasim.arm_sme.fuzz.cases import ALL_TRUE_P, EDGE_BASES

    for form in FORMS:
        for seed in range(20):
            slot = slot_text_and_fields(form, seed)
            if slot is None:
                continue
            text, fields = slot
            if form.group == "za_memory" and form.mnemonic.startswith("ld") and fields.get("V") == 1:
                assert fields["Pg"] == ALL_TRUE_P, text
            if (form.mnemonic.startswith("st") or form.group == "za_memory") and "Rn" in fields and "[" in text:
                assert fields["Rn"] not in EDGE_BASES, text


def slot_text_and_fields(form, seed):
    from isasim.arm_sme.config import CODE_BASE

    slot = draw_slot(form, seed)
    return None if slot is None else (slot_text(slot, 0, 1, CODE_BASE), dict(slot.fields))


def fuzz(*args) -> list[str]:
    return ["fuzz", "--isa", "arm_sme", "--no-color", "--shrink-seconds", "20", *map(str, args)]


@needs_oracles
@pytest.mark.parametrize("svl", ["128", "1024"])
def test_fuzz_against_qemu_finds_no_divergence_and_counts_what_it_compared(svl, tmp_path, capsys):
    code = cli.main(fuzz("--svl", svl, "--cases", 36, "--seed", 3, "--out", tmp_path))
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no divergence" in out and "on sim and qemu" in out
    assert all(f"{subset} " in out.replace("\n", " ") for subset in subsets())  # each subset ran
    total = next(line for line in out.splitlines() if line.startswith("total")).split()
    assert int(total[1]) >= 36 and int(total[2]) > 0  # instructions and bytes of results compared
    assert not list(tmp_path.glob("*.trace.json"))  # no divergence, no trace (only the campaign's own files)


@needs_oracles
def test_only_one_group_runs_with_only(tmp_path, capsys):
    code = cli.main(fuzz("--svl", 256, "--only", "za_memory", "--cases", 6, "--seed", 1, "--out", tmp_path))
    out = capsys.readouterr().out
    assert code == 0 and "(za_memory 6)" in out, out
    rows = [line.split()[0] for line in out.splitlines()[1:] if line and line.split()[0] in FORMS.ids()]
    assert rows and all(FORMS[row].group == "za_memory" for row in rows)


@needs_oracles
def test_a_lockstep_campaign_compares_after_every_instruction(tmp_path, capsys):
    code = cli.main(fuzz("--svl", 256, "--lockstep", "--cases", 13, "--seed", 4, "--out", tmp_path))
    out = capsys.readouterr().out
    assert code == 0 and "lockstep" in out and "no divergence" in out, out


def test_lockstep_cases_leave_out_what_turns_za_off():
    from isasim.arm_sme.fuzz.form_generator import turns_za_off

    mode = FormGenerator("mode", 256, lockstep=True).forms()
    assert {form.id for form in FORMS if turns_za_off(form)} == {"SMSTOP", "SMSTOP_ZA"}
    assert mode and not any(turns_za_off(form) for form in mode)
    assert any(turns_za_off(form) for form in FormGenerator("mode", 256).forms())


@needs_oracles
def test_a_planted_bug_is_found_and_shrunk_to_a_trace_of_one_instruction(monkeypatch, tmp_path, capsys):
    from smeharness import plant

    def off_by_one_add(context, run, instruction):
        d = instruction.operands[0]  # Rd (31: SP)
        target = run()
        if d != 31:
            context.state.write_x(d, context.state.x[d] ^ 1)
        return target

    plant(monkeypatch, "ADD_64_imm", off_by_one_add)
    # the scalar group holds the A64 base data-processing forms (over a hundred since issue 28), so whether 30 cases
    # draw ADD (immediate) depends on the seed and on the forms there are: the first seed whose cases do
    for seed in range(3, 13):
        code = cli.main(fuzz("--svl", 128, "--only", "scalar", "--cases", 30, "--seed", seed, "--out", tmp_path))
        out = capsys.readouterr().out
        if "ADD_64_imm" in out:
            break
    assert code != 0 and "DIVERGENCE" in out, out
    traces = sorted(tmp_path.glob("*.trace.json"))
    assert traces, out
    trace = json.loads(traces[0].read_text())
    program = [line for line in trace["program"] if line.strip()]
    assert len(program) == 1 and program[0].startswith("add "), program
    # the trace holds QEMU's answer: the buggy simulator fails it, as the fuzzer said
    assert cli.main(["replay", str(traces[0]), "--no-color"]) != 0


def test_fuzz_only_takes_the_isas_subsets(capsys):
    error_line(capsys, ["fuzz", "--isa", "arm_sme", "--only", "amx", "--cases", "1"], "mixed", "dot", "za_memory")
