"""`isasim fuzz --isa arm_sme`: random dot programs on isasim and QEMU, through the ISA-neutral engine."""

import pytest

from isasim import cli

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]


@pytest.mark.parametrize("svl", ["128", "2048"])
def test_fuzz_against_qemu_finds_no_divergence_and_counts_what_it_compared(svl, tmp_path, capsys):
    code = cli.main(["fuzz", "--isa", "arm_sme", "--svl", svl, "--cases", "12", "--seed", "3", "--out", str(tmp_path),
                     "--no-color"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no divergence" in out and "on sim and qemu" in out
    total = next(line for line in out.splitlines() if line.startswith("total")).split()
    assert int(total[1]) >= 12 and int(total[2]) > 0  # instructions and ZA elements compared
    assert list(tmp_path.iterdir()) == []  # no divergence, no trace


def test_fuzz_only_takes_the_isas_subsets(capsys):
    from cli_harness import error_line

    error_line(capsys, ["fuzz", "--isa", "arm_sme", "--only", "amx", "--cases", "1"], "dot")
