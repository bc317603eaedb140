"""usermodels/result_frames.py: exact expectations and fitted click models as typed frames."""

from __future__ import annotations

import numpy as np
import pandas as pd

import rpdi
from rpdi.metrics import build_rankings, load_qrels, load_runs
from rpdi.metrics.clicklogs import ClickLog
from rpdi.usermodels.clickfit import fit
from rpdi.usermodels.result_frames import attractiveness_frame, expectations_frame, fitted_frame


def test_expectations_frame_holds_each_present_cell(random_collection):
    qrels, runs = random_collection(np.random.default_rng(3), 2, 6)
    rankings = build_rankings(load_qrels(qrels), load_runs(runs))
    ex = rpdi.exact(rpdi.model_for("RBP(p=0.8)"), rankings)
    frame = expectations_frame(ex, rankings)
    assert frame.dtypes.astype(str).tolist() == ["string"] * 3 + ["float64"] * 3
    other = expectations_frame(ex, build_rankings(load_qrels(qrels), load_runs({"z": runs[next(iter(runs))]})))
    both = pd.concat([frame, other], ignore_index=True)  # other runs: kept as strings, not lost categories
    assert both.dtypes.astype(str).tolist() == ["string"] * 3 + ["float64"] * 3 and set(both["run"]) == {*runs, "z"}
    assert len(frame) == rankings.present.sum() * len(ex.values)
    rate = frame[frame["aggregation"] == "rate"]
    records = rpdi.evaluate(qrels, runs, ["RBP(p=0.8)"], per_topic=True)  # the closed form, per topic
    closed = {(r["run"], r["topic"]): r["value"] for r in records if r["topic"] != "all"}
    got = dict(zip(zip(rate["run"].astype(str), rate["topic"].astype(str)), rate["value"]))
    assert got.keys() == closed.keys()
    assert all(abs(got[k] - closed[k]) < 1e-9 for k in closed)
    assert frame.loc[frame["aggregation"] == "cost", "variance"].isna().all()  # none computed for cost


def test_fitted_frames():
    rng = np.random.default_rng(0)
    docs = np.tile(np.arange(4), (200, 1))
    clicks = rng.random((200, 4)) < np.array([0.6, 0.4, 0.3, 0.2])
    log = ClickLog(np.zeros(200, int), docs, clicks, np.array(["q0"], object), np.array([f"d{i}" for i in range(4)], object))
    fitted = fit("DBN", log, noise=0.0)
    frame = fitted_frame(fitted)
    assert frame["parameter"].astype(str).tolist() == list(fitted.params)
    assert frame["value"].tolist() == list(fitted.params.values())
    assert frame.dtypes.astype(str).tolist() == ["string", "string", "float64", "float64"]
    assert frame["model"].unique().tolist() == ["DBN"]
    keys = attractiveness_frame(fitted)
    assert keys["alpha"].tolist() == fitted.alpha.tolist() and keys["sigma"].tolist() == fitted.sigma.tolist()
    assert len(keys) == len(fitted.keys) and keys.dtypes.astype(str).tolist() == ["string", "float64", "float64"]
