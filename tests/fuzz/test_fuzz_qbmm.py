"""Structure-aware fuzzing of ``isasim qbmm``: mutated case files and array files, through the command line.

Seeds: the two examples (examples/ascend_cube/qbmm_*/) and a few recorded golden cases that use other
parts of the kernel (bias, atomic add, an NZ weight, transposed operands).  Each case copies one seed to a
fresh directory and damages it in one way:

* the case JSON, by tests/fuzz/mutators.py (keys dropped, renamed or doubled, values of other types, 64-bit
  edges, 10^4000, NaN, hostile strings, deep nesting, text cut short or spliced);
* a size: m, n, k, a batch dimension or a tiling field set to 0, 1, a power of two up to 2^40 or 10^9
  (the numbers every allocation is sized from);
* a legal case of another size: batch_c up to 10^9 (A and B broadcast), m up to 10^6 or k up to 65,536,
  A and B written again to match and the expectation dropped (so they reach the builder and the limits);
* one .npy input: another dtype, the other byte order, another shape, a header that claims 10^12
  elements, the file cut short, bytes flipped, an .npz, an empty file, a directory, NaN scales, random
  quant words.

Then one of the command's paths runs on it, in-process: a plain run, ``-o``, ``--trace``, ``--blocks``,
``--step --commands``, now and then ``--workers 2``.  Every case must end in PASS or FAIL (exit 0 or 1) or
one line on stderr (exit 2), never an internal error (exit 70) or another exception, within CASE_SECONDS
(an alarm fails the test naming the case), and within the address space the test allows the process
(ADDRESS_SPACE_ROOM over what it had: an allocation past qbmm's limits fails with MemoryError, which is
an internal error here).  A mutation of the byte order alone must not change a seed's PASS.  A case whose
program would be long is run with ``--blocks`` (built, not simulated), so the test stays in time.
Seeded; the counts are printed (``-s``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from isasim.ascend_cube.kernels.qbmm_case_file import load_case
from isasim.ascend_cube.kernels.qbmm_size import kernel_size
from isasim.ascend_cube.kernels.qbmm_tiling import tiling_for
from isasim.cli import main
from isasim.core.errors import IsasimError

from .mutators import JsonMutator
from .limits import Hang, address_space_room, time_limit

ROOT = Path(__file__).resolve().parents[2]
FUZZ_CASES = int(os.environ.get("ISASIM_FUZZ_QBMM_CASES", "600"))
SEED = 25
CASE_SECONDS = 30
RUN_BUDGET = 400  # instructions (at least) above which a case is built with --blocks rather than simulated
ADDRESS_SPACE_ROOM = 3 * 2**30
SEEDS = [ROOT / "examples/ascend_cube/qbmm_int8_bf16", ROOT / "examples/ascend_cube/qbmm_fp8_pertensor"] + [
    ROOT / "tests/ascend_cube/qbmm_cases" / name for name in (
        "i8_bf16_pcu64_biasi32_m257n15k300", "e5m2_e5m2_f32_dbl_atomic_m33n70k100",
        "e4m3_e4m3_bf16_pcu64_nz_m33n70k100", "hif8_hif8_bf16_dbl_tatb_m33n15k100")]
SIZE_FIELDS = ("m", "n", "k", "batch_a", "batch_b", "batch_c", "tiling")
TILING_FIELDS = ("baseM", "baseN", "baseK", "kAL1", "kBL1", "nBufferNum", "dbL0C", "mTailTile", "nTailTile",
                 "mBaseTailSplitCnt", "nBaseTailSplitCnt", "mTailMain", "nTailMain", "blockDim")
HOSTILE_SIZES = (0, 1, 2, 15, 16, 17, 31, 32, 255, 256, 4095, 4096, 65536, 10**6, 10**9, 2**31, 2**32, 2**40)


def _dumps(document) -> str:
    """JSON text of a mutant (a 10^4000 is written out: Python's digit limit guards reading, not writing)."""
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return json.dumps(document)
    finally:
        sys.set_int_max_str_digits(limit)


class CaseMutator:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.json = JsonMutator(rng.randrange(1 << 30))

    def size(self, document: dict) -> dict:
        rng, document = self.rng, dict(document)
        field = rng.choice(SIZE_FIELDS)
        value = rng.choice(HOSTILE_SIZES)
        if field.startswith("batch"):
            dims = list(document.get(field, [1, 1, 1, 1]))
            dims[rng.randrange(4)] = value
            document[field] = dims
            if rng.random() < 0.5:  # A and B broadcast, so that only C (and the program) grow
                document["batch_a" if field != "batch_a" else "batch_b"] = [1, 1, 1, 1]
        elif field == "tiling":
            tiling = dict(document.get("tiling") or {})
            tiling[rng.choice(TILING_FIELDS)] = value
            document["tiling"] = tiling
        else:
            document[field] = value
        return document

    def grow(self, directory: Path, document: dict) -> dict:
        """A legal case of another size: batch_c (A and B broadcast), m or k changed and A and B written again
        to match (random values, no expectation): the sizes that reach the builder and the limits."""
        rng, document = self.rng, dict(document)
        document.pop("expect", None)
        if document.get("transpose_a") or document.get("transpose_b") or document.get("b_format") == "NZ" \
                or document.get("bias_three_dim") or document.get("atomic_add"):
            return self.size(document)  # those shapes are not rewritten here: damage a size instead
        m, k = document["m"], document["k"]
        batch = [1, 1, 1, 1]
        which = rng.randrange(3)
        if which == 0:
            batch[3] = rng.choice((2, 16, 1000, 10**5, 10**9))
        elif which == 1:
            m = rng.choice((1, 17, 256, 4096, 65536, 10**6))
        else:
            k = rng.choice((1, 31, 32, 2900, 65536))
        if m * max(k, document["n"]) > 2**24:
            return self.size(document)  # arrays this big take too long to write for a fuzz case
        numbers = np.random.default_rng(rng.randrange(1 << 30))
        for key, shape in (("a", (m, k)), ("b", (k, document["n"]))):
            dtype = np.load(directory / document[key], mmap_mode="r").dtype
            np.save(directory / document[key], numbers.integers(0, 256, shape, dtype=np.uint8).view(dtype))
        document.update(m=m, k=k, batch_a=[1, 1, 1, 1], batch_b=[1, 1, 1, 1], batch_c=batch)
        return document

    def array(self, directory: Path, document: dict) -> str:
        """Damage one of the case's .npy files; what was done."""
        rng = self.rng
        names = [v for k, v in document.items() if k in ("a", "b", "bias", "scale_a", "scale_b") and isinstance(v, str)]
        names += [document["expect"]["c"]] if isinstance(document.get("expect"), dict) else []
        path = directory / rng.choice(names)
        array = np.load(path)
        how = rng.randrange(11)
        if how == 0:
            np.save(path, array.astype(array.dtype.newbyteorder(">")))
            return "byte order"
        if how == 1:
            np.save(path, array.astype(rng.choice((np.int8, np.uint8, np.int16, np.uint16, np.int32, np.float32,
                                                   np.float64, np.uint64, np.int64, np.bool_, np.complex64))))
        elif how == 2:
            np.save(path, rng.choice((array.reshape(-1), array[..., :-1], array.reshape((1,) * 3 + array.shape),
                                      array.T, array[None][:0])))
        elif how == 3:  # a header claiming 10^12 elements over a few bytes of data
            with open(path, "wb") as file:
                np.lib.format.write_array_header_1_0(file, {"descr": array.dtype.str, "fortran_order": False,
                                                            "shape": (10**12,)})
                file.write(array.tobytes()[:64])
        elif how == 4:
            data = path.read_bytes()
            path.write_bytes(data[:rng.randrange(len(data))])
        elif how == 5:
            data = bytearray(path.read_bytes())
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            path.write_bytes(bytes(data))
        elif how == 6:
            path.unlink()
            np.savez(path.with_suffix(""), x=array)
            path.with_suffix(".npz").rename(path)
        elif how == 7:
            path.write_bytes(b"")
        elif how == 8:
            path.unlink()
            path.mkdir()
        elif how == 9 and array.dtype.kind == "f":
            array = array.copy()
            array.reshape(-1)[rng.randrange(array.size)] = rng.choice((np.nan, np.inf, -np.inf, 1e38, 0.0))
            np.save(path, array)
        else:  # random bits: quant words, bfloat16 patterns, int8 values
            np.save(path, np.frombuffer(np.random.default_rng(rng.randrange(1 << 30)).bytes(array.nbytes),
                                        dtype=array.dtype).reshape(array.shape))
        return "array"


def _flags(rng: random.Random, directory: Path) -> list[str]:
    roll = rng.random()
    if roll < 0.3:
        return []
    if roll < 0.5:
        return ["-o", str(directory / "out.npy")]
    if roll < 0.6:
        return ["--trace", str(directory / "out.trace.json")]
    if roll < 0.8:
        return ["--blocks"]
    if roll < 0.97:
        return ["--step", "--block", str(rng.choice((0, 1, 5, -1))), "--commands", "s 3; p l0c; c"]
    return ["--workers", "2", "-o", str(directory / "out.npy")]


def _simulates(flags: list[str]) -> bool:
    return "--blocks" not in flags and "--step" not in flags


def _too_long_to_simulate(case_path: Path) -> bool:
    """Whether the case (if it loads) is at least RUN_BUDGET instructions: then it is only built."""
    try:
        case = load_case(case_path)
        from isasim.ascend_cube.kernels.qbmm_rules import dataflow

        tiling = tiling_for(case, dataflow(case).scale == "channel", 4 if case.has_bias else 0)
        return kernel_size(case, tiling).instructions > RUN_BUDGET
    except IsasimError:
        return False  # the command refuses it too, in one line


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def test_qbmm_answers_every_mutated_case(tmp_path, record_property):
    rng = random.Random(SEED)
    mutator = CaseMutator(rng)
    documents = {seed: json.loads((seed / "case.json").read_text()) for seed in SEEDS}
    tally = {"json": 0, "size": 0, "grown": 0, "array": 0, "byte order": 0, "text": 0, "done": 0, "failed": 0,
             "refused": 0, "built only": 0, "slowest": 0.0}
    started, cpu_started = time.perf_counter(), time.process_time()
    with address_space_room(ADDRESS_SPACE_ROOM):
        for case in range(FUZZ_CASES):
            seed = rng.choice(SEEDS)
            directory = tmp_path / f"case{case}"
            shutil.copytree(seed, directory)
            document = documents[seed]
            roll = rng.random()
            if roll < 0.35:
                kind, text = "json", _dumps(mutator.json.mutate(document))
            elif roll < 0.5:
                kind, text = "size", _dumps(mutator.size(document))
            elif roll < 0.65:
                kind, text = "grown", _dumps(mutator.grow(directory, document))
            elif roll < 0.9:
                kind, text = mutator.array(directory, document), _dumps(document)
            else:
                kind, text = "text", mutator.json.mutate_text(_dumps(document))
            tally[kind] += 1
            case_path = directory / "case.json"
            case_path.write_text(text, encoding="utf-8", errors="surrogatepass")
            flags = _flags(rng, directory)
            if _simulates(flags) and _too_long_to_simulate(case_path):
                flags, tally["built only"] = ["--blocks"], tally["built only"] + 1
            argv = ["qbmm", str(case_path), "--no-color", *flags]
            what = f"case {case} ({kind} of {seed.name}): isasim {' '.join(argv)}"
            began = time.perf_counter()
            try:
                with time_limit(CASE_SECONDS, what):
                    status, out, err = _run(argv)
            except Hang:
                raise
            except BaseException as error:  # noqa: BLE001 - main answers everything with an exit status
                raise AssertionError(f"{what}: {type(error).__name__}: {error}") from error
            tally["slowest"] = max(tally["slowest"], time.perf_counter() - began)
            assert status in (0, 1, 2), f"{what}: exit {status}: {err[-2000:]}"
            if status == 2:
                assert err.count("\n") == 1 and err.startswith("isasim: error: ") \
                    and err[:-1].isprintable(), f"{what}: {err[:2000]!r}"
                for name in ("out.npy", "out.trace.json"):  # nothing half written
                    assert not (directory / name).exists(), f"{what}: wrote {name} and then refused"
                tally["refused"] += 1
            else:
                tally["done" if status == 0 else "failed"] += 1
            if kind == "byte order" and seed.parent.name == "ascend_cube" and _simulates(flags):
                assert status == 0 and "PASS" in out, f"{what}: the other byte order changed the result: {err}"
            shutil.rmtree(directory)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    line = (f"fuzz qbmm: {FUZZ_CASES} cases ({tally['json']} JSON mutants, {tally['size']} sizes, {tally['grown']} "
            f"legal cases of other sizes, "
            f"{tally['array']} damaged arrays, {tally['byte order']} byte-order swaps, {tally['text']} text "
            f"mutants): {tally['done']} done (exit 0: PASS, or no expectation), {tally['failed']} FAIL (exit 1), "
            f"{tally['refused']} refused in one line, "
            f"0 other; {tally['built only']} built only (long programs), slowest {tally['slowest']:.1f} s (limit "
            f"{CASE_SECONDS} s), within {ADDRESS_SPACE_ROOM // 2**30} GiB of address space; {seconds:.1f} s "
            f"({cpu_seconds:.1f} s of CPU)")
    print("\n" + line)
    record_property("fuzz_qbmm", line)
    assert tally["done"] > FUZZ_CASES // 20 and tally["refused"] > FUZZ_CASES // 4
