"""The README's Python example runs as written."""

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs():
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        namespace: dict = {}
        exec(compile(code, "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    assert namespace["record"].instruction.text == "ldtilecfg [rcx]"
    assert namespace["m"].state.tile_array(0, "int32")[0, 0] == 4916  # C[0][0] of the seed's data


def run_readme_block(capsys, heading: str, count: int) -> str:
    """Run the isasim commands of the first ```bash block after ``heading`` (``count`` of them) from the
    checkout's top, each with --no-color (asm has none); their output."""
    import shlex

    from isasim import cli

    text = (ROOT / "README.md").read_text()
    block = re.search(rf"## {heading}.*?```bash\n(.*?)```", text, re.S).group(1)
    commands = [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("isasim ")]
    assert len(commands) == count
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for argv in commands:
            assert cli.main(argv + ["--no-color"] if argv[0] != "asm" else argv) == 0, (argv, capsys.readouterr().err)
    finally:
        os.chdir(cwd)
    return capsys.readouterr().out


def test_readme_arm_sme_commands_run(capsys):
    out = run_readme_block(capsys, "Arm SME2", 4)
    assert "za[1]" in out and "udot za.s[w8, 0, vgx4]" in out  # the group w8 = 1 names at SVL 256: rows 1, 9, 17, 25
    assert "PASS: every expectation of examples/arm_sme/smopa_gemm.trace.json holds (qemu" in " ".join(out.split())


def test_readme_ascend_cube_commands_run(capsys):
    out = " ".join(run_readme_block(capsys, "Ascend cube", 6).split())
    assert "PASS: every expectation of examples/ascend_cube/int8_gemm.trace.json holds" in out
    assert "equal ✓" in out  # the Fixpipe element worked through equals the machine's
    # the QBMM examples against Huawei's golden C: the int8 one bit-exact, the fp8 one within its rule
    assert "PASS: 42,000 of 42,000 elements bit-exact" in out and out.count("PASS: ") >= 3
    assert "block 0 of 6" in out and "L0C[0] as a 4 x 8 int32 matrix" in out
    assert "element (3, 5) from L0C[212]" in out and "output bfloat16" in out
