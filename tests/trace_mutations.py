"""The bad-input properties' shared parts: what they draw to break a valid trace (any JSON value, and the
trace with the value at one of its paths replaced by it) and the rule every refusal keeps (one line),
for each ISA's parser and trace-reader property tests."""

from __future__ import annotations

import copy

from hypothesis import strategies as st

from isasim.core.errors import IsasimError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


def paths(value, prefix=()):
    """Every path into ``value`` (dict keys and list indices), the empty path first."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, prefix + (i,))


def replaced(valid: dict, path, replacement):
    """A copy of ``valid`` with the value at ``path`` replaced."""
    data = copy.deepcopy(valid)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = replacement
    return data


def only_documented_errors(fn, *args):
    """fn(*args), or None if it refused with an IsasimError, which must be one line."""
    try:
        return fn(*args)
    except IsasimError as error:
        text = str(error)
        assert text and "\n" not in text, f"error is not one line: {text!r}"
        return None
