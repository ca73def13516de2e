"""Structure-aware fuzzing of the Ascend cube's text: the parser, and ``isasim explain`` on what it parses.

Lines are generated from every form's declared parameters (isasim.ascend_cube.forms: each Param's kind,
range, choices and default): values on and past each declared edge, buffer offsets aligned and not, at
and past each buffer's end and near 2^64, every number spelled in one of C++'s ways (decimal, 0x, 0X,
0b, ' separators, u/l suffixes).  Then mutated, in ways aimed at the number reader and the call syntax:

* numbers: a leading zero (octal), 5,000 digits, 2^63 / 2^64 edges, a sign, non-ASCII digits, misplaced
  separators, unknown suffixes, floating spellings;
* names: a parameter or call misspelt, in another case, unknown, left out, given twice;
* brackets and parentheses dropped, doubled or nested; hostile characters (NUL, U+2028, NEL, vertical tab,
  ESC, a no-break space) spliced in; the line cut short.

The properties:

* parser: every text gives a Program or an IsasimError whose message is one printable line, never another
  exception; a generated line whose values are all in range is accepted with exactly those values, however
  its numbers are spelled; what is accepted prints and parses back to the same instruction;
* explain: every line gives an Explanation or an IsasimError, each within CASE_SECONDS (an alarm fails the
  test naming the case, so a hang cannot pass), and a line ``isasim run`` faults on its parameters (on no
  data) is explained as that fault.

Seeded; the counts are printed (``-s``).  ISASIM_FUZZ_INPUTS scales both (default: the parser 100,000
texts, explain 1 in 25 of them, most of those with small values so that they run).
"""

from __future__ import annotations

import os
import random
import time

import pytest

from isasim.ascend_cube import ISA
from isasim.ascend_cube.config import ALIGNMENT, CHIPS
from isasim.ascend_cube.explain import EXPLAINER
from isasim.ascend_cube.forms import FORMS, LOCATION_KINDS
from isasim.core.errors import IsasimError
from isasim.core.explain import ExplainOptions, Table
from isasim.core.machine import Machine

from .limits import Hang, time_limit

FUZZ_INPUTS = int(os.environ.get("ISASIM_FUZZ_INPUTS", "100000"))
EXPLAIN_SHARE = 25  # one explained line in this many parsed
SEED = 25
CASE_SECONDS = 10  # an explain that takes longer fails the test: no case may hang
PARAMETER_FAULTS = ("BUFFER_OVERFLOW", "ALIGNMENT", "PARAM_RANGE", "UNSUPPORTED")
BUFFER_BYTES = max(chip.buffers["L1"] for chip in CHIPS.values())

HOSTILE_NUMBERS = ("016", "00", "08", "0'17", "1" + "0" * 5000, "9" * 30, str(1 << 63), str((1 << 64) - 1),
                   str(1 << 64), hex(1 << 64), "0x" + "f" * 17, "-1", "+1", "-0", "\u0661\u0666", "\uff11\uff16",
                   "1\u0660", "1''0", "'1", "1'", "0x'1", "0x", "0b", "0b2", "1z", "16uu", "16lL", "1e3", "1.0",
                   "1_000", "", " ", "0x1g", "\u00a016", "16\u2028")
HOSTILE_TEXT = ("\0", "\x1b[2J", "\u2028", "\x85", "\x0b", "\x0c", "\r", "\t", "\u00a0", "\u3000", "é", "🙂", "[",
                "]", "[[", "]]", "(", ")", "()", ",", ",,", "=", "==", "#", "//", ":", "'", '"', "\\", "L1[", "GM[")


