"""The AMX extensions' encodings (forms/amx_extensions.py) against outside oracles:

* LLVM 22.1.8's MC tests (tests/x86_amx/data/llvm_mc_amx_extensions*.tsv, copied as data): every line of
  AMX-COMPLEX, AMX-FP8, AMX-TF32, AMX-MOVRS, AMX-AVX512 and AMX-TILE assembles to LLVM's bytes, but the APX
  spellings (r16-r31, {evex}), which isasim refuses in one line; every disassembler line decodes to the text
  LLVM's assembles to;
* zig's clang (LLVM 22) on random operands, every form at once;
* GNU as 2.40 for LDTILECFG/STTILECFG [rip+disp32] (it knows none of the extensions).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from gnu_binutils import gas

from isasim.core.errors import IsasimError
from isasim.x86_amx.assembler import assemble
from isasim.x86_amx.decoder import disassemble
from isasim.x86_amx.forms import amx_extensions

DATA = Path(__file__).parent.parent / "data"
APX = re.compile(r"\br(1[6-9]|2[0-9]|3[01])\b|\{evex\}")


def _zig() -> tuple[str | None, dict[str, str]]:
    """zig (as isasim.arm_sme.oracle.tools finds it: $ISASIM_ZIG, the repo's .oracles, PATH) and its env."""
    oracles = Path(os.environ.get("ISASIM_ORACLES", Path(__file__).resolve().parents[3] / ".oracles"))
    for candidate in (os.environ.get("ISASIM_ZIG"), oracles / "python" / "ziglang" / "zig", shutil.which("zig")):
        if candidate and Path(candidate).is_file():
            env = dict(os.environ)
            env.setdefault("ZIG_GLOBAL_CACHE_DIR", str(oracles / "zig-cache"))
            env.setdefault("ZIG_LOCAL_CACHE_DIR", str(oracles / "zig-cache"))
            return str(candidate), env
    return None, {}


def _rows(name: str) -> list[tuple[str, str, str]]:
    lines = [line.rstrip("\n").split("\t") for line in (DATA / name).read_text().splitlines() if not line.startswith("#")]
    return [tuple(row) for row in lines[1:]]


def test_every_llvm_mc_line_assembles_to_llvms_bytes_or_is_apx():
    rows = _rows("llvm_mc_amx_extensions.tsv")
    accepted = refused = 0
    for source, line, encoding in rows:
        if APX.search(line):
            with pytest.raises(IsasimError) as refusal:
                assemble(line)
            assert "\n" not in str(refusal.value)
            refused += 1
            continue
        (ins,) = assemble(line).instructions
        assert ins.encoding.hex() == encoding, (source, line)
        (again,) = assemble(ins.text).instructions  # the printed text assembles back
        assert again.encoding == ins.encoding
        accepted += 1
    assert (accepted, refused) == (97, 8)


def test_every_llvm_disassembler_line_decodes_to_llvms_instruction():
    decoded = 0
    for source, text, encoding in _rows("llvm_mc_amx_extensions_disassembler.tsv"):
        if APX.search(text) or encoding.startswith("62") and not text.startswith(("tcvtrow", "tilemovrow")):
            continue  # the MOVRS EVEX (APX) spellings
        (ins,) = disassemble(bytes.fromhex(encoding), 0x1000).instructions
        assert not ins.invalid, (source, text, ins.invalid)
        (want,) = assemble(text).instructions
        assert ins.text == want.text and ins.encoding == want.encoding, (source, text)
        decoded += 1
    assert decoded == 48


def _random_line(form, rng: random.Random) -> str:
    if isinstance(form, amx_extensions.AmxEvexForm):
        row = rng.choice(["eax", "ecx", "edx", "ebx", "esi", "edi", "r8d", "r11d", "r15d"]) if not form.opcode.imm8 \
            else str(rng.randrange(256))
        return f"{form.mnemonic} zmm{rng.randrange(32)}, tmm{rng.randrange(8)}, {row}"
    if "sibmem" in form.operand_kinds:
        base, index = rng.choice(["rax", "rbx", "rsp", "rbp", "r12", "r13", "r9"]), rng.choice(["rcx", "rsi", "r8", "r15"])
        return f"{form.mnemonic} tmm{rng.randrange(8)}, [{base}+{index}*{rng.choice([1, 2, 4, 8])}+{rng.randrange(-300, 300)}]"
    c, a, b = rng.sample(range(8), 3)
    return f"{form.mnemonic} tmm{c}, tmm{a}, tmm{b}"


def test_every_form_gives_zig_clangs_bytes_on_random_operands():
    zig, env = _zig()
    if zig is None:
        pytest.skip("zig is not installed ($ISASIM_ZIG, .oracles/python/ziglang/zig, PATH)")
    rng = random.Random(29)
    lines = [_random_line(form, rng) for form in amx_extensions.FORMS for _ in range(8)]
    lines += ["ldtilecfg [rip+0x40]", "sttilecfg [rip-0x123456]"]
    with tempfile.TemporaryDirectory() as tmp:
        src, obj, binary = Path(tmp, "x.s"), Path(tmp, "x.o"), Path(tmp, "x.bin")
        src.write_text(".intel_syntax noprefix\n" + "\n".join(lines) + "\n")
        done = subprocess.run([zig, "cc", "-target", "x86_64-linux-gnu", "-c", str(src), "-o", str(obj)],
                              capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr[:2000]
        subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(obj), str(binary)], check=True)
        image = binary.read_bytes()
    ours = b"".join(ins.encoding for ins in assemble("\n".join(lines)).instructions)
    assert ours.hex() == image.hex()


