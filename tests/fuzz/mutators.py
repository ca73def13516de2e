"""Seeded structure and text mutators for JSON documents, for fuzzing any reader of them.

Nothing here knows an ISA or the trace format: a mutant is a JSON document (dicts, lists,
strings, numbers, booleans, None) with a few random changes of the kinds a careless editor,
a truncated download or a hostile user makes:

* drop a key or a list element, duplicate one, rename a key (case, typo, unknown key);
* replace a value by one of another JSON type (object <-> list <-> string <-> number ...);
* numbers that are huge (far past 64 bits), negative, fractional, boolean, NaN or infinite;
* strings with markup brackets, control bytes, non-ASCII digits, huge digit runs, or cut short;
* values wrapped in deep nesting, or swapped with a value from elsewhere in the document;
* for text: truncation, byte edits, and splices of the same damage into the raw JSON.

Mutation copies only the containers on the path to the changed value (the rest is shared
with the seed), so a mutant of a large document costs about as much as one of a small one.
Readers must therefore not modify what they are given; the fuzz tests check that the seeds
are unchanged at the end.

The same seed gives the same sequence of mutants, so a failure names a reproducible case.
"""

from __future__ import annotations

import json
import random
from typing import Any

# Values that have broken readers before or that sit on a boundary: 64-bit edges, the host's
# int-to-string digit limit, IEEE specials, and text that a terminal or rich would interpret.
HOSTILE_NUMBERS: tuple[Any, ...] = (
    0, -1, 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1, 10**400, -(10**400), 10**4000,
    0.5, -0.0, 1e308, 1e-320, float("inf"), float("-inf"), float("nan"), True, False,
)
HOSTILE_STRINGS: tuple[str, ...] = (
    "", " ", "0x", "-0x", "0x1g", "1_0", "１２", "٣", "0x１f", "1e400", "-1e400", "inf", "nan", "NaN",
    "[/b]", "[red]x[/red]", "[bold", "]", "\0", "nop\0", "\x1b[31m", "\n", "\t", "é", "\ud7ff", "🙂",
    "9" * 5000, "0x" + "f" * 200, "#UD", "UD", "reg", "tile", "mem", "tmm0[0]", "rax", "int8", "fp32",
)
UNKNOWN_KEYS = ("extra", "Regs", "ADDR", "hex ", "", "\0", "[b]", "steps", "fault", "values", "shape")