def _spell(value: int, rng: random.Random) -> str:
    """``value`` as C++ may spell it (every spelling reads back as ``value``)."""
    how = rng.randrange(8)
    if how == 1:
        text = hex(value)
    elif how == 2:
        text = "0X" + format(value, "X")
    elif how == 3 and value < 1 << 20:
        text = bin(value)
    elif how == 4:
        digits = str(value)
        text = ",".join(digits[max(0, i - 3):i] for i in range(len(digits), 0, -3)[::-1]).replace(",", "'")
    else:
        text = str(value)
    suffix = rng.choice(("", "", "", "u", "U", "ul", "ULL", "l", "LL"))
    if not text.startswith("0") or text == "0" or text[:2].lower() in ("0x", "0b"):
        if value > (1 << 63) - 1 and not text.lower().startswith(("0x", "0b")):
            suffix = "u"  # a decimal above 2^63 - 1 is only C++ with a u suffix
        return text + suffix
    return text


def _int_value(lo: int, hi: int, rng: random.Random, in_range: bool, modest: bool) -> int:
    if modest:  # small values, so that most instructions fit their buffers and run
        return rng.randint(lo, min(hi, max(lo, 1) * rng.choice((1, 2, 16, 32))))
    if in_range:
        return rng.choice((lo, hi, min(hi, lo + 1), rng.randint(lo, min(hi, lo + 64)), rng.randint(lo, hi)))
    return rng.choice((hi + 1, hi + rng.randint(1, 1 << 20), (1 << 64) - 1, 1 << 63))


