"""The users' results that are not records, as pandas DataFrames with typed columns, fixed as
:func:`metrics.records.records_frame` fixes them (ids as ``string``, values as ``float64``,
whatever the values, so that frames concatenate keeping their dtypes): exact expectations
(:func:`usermodels.exact.exact`) and fitted click models (:func:`usermodels.clickfit.fit`).
Records (evaluate, simulate, compare, ...) are framed by :func:`metrics.records.records_frame`.

>>> import rpdi
>>> from rpdi.metrics import build_rankings, load_qrels, load_runs
>>> rankings = build_rankings(load_qrels({"q1": {"a": 1, "b": 0}}), load_runs({"s": {"q1": {"a": 2.0, "b": 1.0}}}))
>>> frame = expectations_frame(rpdi.exact(rpdi.model_for("RBP(p=0.8)"), rankings), rankings)
>>> frame.query("aggregation == 'rate'")[["run", "topic", "value"]].round(9).to_dict("records")  # RBP = (1 - p) * 1
[{'run': 's', 'topic': 'q1', 'value': 0.2}]
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.records import TEXT


def expectations_frame(expectations, rankings):
    """Exact expectations as a long frame: one row per (run, topic, aggregation) of the
    rankings' present topics, columns run, topic, aggregation (string) and value, upper (the
    interval's upper end: unjudged documents, and under ``unknown`` the tail, at maximal gain)
    and variance (one user's outcome's; NaN where none is computed) as float64."""
    import pandas as pd

    S, T = rankings.present.shape
    run, topic = np.nonzero(rankings.present)
    parts = []
    for name, value in expectations.values.items():
        variance = expectations.variance.get(name)
        parts.append(pd.DataFrame({
            "run": np.asarray(rankings.runs, dtype=object)[run], "topic": np.asarray(rankings.topics, dtype=object)[topic],
            "aggregation": name, "value": value[run, topic].astype(np.float64),
            "upper": expectations.upper[name][run, topic].astype(np.float64),
            "variance": np.full(len(run), np.nan) if variance is None else variance[run, topic].astype(np.float64)}))
    frame = pd.concat(parts, ignore_index=True)
    return frame.astype({"run": TEXT, "topic": TEXT, "aggregation": TEXT})


def fitted_frame(fitted):
    """A fitted click model's scalar parameters: columns model, parameter (string), value and
    stderr (float64); its attractiveness per key is :func:`attractiveness_frame`."""
    import pandas as pd

    names = list(fitted.params)
    frame = pd.DataFrame({"model": fitted.model.name, "parameter": names,
                          "value": np.array([fitted.params[n] for n in names], dtype=np.float64),
                          "stderr": np.array([fitted.stderr.get(n, np.nan) for n in names], dtype=np.float64)})
    return frame.astype({"model": TEXT, "parameter": TEXT})


def attractiveness_frame(fitted):
    """A fitted click model's attractiveness ``alpha`` (and satisfaction ``sigma``) per key, as
    float64, beside the key (string: "query<TAB>docno", "grade 2", "rank 3" or "all")."""
    import pandas as pd

    columns = {"alpha": np.asarray(fitted.alpha, dtype=np.float64)}
    if fitted.sigma is not None:
        columns["sigma"] = np.asarray(fitted.sigma, dtype=np.float64)
    frame = pd.DataFrame(columns, index=fitted.keys).reset_index()
    return frame.astype({frame.columns[0]: TEXT})