def test_ldtilecfg_and_sttilecfg_rip_relative_as_gnu_as_encodes_and_objdump_prints():
    lines = ["ldtilecfg [rip+0x10]", "sttilecfg [rip+0x7fffffff]", "ldtilecfg [rip-0x40]", "ldtilecfg [rip]"]
    for line, (want_bytes, want_text) in zip(lines, gas(lines)):
        (ins,) = assemble(line).instructions
        assert ins.encoding == want_bytes, line
        assert ins.text == re.sub(r"\s*#.*", "", want_text), line


def test_tile_loads_refuse_rip_relative_addresses_in_one_line():
    for line in ("tileloaddrs tmm0, [rip+0x10]", "tileloadd tmm1, [rip]"):
        with pytest.raises(IsasimError, match="SIB"):
            assemble(line)


def test_decoder_marks_bad_evex_fields_invalid():
    good = bytes.fromhex("62e276484af5")  # tcvtrowd2ps zmm22, tmm5, ecx
    for index, mask, why in ((3, 0x80, "EVEX.z"), (3, 0x01, "aaa"), (2, 0x80, "EVEX.W"), (1, 0x40, "tmm16-31"),
                             (3, 0x08, "EVEX.V'")):
        bad = bytearray(good)
        bad[index] ^= mask
        (ins,) = disassemble(bytes(bad), 0x1000).instructions
        assert ins.invalid and why in ins.invalid, (bytes(bad).hex(), ins.invalid)


def test_tmul_extensions_name_three_different_tiles():
    for mnemonic in ("tcmmimfp16ps", "tdphf8ps", "tmmultf32ps"):
        with pytest.raises(IsasimError, match="different"):
            assemble(f"{mnemonic} tmm1, tmm1, tmm2")


KERNEL = r"""
#include <immintrin.h>
/* C (16 x 16 fp32) += A (16 x 64 HF8) . B (16 rows of 16 groups of four HF8) with TDPHF8PS, A loaded with the
   read-shared hint, then C's row 5 to row_out with TILEMOVROW. */
void fp8_gemm(const void *cfg, const void *a, const void *b, float *c, float *row_out) {
  _tile_loadconfig(cfg);
  _tile_loadd(0, c, 64);
  _tile_loaddrs(1, a, 64);
  _tile_loadd(2, b, 64);
  _tile_dphf8ps(0, 1, 2);
  _tile_stored(0, c, 64);
  *(__m512i *)row_out = _tile_movrow(0, 5);
  _tile_release();
}
"""


def test_a_kernel_zig_clang_compiles_from_the_intrinsics_runs(tmp_path, capsys):
    """zig's clang (LLVM 22) compiles AMX-FP8/MOVRS/AVX512 intrinsics; isasim decodes every instruction of the
    object and runs the function on the diamond-rapids model.  C is checked against numerics/fp8.py run on the
    same bytes (a consistency check: spec only, no silicon seen) and TILEMOVROW's row against C's row 5."""
    import json

    import numpy as np

    from isasim import cli
    from isasim.x86_amx.numerics import fp8, tmul
    from isasim.x86_amx.kernels import tile_config

    zig, env = _zig()
    if zig is None:
        pytest.skip("zig is not installed ($ISASIM_ZIG, .oracles/python/ziglang/zig, PATH)")
    src, obj = tmp_path / "k.c", tmp_path / "k.o"
    src.write_text(KERNEL)
    done = subprocess.run([zig, "cc", "-target", "x86_64-linux-gnu", "-O2", "-fomit-frame-pointer",
                           "-mcpu=graniterapids_d+amx_fp8+amx_movrs+amx_avx512+avx10_2", "-c", str(src), "-o", str(obj)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    rng = np.random.default_rng(8)
    finite = np.array([c for c in range(256) if c & 0x7F != 0x7F], dtype=np.uint8)
    a, b = rng.choice(finite, (16, 64)), rng.choice(finite, (16, 64))
    c = (rng.integers(-512, 512, (16, 16)) / 8).astype(np.float32)
    cfg = np.frombuffer(tile_config({0: (16, 64), 1: (16, 64), 2: (16, 64)}), dtype=np.uint8)

    def region(name, address, dtype, values):
        return {"name": name, "addr": hex(address), "type": dtype, "shape": list(values.shape),
                "values": values.ravel().tolist()}

    init = {"memory": [region("CFG", 0x10000000, "uint8", cfg.reshape(1, 64)), region("A", 0x10100000, "uint8", a),
                       region("B", 0x10200000, "uint8", b), region("C", 0x10300000, "fp32", c),
                       region("ROW", 0x10400000, "fp32", np.zeros((1, 16), dtype=np.float32))],
            "args": ["CFG", "A", "B", "C", "ROW"]}
    (tmp_path / "init.json").write_text(json.dumps(init))
    capsys.readouterr()
    code = cli.main(["record", str(obj), "--function", "fp8_gemm", "--init", str(tmp_path / "init.json"),
                     "--cpu", "diamond-rapids", "-o", str(tmp_path / "t.json"), "--no-color"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    memory = {int(m["addr"], 16): bytes.fromhex(m["hex"]) for m in json.loads((tmp_path / "t.json").read_text())["expect"]["memory"]}
    got = np.frombuffer(memory[0x10300000], dtype=np.uint32).reshape(16, 16)
    want = tmul.tmul_add32(c.view(np.uint32), fp8.fp8_dot_products(a, b, 16, 16, 16, "hf8", "hf8"))
    assert (got == want).all()
    assert np.frombuffer(memory[0x10400000], dtype=np.uint32).tolist() == got[5].tolist()
