"""RFC 8785 (JCS) canonicalisation, checked against the RFC's own examples."""

from __future__ import annotations

import json
import math
import struct
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.submission import canonical
from diskq.submission.canonical import CanonicalError, canonicalize, canonicalize_plain, es_number

# RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


def _double(hex_bits: str) -> float:
    return struct.unpack(">d", bytes.fromhex(hex_bits))[0]


@pytest.mark.parametrize("bits, text", APPENDIX_B)
def test_appendix_b_numbers(bits, text):
    assert es_number(_double(bits)) == text


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000", "fff0000000000000"])
def test_nan_and_infinity_are_refused(bits):
    with pytest.raises(CanonicalError):
        canonicalize([_double(bits)])


def test_section_3_2_2_example():
    # The input of RFC 8785 section 3.2.2, parsed by an ordinary JSON parser ...
    source = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    # ... and the output the RFC gives for it.
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonicalize(json.loads(source)) == expected.encode("utf-8")


def test_section_3_2_3_sorting_example():
    # RFC 8785 section 3.2.3: names are sorted by UTF-16 code units, not by code points.
    source = (
        '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh",'
        ' "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control",'
        ' "\\u00f6": "Latin Small Letter O With Diaeresis"}'
    )
    out = json.loads(canonicalize(json.loads(source)))
    assert list(out.values()) == [
        "Carriage Return",
        "One",
        "Control",
        "Latin Small Letter O With Diaeresis",
        "Euro Sign",
        "Emoji: Grinning Face",
        "Hebrew Letter Dalet With Dagesh",
    ]


def test_integers_beyond_2_53_are_written_as_doubles():
    assert canonicalize([2**68]) == b"[295147905179352830000]"
    with pytest.raises(CanonicalError):
        canonicalize([10**400])


def test_lone_surrogate_and_non_json_types_are_refused():
    with pytest.raises(CanonicalError):
        canonicalize({"a": "\ud800"})
    with pytest.raises(CanonicalError):
        canonicalize({1: "x"})
    with pytest.raises(CanonicalError):
        canonicalize({"a": {1, 2}})


def test_depth_limit_is_an_error_not_a_crash():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(CanonicalError):
        canonicalize(deep)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=30,
)


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return isinstance(b, (int, float)) and float(a) == float(b)
    return a == b


@given(json_values)
def test_canonical_form_round_trips_and_is_a_fixed_point(value):
    # Surrogates are not valid in I-JSON; text() may produce them.
    try:
        out = canonicalize(value)
    except CanonicalError:
        return
    again = json.loads(out)
    assert _same(value, again)
    assert canonicalize(again) == out
    assert b" " not in out.replace(b'\\"', b"").split(b'"')[0]  # no whitespace before the first string


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_number_text_reads_back_as_the_same_double(x):
    text = es_number(x)
    assert float(text) == x or (x == 0 and float(text) == 0)
    assert not text.endswith(".0") and "e+0" not in text and "e-0" not in text
    if x != 0 and 1e-6 <= abs(x) < 1e21:
        assert "e" not in text
    if math.copysign(1, x) < 0 and x == 0:
        assert text == "0"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_fast_float_layout_equals_the_general_one(x):
    assert canonicalize([x]) == f"[{es_number(x)}]".encode()
    assert canonicalize({"k": x}) == f'{{"k":{es_number(x)}}}'.encode()


# Anything at all, JSON or not: every number, every string (lone surrogates too), names that are
# not strings, types that are not JSON; objects share tuples of names, as fio steps do.
_any_scalar = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.sampled_from([2**53 + 1, -(2**1024), 10**400, 1e21, 1e-7, -0.0, "\ud800", "\U0001f600", "\ue000"])
    | st.builds(set)
)
_names = st.lists(st.text(max_size=3) | st.sampled_from(["\ud83d\ude00", "\ufb33", "\u20ac", "\r"]), max_size=6)


@st.composite
def _records(draw, children):
    """Objects with the same names, in any member order, with any values."""
    names = draw(_names)
    out = []
    for _ in range(draw(st.integers(1, 3))):
        order = draw(st.permutations(names))
        out.append({name: draw(children) for name in order})
    return out


anything = st.recursive(
    _any_scalar,
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=3), children, max_size=4)
        | st.dictionaries(st.integers(), children, min_size=1, max_size=2)
        | _records(children)
    ),
    max_leaves=25,
)


def _outcome(writer, value):
    try:
        return writer(value)
    except CanonicalError as exc:
        return ("error", str(exc))


@given(anything)
def test_fast_writer_equals_the_plain_one_on_anything(value):
    assert _outcome(canonicalize, value) == _outcome(canonicalize_plain, value)


@given(st.lists(_records(_any_scalar) | st.dictionaries(st.text(max_size=2), _any_scalar, max_size=4), max_size=6))
def test_fast_writer_equals_the_plain_one_when_its_layout_memory_is_full(value):
    with mock.patch.object(canonical, "_LAYOUTS", {}), mock.patch.object(canonical, "LAYOUTS_KEPT", 1):
        assert _outcome(canonicalize, value) == _outcome(canonicalize_plain, value)


def test_fast_writer_equals_the_plain_one_at_the_depth_limit():
    for depth in (canonical.MAX_DEPTH - 1, canonical.MAX_DEPTH, canonical.MAX_DEPTH + 1):
        value: object = {"x": 1.0}
        for i in range(depth):
            value = [value] if i % 2 else {"k": value, "n": None}
        assert _outcome(canonicalize, value) == _outcome(canonicalize_plain, value)


def test_real_fio_output_is_written_the_same_way(fixtures):
    for path in sorted((fixtures / "fio_json").glob("*.json")):
        data = json.loads(path.read_text())
        assert canonicalize(data) == canonicalize(data) == canonicalize_plain(data)
