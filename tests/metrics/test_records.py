"""metrics/records.py: records as a DataFrame typed by what each column holds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rpdi.metrics.records import records_frame


def test_each_kind_of_column_gets_its_type():
    records = [
        {"run": "a", "topic": "1", "value": 0.5, "residual": None, "users": 10, "significant": True,
         "z": None, "flag": None, "counterexamples": {"x": 1}, "mixed": "x"},
        {"run": "b", "topic": "all", "value": 1, "residual": 0.25, "users": 20, "significant": False,
         "z": 2, "flag": True, "counterexamples": {}, "mixed": 1.5},
    ]
    frame = records_frame(records)
    assert list(frame.columns) == list(records[0])  # the records' keys, in their order
    assert frame.dtypes.astype(str).to_dict() == {
        "run": "category", "topic": "category", "value": "float64", "residual": "float64", "users": "int64",
        "significant": "bool", "z": "float64", "flag": "boolean", "counterexamples": "object", "mixed": "object"}
    assert np.isnan(frame["residual"][0]) and frame["residual"][1] == 0.25
    assert frame["run"].tolist() == ["a", "b"] and frame["flag"].isna().tolist() == [True, False]


def test_records_from_an_iterator():
    assert records_frame(iter([{"run": "a", "value": 1.0}])).equals(
        pd.DataFrame({"run": pd.Categorical(["a"]), "value": [1.0]}))