class JsonMutator:
    """Random, reproducible damage to JSON documents (see the module docstring)."""

    def __init__(self, seed: int):
        self.random = random.Random(seed)

    # ---- structure ---------------------------------------------------------------------------------

    def mutate(self, document: Any, changes: int | None = None) -> Any:
        """A copy of ``document`` with 1-3 random changes (or ``changes``); the seed is never modified."""
        for _ in range(changes if changes is not None else self.random.choice((1, 1, 1, 2, 3))):
            document = self._mutate_once(document)
        return document

    def _mutate_once(self, document: Any) -> Any:
        path = self._random_path(document)
        return self._replace_at(document, path, lambda value, parent: self._damage(value, parent, document))

    def _random_path(self, document: Any) -> list:
        """A path (keys and indexes) to a random node; deeper nodes are as likely as shallow ones
        to be the target once reached, so both the top-level keys and the leaves get damaged."""
        path, node = [], document
        while isinstance(node, (dict, list)) and node and self.random.random() < 0.8:
            key = self.random.choice(list(node)) if isinstance(node, dict) else self.random.randrange(len(node))
            path.append(key)
            node = node[key]
        return path

    def _replace_at(self, node: Any, path: list, change) -> Any:
        """``node`` with the value at ``path`` replaced by ``change(value, parent)``, copying only the
        containers along the path.  ``change`` may return the parent container itself changed
        (drop, duplicate, rename) by returning a _ParentEdit."""
        if not path:
            result = change(node, None)
            return node if isinstance(result, _ParentEdit) else result
        copy = dict(node) if isinstance(node, dict) else list(node)
        key = path[0]
        if len(path) == 1:
            result = change(copy[key], copy)
            if isinstance(result, _ParentEdit):
                result.apply(copy, key)
            else:
                copy[key] = result
            return copy
        copy[key] = self._replace_at(copy[key], path[1:], change)
        return copy

    def _damage(self, value: Any, parent: Any, document: Any) -> Any:
        choice = self.random.random()
        if parent is not None and choice < 0.15:
            return _ParentEdit(self.random.choice(("drop", "duplicate", "rename")), self)
        if choice < 0.40:
            return self._other_type(value)
        if choice < 0.60:
            return self.random.choice(HOSTILE_NUMBERS)
        if choice < 0.75:
            return self._hostile_string(value)
        if choice < 0.82:
            return self._nested(value, self.random.choice((2, 10, 60)))
        if choice < 0.90:
            return self._value_from(document)
        if isinstance(value, str):
            return value[: self.random.randrange(len(value) + 1)]  # cut short
        if isinstance(value, list) and value:
            return value[: self.random.randrange(len(value))]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self._number_near(value)
        return self._other_type(value)

    def _number_near(self, value: int | float) -> Any:
        """A number derived from ``value``: negated, scaled far past 64 bits, made fractional, or quoted."""
        how = self.random.randrange(4)
        if how == 0:
            return -value
        if how == 1:
            return value * 2 ** self.random.choice((8, 64, 1000)) if isinstance(value, int) else value * 1e300
        if how == 2:
            return value + 0.5 if isinstance(value, float) or abs(value) < 2**1000 else value + 1
        return safe_text(value)

    def _other_type(self, value: Any) -> Any:
        options = [{}, [], "", 0, 1.5, True, None, {"x": value}, [value], safe_text(value)[:64],
                   {"kind": value, "where": value}]
        options = [o for o in options if type(o) is not type(value)]
        return self.random.choice(options)

    def _hostile_string(self, value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(value)[:64] if _dumpable(value) else ""
        pick = self.random.choice(HOSTILE_STRINGS)
        where = self.random.random()
        if where < 0.4:
            return pick
        position = self.random.randrange(len(text) + 1)
        return text[:position] + pick + text[position:]

    @staticmethod
    def _nested(value: Any, depth: int) -> Any:
        for _ in range(depth):
            value = [value]
        return value

    def _value_from(self, document: Any) -> Any:
        node = document
        for key in self._random_path(document):
            node = node[key]
        return node

    # ---- text ---------------------------------------------------------------------------------------

    def mutate_text(self, text: str) -> str:
        """``text`` (usually serialised JSON) cut short, edited byte-wise, or with hostile text
        spliced in."""
        choice = self.random.random()
        position = self.random.randrange(len(text) + 1)
        if choice < 0.3:
            return text[:position]
        if choice < 0.5:
            junk = self.random.choice(("\0", "\ufeff", "{", "}", "[", "]", ",", ":", '"', "\\", "\\u", "1e400",
                                       "9" * 5000, "[" * 100000, "-", "NaN", "Infinity", "\udcff"))
            return text[:position] + junk + text[position:]
        if choice < 0.7 and text:
            end = min(len(text), position + self.random.randrange(1, 16))
            return text[:position] + text[end:]
        if choice < 0.85 and text:
            flipped = chr(self.random.randrange(0, 0x80)) if self.random.random() < 0.8 else chr(
                self.random.randrange(0x80, 0x3000))
            return text[:position] + flipped + text[position + 1:]
        return json.dumps(self.mutate(_loads_or(text)), ensure_ascii=self.random.random() < 0.5) if _dumpable(
            _loads_or(text)) else text[::-1]


class _ParentEdit:
    """A change to the container holding a value rather than to the value itself."""

    def __init__(self, kind: str, mutator: JsonMutator):
        self.kind, self.mutator = kind, mutator

    def apply(self, container, key) -> None:
        rand = self.mutator.random
        if isinstance(container, dict):
            if self.kind == "drop":
                del container[key]
            elif self.kind == "duplicate":
                container[rand.choice(UNKNOWN_KEYS)] = container[key]
            else:
                value = container.pop(key)
                container[rand.choice((key.upper(), key + "_", key[:-1], rand.choice(UNKNOWN_KEYS)))] = value
        else:
            if self.kind == "drop":
                del container[key]
            elif self.kind == "duplicate":
                container.insert(key, container[key])
            else:  # a list's "rename" is a reorder
                rand.shuffle(container)


def safe_text(value: Any) -> str:
    """str(value), or for an integer past the host's digit limit (str() refuses it) a 5,000-digit string."""
    try:
        return str(value)
    except ValueError:
        return "9" * 5000


def _dumpable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError, RecursionError):
        return False


def _loads_or(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text
