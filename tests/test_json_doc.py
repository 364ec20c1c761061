"""parse_json: msgspec's speed with the standard library's exact results.

Each document msgspec refuses or could read differently from ``json.loads`` must come back as
``json.loads`` reads it (or fail with its error); the sample traces must parse
to the same values either way, and a trace with such a value must load as it
did with the standard library alone.
"""

from __future__ import annotations

import gzip
import json
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfprof_shell.load import json_doc
from tfprof_shell.load.json_doc import parse_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "sample_profiles")


def same(a, b) -> bool:
    """Equal values of equal types all the way down (NaN equal to NaN, -0.0 not 0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


def outcome(parse, data):
    try:
        return ("value", parse(data))
    except (ValueError, RecursionError) as exc:
        return ("error", type(exc).__name__, str(exc))


def assert_like_stdlib(data) -> None:
    ours, theirs = outcome(parse_json, data), outcome(json.loads, data)
    assert ours[0] == theirs[0], (data[:80], ours, theirs)
    if ours[0] == "value":
        assert same(ours[1], theirs[1]), (data[:80], ours[1], theirs[1])
    else:
        assert ours[1:] == theirs[1:]


# Each case is a document a fast parser may refuse or read otherwise.
EDGE_CASES = {
    "nan": b'{"dur": NaN}',
    "infinity": b'{"args": {"bandwidth": Infinity, "low": -Infinity}}',
    "beyond_float": b'[1e400, -1e400]',
    "big_int": b'{"id": 18446744073709551616}',
    "big_negative_int": b'{"id": -9223372036854775809}',
    "big_int_in_string": b'{"name": "18446744073709551616"}',
    "largest_64_bit": b'[18446744073709551615, -9223372036854775808]',
    "duplicate_keys": b'{"ph": "X", "ts": 1, "ph": "B"}',
    "lone_surrogate": b'{"name": "\\ud800"}',
    "surrogate_pair": b'{"name": "\\ud83d\\ude00"}',
    "invalid_utf8": b'{"name": "\xff"}',
    "byte_order_mark": b'\xef\xbb\xbf{"traceEvents": []}',
    "utf16": '{"traceEvents": []}'.encode("utf-16"),
    "deep": b"[" * 5000 + b"]" * 5000,
    "truncated": b'{"traceEvents": [{"ph": "X"',
    "control_character": b'["a\tb"]',
    "empty": b"",
}


@pytest.mark.parametrize("name", sorted(set(EDGE_CASES) - {"deep"}))
def test_edge_case_reads_as_the_standard_library(name):
    assert_like_stdlib(EDGE_CASES[name])


def test_deep_nesting():
    """json.loads's depth limit is the interpreter's recursion limit less the caller's
    stack, msgspec's its own: a value is the same value, a failure the standard library's
    error."""
    data = EDGE_CASES["deep"]
    ours = outcome(parse_json, data)
    if ours[0] == "value":
        depth, value = 0, ours[1]
        while value == [value[0]] if isinstance(value, list) and value else False:
            depth, value = depth + 1, value[0]
        assert value == [] and depth == 4999
    else:
        assert ours[1:] == outcome(json.loads, data)[1:]


@pytest.mark.parametrize("name", ["lone_surrogate", "nan", "big_int", "duplicate_keys"])
def test_str_input_reads_as_the_standard_library(name):
    assert_like_stdlib(EDGE_CASES[name].decode("utf-8"))


def test_standard_library_alone(monkeypatch):
    """Without msgspec (an interpreter it has no wheel for) the same values come back."""
    monkeypatch.setattr(json_doc, "_decode", None)
    for data in EDGE_CASES.values():
        assert_like_stdlib(data)


def test_fast_decoder_reads_plain_documents(monkeypatch):
    """With msgspec installed, a plain trace never reaches the standard library."""
    if json_doc._decode is None:
        pytest.skip("msgspec is not installed")

    def refuse(data):
        raise AssertionError("json.loads called")

    monkeypatch.setattr(json_doc.json, "loads", refuse)
    doc = parse_json(b'{"traceEvents": [{"ph": "X", "ts": 1.5, "id": 18446744073709551616}]}')
    assert doc == {"traceEvents": [{"ph": "X", "ts": 1.5, "id": 18446744073709551616}]}


def sample_traces():
    for folder, _, names in sorted(os.walk(SAMPLES)):
        for name in sorted(names):
            if name.endswith((".json", ".json.gz")):
                yield os.path.join(folder, name)


def test_sample_traces_parse_to_the_same_values():
    paths = list(sample_traces())
    assert len(paths) >= 10
    for path in paths:
        with open(path, "rb") as fh:
            data = fh.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        assert same(parse_json(data), json.loads(data)), path


def test_trace_with_non_standard_values_loads_as_before(tmp_path):
    """A PyTorch trace with NaN, Infinity and a 70-bit id in an op's arguments loads, and
    gives the table of the trace without them."""
    from tfprof_shell import cli
    src = os.path.join(SAMPLES, "torch_ranks")
    name = sorted(n for n in os.listdir(src) if n.endswith((".json", ".json.gz")))[0]
    with open(os.path.join(src, name), "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data)
    events = doc["traceEvents"]
    op = next(e for e in events if e.get("cat") == "cpu_op")
    op.setdefault("args", {})["ratio"] = float("nan")
    op["args"]["bandwidth"] = float("inf")
    op["args"]["seq"] = 2 ** 70
    path = tmp_path / "rank0.pt.trace.json"
    path.write_text(json.dumps(doc))

    def table(trace: str) -> str:
        out, err = _Capture(), _Capture()
        code = cli.main(["--profile_path=%s" % trace, "op", "-select", "micros,occurrence"],
                        stdout=out, stderr=err)
        assert code == 0, err.getvalue()
        return out.getvalue()

    # The added arguments change nothing the table shows.
    edited = table(str(path))
    assert "Profile:" in edited and edited.count("\n") > 20
    assert edited == table(os.path.join(src, name))


class _Capture:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def getvalue(self) -> str:
        return "".join(self.parts)


json_text = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(min_value=-(2 ** 80), max_value=2 ** 80) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=12,
).map(json.dumps)


@settings(max_examples=300, deadline=None)
@given(json_text)
def test_any_document_json_dumps_writes(text):
    assert_like_stdlib(text.encode("utf-8", "surrogatepass"))


number = st.from_regex(r"\A-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][-+]?[0-9]{1,3})?\Z")


@settings(max_examples=500, deadline=None)
@given(st.lists(number, min_size=1, max_size=5))
def test_numbers_read_exactly(numbers):
    assert_like_stdlib(("[%s]" % ",".join(numbers)).encode())


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40))
def test_arbitrary_bytes(data):
    assert_like_stdlib(b'{"a":' + data + b"}")