def _offset(buffer: str, rng: random.Random, modest: bool) -> int:
    if buffer == "GM":
        return rng.choice((0x100000, 0x200000) if modest else
                          (0x100000, 0x200000, rng.randrange(1 << 32), (1 << 64) - 1, (1 << 64) - 4096, 0))
    unit = ALIGNMENT[buffer]
    if modest:
        return unit * rng.randrange(4)
    size = BUFFER_BYTES if buffer == "L1" else 256 * 1024
    return rng.choice((0, unit, unit * rng.randrange(size // unit + 2), rng.randrange(size), size - unit,
                       (1 << 64) - unit * 4, 1 << 63))


def generated_line(rng: random.Random, modest: bool = False) -> tuple[str, object, dict | None]:
    """(text, form, the values it was given if all are in range, else None); ``modest``: small values."""
    form = rng.choice(list(FORMS))
    values, exact = {}, True
    for p in form.params:
        if not p.required and p.name != form.marker and rng.random() < 0.3:
            continue  # left to its default (never the parameter that tells the form from the call's others)
        if p.kind in LOCATION_KINDS:
            values[p.name] = _offset(p.kind, rng, modest)
        elif p.kind == "int":
            in_range = modest or rng.random() < 0.85
            exact &= in_range
            values[p.name] = _int_value(p.lo, p.hi, rng, in_range, modest)
        elif p.kind == "bool":
            values[p.name] = rng.random() < 0.5
        else:
            values[p.name] = rng.choice(p.choices)
    parts = []
    for name in rng.sample(list(values), len(values)):  # any order
        p = next(q for q in form.params if q.name == name)
        value = values[name]
        if p.kind in LOCATION_KINDS:
            text = f"{p.kind}[{_spell(value, rng)}]"
        elif p.kind == "int":
            text = _spell(value, rng)
        elif p.kind == "bool":
            text = "true" if value else "false"
        else:
            text = value
        parts.append(f"{name}={text}")
    return f"{form.name}({', '.join(parts)})", form, values if exact else None


class LineMutator:
    """Damage aimed at the number reader and the call syntax (see the module docstring)."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def mutate(self, text: str) -> str:
        for _ in range(self.rng.choice((1, 1, 1, 2, 3))):
            text = self._once(text)
        return text

    def _once(self, text: str) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.3:
            return self._value(text, rng.choice(HOSTILE_NUMBERS))
        if roll < 0.45:
            return self._name(text)
        if roll < 0.55:
            return self._parameters(text)
        at = rng.randrange(len(text) + 1)
        if roll < 0.75:
            return text[:at] + rng.choice(HOSTILE_TEXT) + text[at:]
        if roll < 0.85:
            return text[:at]
        if roll < 0.93 and text:
            end = min(len(text), at + rng.randint(1, 6))
            return text[:at] + text[end:]
        return text[:at] + chr(rng.randrange(0x80, 0x3000)) + text[at:]

    def _value(self, text: str, replacement: str) -> str:
        """One parameter's value (or a location's offset) replaced."""
        head, paren, body = text.partition("(")
        items = body.rstrip(")").split(",") if paren else []
        if not items:
            return text + replacement
        i = self.rng.randrange(len(items))
        key, eq, value = items[i].partition("=")
        if "[" in value and self.rng.random() < 0.7:
            buffer = value.split("[")[0]
            value = f"{buffer}[{replacement}]"
        else:
            value = replacement
        items[i] = f"{key}{eq}{value}"
        return f"{head}{paren}{','.join(items)})"

    def _name(self, text: str) -> str:
        rng = self.rng
        head, paren, body = text.partition("(")
        if rng.random() < 0.3 or not body:
            head = rng.choice((head.upper(), head.lower(), head[:-1], head + "x", "Mmad2", "", "DataCopyPad"))
            return f"{head}{paren}{body}"
        items = body.rstrip(")").split(",")
        i = rng.randrange(len(items))
        key, eq, value = items[i].partition("=")
        key = rng.choice((key.upper(), key.strip()[:-1], key + "_", " unknownParam", " " + "k" * 300, " m", " dst"))
        items[i] = f"{key}{eq}{value}"
        return f"{head}({','.join(items)})"

    def _parameters(self, text: str) -> str:
        rng = self.rng
        head, paren, body = text.partition("(")
        items = [item for item in body.rstrip(")").split(",") if item.strip()] if paren else []
        if not items:
            return text + "(" * rng.randint(0, 2)
        how = rng.randrange(4)
        if how == 0:
            del items[rng.randrange(len(items))]  # missing (maybe required)
        elif how == 1:
            items.append(rng.choice(items))  # given twice
        elif how == 2:
            items.insert(rng.randrange(len(items) + 1), rng.choice((" foo=1", " =1", " m=", " m", " m==1", "")))
        else:
            return head + rng.choice(("", "(", "((", "[")) + ",".join(items) + rng.choice(("", ")", "))", "]"))
        return f"{head}({','.join(items)})"


def _check_message(case: int, text: str, error: IsasimError) -> None:
    message = str(error)
    assert "\n" not in message and message.isprintable() and len(message) < 1000, \
        f"case {case}: message {message[:300]!r} for {text[:300]!r}"


def _parse(case: int, text: str, tally: dict):
    try:
        program = ISA.assemble(text, source="<fuzz>")
    except IsasimError as error:
        _check_message(case, text, error)
        tally["rejected"] += 1
        return None
    except BaseException as error:  # noqa: BLE001 - exactly what the property forbids
        raise AssertionError(f"case {case}: {type(error).__name__}: {error} for {text[:2000]!r}") from error
    tally["accepted"] += 1
    for ins in program.instructions:  # the printer's text parses back to the same instruction
        again = ISA.assemble(ins.text).instructions[0]
        assert (again.form, again.operands) == (ins.form, ins.operands), f"case {case}: {ins.text!r}"
    return program


def _parameter_fault(text: str, chip: str):
    """The fault ``isasim run`` raises on the line with no data and no GM, if it is one of its parameters."""
    machine = Machine("ascend_cube", {"chip": chip})
    machine.load(machine.assemble(text), regs={}, memory=[])
    fault = machine.run(max_steps=2).fault
    return fault if fault is not None and fault.kind in PARAMETER_FAULTS else None


def _explain(case: int, text: str, chip: str, tally: dict) -> None:
    started = time.perf_counter()
    try:
        with time_limit(CASE_SECONDS, f"case {case}: explain of {text[:300]!r}"):
            explanation = EXPLAINER.explain(text, None, ExplainOptions(seed=case, config={"chip": chip}))
    except IsasimError as error:
        _check_message(case, text, error)
        tally["explain refused"] += 1
        return
    except Hang:
        raise
    except BaseException as error:  # noqa: BLE001
        raise AssertionError(f"case {case}: {type(error).__name__}: {error} explaining {text[:2000]!r}") from error
    finally:
        tally["slowest"] = max(tally["slowest"], time.perf_counter() - started)
    faults = [block.rows[0] for section in explanation.sections for block in section.blocks
              if isinstance(block, Table) and block.columns == ["fault", "rule"]]
    expected = _parameter_fault(text, dict(explanation.facts)["chip"])  # the chip it ran on: a form the given
    # chip lacks is explained on one that has it
    if expected is not None:  # explain faults as run does, with the same fault
        shown = [str(getattr(cell, "text", cell)) for cell in faults[0]] if faults else None
        assert shown == [expected.kind, expected.rule], f"case {case}: {text!r}: explain {shown}, run {expected}"
    tally["explained, faulting" if faults else "explained"] += 1
    if not faults:
        assert all(check.equal for check in explanation.checks), f"case {case}: {text!r}"


def test_ascend_parser_and_explain_answer_every_line(record_property):
    rng = random.Random(SEED)
    mutator = LineMutator(rng)
    tally = {"generated": 0, "mutated": 0, "accepted": 0, "rejected": 0, "exact values": 0, "explained": 0,
             "explained, faulting": 0, "explain refused": 0, "slowest": 0.0}
    started, cpu_started = time.perf_counter(), time.process_time()
    for case in range(FUZZ_INPUTS):
        explained = case % EXPLAIN_SHARE == 0
        text, form, values = generated_line(rng, modest=explained and rng.random() < 0.6)
        mutated = rng.random() < (0.2 if explained else 0.6)
        if mutated:
            text, values = mutator.mutate(text), None
        tally["mutated" if mutated else "generated"] += 1
        program = _parse(case, text, tally)
        if program is not None and values is not None:  # in range, spelt any C++ way: exactly those values
            ins = program.instructions[0]
            given = dict(zip(ins.form.operand_names, ins.operands))
            assert all(given[name] == value for name, value in values.items()), f"case {case}: {text!r}"
            tally["exact values"] += 1
        if explained:
            _explain(case, text, rng.choice(list(CHIPS)), tally)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    line = (f"fuzz ascend: {FUZZ_INPUTS} lines ({tally['generated']} generated, {tally['mutated']} mutated): "
            f"{tally['accepted']} parsed ({tally['exact values']} checked value by value), {tally['rejected']} "
            f"rejected with a typed error, 0 other; explain of {FUZZ_INPUTS // EXPLAIN_SHARE + 1}: "
            f"{tally['explained']} worked, {tally['explained, faulting']} faulting as run faults, "
            f"{tally['explain refused']} refused, 0 other, slowest {tally['slowest']:.2f} s (limit {CASE_SECONDS} s); "
            f"{seconds:.1f} s ({cpu_seconds:.1f} s of CPU)")
    print("\n" + line)
    record_property("fuzz_ascend", line)
    assert tally["exact values"] > FUZZ_INPUTS // 20 and tally["explained"] > 0


@pytest.mark.parametrize("seed", range(3))
def test_every_forms_generated_lines_parse_to_their_values(seed):
    """The generator itself: for each form, in-range lines parse to the values they were given."""
    rng = random.Random(seed)
    seen = set()
    for _ in range(2000):
        text, form, values = generated_line(rng)
        if values is None:
            continue
        ins = ISA.assemble(text).instructions[0]
        given = dict(zip(ins.form.operand_names, ins.operands))
        assert ins.form is form and all(given[k] == v for k, v in values.items()), text
        seen.add(form.id)
    assert seen == {form.id for form in FORMS}
