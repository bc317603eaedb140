"""metrics/records.py: records as a DataFrame whose columns are typed by their field."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import rpdi
from rpdi.metrics.records import FIELDS, records_frame

RECORDS = [
    {"run": "a", "topic": "1", "value": 0.5, "residual": None, "users": 10, "significant": True,
     "z": None, "flag": None, "counterexamples": {"x": 1}, "mixed": "x", "count": 3},
    {"run": "b", "topic": "all", "value": 1, "residual": 0.25, "users": 20, "significant": False,
     "z": 2, "flag": True, "counterexamples": {}, "mixed": 1.5, "count": None},
]
DTYPES = {"run": "string", "topic": "string", "value": "float64", "residual": "float64", "users": "Int64",
          "significant": "boolean", "z": "float64", "flag": "boolean", "counterexamples": "object",
          "mixed": "object", "count": "Int64"}


def dtypes(frame) -> dict:
    return frame.dtypes.astype(str).to_dict()


def test_each_field_gets_its_type():
    """rpdi's fields by FIELDS (z, a number, stays float64 though one value is a whole number);
    other fields (flag, mixed, count) by the kind of their values, missing ones aside."""
    assert FIELDS["z"] == "float64" and "flag" not in FIELDS and "count" not in FIELDS
    frame = records_frame(RECORDS)
    assert list(frame.columns) == list(RECORDS[0])  # the records' keys, in their order
    assert dtypes(frame) == DTYPES
    assert np.isnan(frame["residual"][0]) and frame["residual"][1] == 0.25
    assert frame["run"].tolist() == ["a", "b"] and frame["flag"].isna().tolist() == [True, False]
    assert frame["count"].isna().tolist() == [False, True] and frame["count"][0] == 3
    assert frame["z"].tolist()[1] == 2.0 and frame["users"].tolist() == [10, 20]


def test_dtypes_do_not_depend_on_missing_values_and_survive_concatenation():
    """The same fields, every value given or some missing (None), give the same dtypes, and the
    two frames (with other ids: categories would differ) concatenate keeping them."""
    full = records_frame([{**r, "residual": 0.5, "z": 1.5, "flag": False, "count": 4, "run": "c" + r["run"],
                           "mixed": "y"} for r in RECORDS])
    gaps = records_frame([{**r, "run": None, "value": None, "users": None, "significant": None, "mixed": m}
                          for r, m in zip(RECORDS, (None, "z"))])
    assert dtypes(full) == dtypes(gaps) == DTYPES | {"mixed": "string"}
    both = pd.concat([full, gaps], ignore_index=True)
    assert dtypes(both) == dtypes(full)
    assert both["run"].tolist()[:2] == ["ca", "cb"] and both["run"].isna().tolist() == [False, False, True, True]
    assert both["users"].isna().sum() == 2 and both["value"].isna().sum() == 2


def test_an_unknown_field_of_none_only_is_float64():
    assert dtypes(records_frame([{"extra": None}, {"extra": None}])) == {"extra": "float64"}


def test_records_from_an_iterator():
    assert records_frame(iter([{"run": "a", "value": 1.0}])).equals(
        pd.DataFrame({"run": pd.array(["a"], dtype="string"), "value": [1.0]}))


QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 0}}  # q2: nothing relevant, nDCG undefined
RUNS = {"s1": {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}, "s2": {"q1": {"b": 2.0, "a": 1.0}, "q2": {"c": 1.0}}}


@pytest.mark.parametrize("call", [
    lambda runs, undefined: rpdi.evaluate(QRELS, runs, ["nDCG@2", "P@1"], per_topic=True, undefined=undefined,
                                          as_frame=True),
    lambda runs, undefined: rpdi.compare(QRELS, {**runs, "s3": RUNS["s2"]}, ["nDCG@2"], as_frame=True),
], ids=["evaluate", "compare"])
def test_frames_of_two_calls_concatenate_keeping_their_dtypes(call):
    """Calls on other runs, with undefined values as None (NaN) or as 0: the same dtypes, kept
    when the frames are concatenated (category columns lost theirs)."""
    one = call({"s1": RUNS["s1"]}, "null")
    other = call({"s2": RUNS["s2"]}, "zero")
    assert dtypes(one) == dtypes(other)
    both = pd.concat([one, other], ignore_index=True)
    assert dtypes(both) == dtypes(one) and len(both) == len(one) + len(other)
    assert "category" not in dtypes(both).values() and "object" not in dtypes(both).values()
