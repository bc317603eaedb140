"""rpdi as an ir_measures provider (usermodels/ir_measures_provider.py): ir_measures' measures and
rpdi's own (BetaRBP, GMAP, a model of one's own by file, module or class) give ``rpdi.evaluate``'s
values, per topic and aggregated, from every input ir_measures takes; ir_measures' names keep
ir_measures' meaning (checked against its own providers); ``install`` serves rpdi's measures
through ir_measures' default pipeline and parser."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

ir_measures = pytest.importorskip("ir_measures")

import rpdi  # noqa: E402
from rpdi.metrics.errors import InputError  # noqa: E402
from rpdi.usermodels.examples import two_strikes  # noqa: E402
from rpdi.usermodels.ir_measures_provider import install, measure, provider  # noqa: E402

MODULE_MODEL = "rpdi.usermodels.examples.two_strikes:TwoStrikes(n=2)@10"


@pytest.fixture
def collection(random_collection):
    qrels, runs = random_collection(np.random.default_rng(23), 1, 10, negative=False)
    return qrels, runs["run0"]


@pytest.fixture
def file_model(tmp_path):
    path = tmp_path / "my_model.py"
    shutil.copy(two_strikes.__file__, path)
    return f"{path}:TwoStrikes(n=3)@5"


def rpdi_values(qrels, run, names) -> tuple[dict, dict]:
    """rpdi.evaluate's aggregate and per-topic values, by measure name."""
    records = rpdi.evaluate(qrels, {"run": run}, names, per_topic=True)
    total = {r["measure"]: r["value"] for r in records if r["topic"] == "all"}
    per_topic = {(r["measure"], r["topic"]): r["value"] for r in records if r["topic"] != "all"}
    return total, per_topic


def test_values_are_rpdi_evaluates(collection, file_model):
    qrels, run = collection
    pairs = [  # (ir_measures measure, the rpdi name rpdi.evaluate is given)
        (ir_measures.nDCG @ 10, "nDCG@10"), (ir_measures.RBP(p=0.8), "RBP(p=0.8)"),
        (ir_measures.INST(T=2.0, max_rel=3), "INST(T=2.0,max_rel=3)"), (ir_measures.AP, "AP"),
        (ir_measures.NumRet(rel=1), "NumRet(rel=1)"),  # a sum over topics
        (measure("BetaRBP(a=2,b=3)"), "BetaRBP(a=2,b=3)"), (measure("GMAP"), "GMAP"),  # a geometric mean
        (measure("TBG"), "TBG"), (measure(MODULE_MODEL), MODULE_MODEL), (measure(file_model), file_model),
        (measure(two_strikes.TwoStrikes(n=4, cutoff=8)), two_strikes.TwoStrikes(n=4, cutoff=8)),
    ]
    total, per_topic = rpdi_values(qrels, run, [name for _, name in pairs])
    texts = list(total)  # rpdi's names of the measures, in the order given
    got = provider.calc_aggregate([m for m, _ in pairs], qrels, run)
    assert [got[m] for m, _ in pairs] == [total[t] for t in texts]
    metrics = list(provider.iter_calc([m for m, _ in pairs], qrels, run))
    by_measure = {m: t for (m, _), t in zip(pairs, texts)}
    assert {(by_measure[x.measure], x.query_id): x.value for x in metrics} == per_topic
    assert len(metrics) == len(per_topic) == len(pairs) * len(qrels)  # every qrels topic, run or not


def test_every_input_ir_measures_takes(collection):
    qrels, run = collection
    measures = [ir_measures.P @ 5, measure("RBP2(p1=0.7)@10")]
    expected = provider.calc_aggregate(measures, qrels, run)
    qrels_frame = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                               columns=["query_id", "doc_id", "relevance"]).assign(iteration="0")
    run_frame = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                             columns=["query_id", "doc_id", "score"])
    assert provider.calc_aggregate(measures, qrels_frame, run_frame) == expected
    tuples = (iter(ir_measures.Qrel(*row) for row in qrels_frame.itertuples(index=False)),
              iter(ir_measures.ScoredDoc(*row) for row in run_frame.itertuples(index=False)))
    assert provider.calc_aggregate(measures, *tuples) == expected
    evaluator = provider.evaluator(measures, qrels)  # one qrels, several runs
    assert evaluator.calc_aggregate(run_frame) == evaluator.calc_aggregate(run) == expected
    assert provider.calc_aggregate(measures, qrels, {}) == {m: 0.0 for m in measures}
    empty = pd.DataFrame(columns=["query_id", "doc_id", "score"])  # pandas: object columns, or float64
    assert provider.calc_aggregate(measures, qrels, empty) == {m: 0.0 for m in measures}
    assert provider.calc_aggregate(measures, qrels, empty.astype(float)) == {m: 0.0 for m in measures}


def test_measures_with_one_rpdi_name_each_get_its_value(collection):
    """Several of ir_measures' measures naming one rpdi measure each get its value, per topic and
    aggregated: P@2 and P(rel=1)@2, nDCG@10 and nDCG(dcg='log2')@10 (one measure to ir_measures
    too), a model's class and its module path (two to ir_measures)."""
    qrels, run = collection
    model = two_strikes.TwoStrikes(n=4, cutoff=8)
    named = {ir_measures.P @ 2: "P@2", ir_measures.P(rel=1) @ 2: "P@2", ir_measures.nDCG @ 10: "nDCG@10",
             ir_measures.nDCG(dcg="log2") @ 10: "nDCG@10", measure(model): model,
             measure("rpdi.usermodels.examples.two_strikes:TwoStrikes(n=4)@8"): model}
    measures = [ir_measures.P @ 2, ir_measures.P(rel=1) @ 2, ir_measures.nDCG @ 10,
                ir_measures.nDCG(dcg="log2") @ 10, *list(named)[-2:]]
    total, per_topic = rpdi_values(qrels, run, ["P@2", "nDCG@10", model])
    texts = dict(zip(["P@2", "nDCG@10", model], total))  # rpdi's name of each
    got = provider.calc_aggregate(measures, qrels, run)
    assert [got[m] for m in measures] == [total[texts[named[m]]] for m in measures]
    metrics = list(provider.iter_calc(measures, qrels, run))
    assert len(metrics) == len(set(measures)) * len(qrels) == 4 * len(qrels)
    assert {(x.measure, x.query_id): x.value for x in metrics} == {
        (m, q): per_topic[(texts[named[m]], q)] for m in set(measures) for q in qrels}


def test_ir_measures_names_keep_ir_measures_meaning(collection):
    """Against ir_measures' own providers (pytrec_eval, cwl_eval) on the same collection with
    every score distinct (the two order tied documents differently) and every qrels topic
    retrieved (ir_measures' providers skip the others)."""
    qrels, run = collection
    rng = np.random.default_rng(5)
    run = {q: {d: float(s) for d, s in zip(docs, rng.permutation(len(docs)))} for q, docs in run.items()}
    run.update({q: {next(iter(qrels[q])): 1.0} for q in qrels if q not in run})
    measures = [ir_measures.nDCG @ 10, ir_measures.P @ 5, ir_measures.AP, ir_measures.RR,
                ir_measures.RBP(p=0.8, rel=1), ir_measures.INST(T=2.0, max_rel=3)]
    ours = provider.calc_aggregate(measures, qrels, run)
    theirs = ir_measures.calc_aggregate(measures, qrels, run)
    for m in measures:
        assert ours[m] == pytest.approx(theirs[m], abs=1e-9), m


def test_what_is_not_served(collection):
    qrels, run = collection
    assert provider.supports(ir_measures.Compat(p=0.9)) and provider.supports(measure("TBG"))
    assert not provider.supports(ir_measures.alpha_nDCG @ 20)  # needs subtopics
    assert not provider.supports(measure("RBO(p=0.9)@10"))  # compares two runs
    assert not provider.supports(ir_measures.parse_measure("SetF(beta=0.5)")(beta="x"))  # not a measure of rpdi's
    with pytest.raises(InputError, match="ir_measures' qrels lack"):
        measure(MODULE_MODEL.replace("TwoStrikes(", "TwoStrikes-IA("))
    with pytest.raises(InputError, match="not served by rpdi's ir_measures provider"):
        provider.calc_aggregate([ir_measures.alpha_nDCG @ 20], qrels, run)
    with pytest.raises(InputError, match="holds 2 runs"):
        provider.calc_aggregate([ir_measures.P @ 5], qrels, pd.DataFrame(
            {"query_id": ["t00", "t00"], "doc_id": ["a", "b"], "score": [1.0, 2.0], "run": ["x", "y"]}))


@pytest.fixture
def installed():
    """install(), and ir_measures' global state as it was afterwards (other tests use ir_measures
    as an oracle: rpdi must not answer for it there)."""
    registry, providers = dict(ir_measures.measures.registry), list(ir_measures.DefaultPipeline.providers)
    install()
    install()
    yield
    ir_measures.measures.registry.clear()
    ir_measures.measures.registry.update(registry)
    ir_measures.DefaultPipeline.providers[:] = providers


def test_install_serves_rpdis_measures_through_ir_measures(collection, installed):
    qrels, run = collection
    assert ir_measures.DefaultPipeline.providers.count(provider) == 1
    beta = ir_measures.parse_measure("BetaRBP(a=2.0)")
    assert beta == measure("BetaRBP(a=2)")
    got = ir_measures.calc_aggregate([ir_measures.nDCG @ 10, beta], qrels, run)
    total, _ = rpdi_values(qrels, run, ["BetaRBP(a=2)"])
    assert got[beta] == pytest.approx(total["BetaRBP(a=2)"], abs=1e-12)  # rpdi's values, ir_measures' mean
    assert got[ir_measures.nDCG @ 10] == ir_measures.pytrec_eval.calc_aggregate([ir_measures.nDCG @ 10],
                                                                                qrels, run)[ir_measures.nDCG @ 10]


IMPORTED_FIRST = """
import ir_measures, json, sys
import rpdi
provider = ir_measures.providers.registry["rpdi"]
from rpdi.usermodels.ir_measures_provider import measure
qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1, "d": 1}}
run = {"q1": {"a": 1.0, "b": 3.0, "c": 2.0}, "q2": {"d": 2.0, "e": 1.0}}
names = ["nDCG@10", "RBP(p=0.8)", "%s"]
measures = [ir_measures.nDCG @ 10, ir_measures.RBP(p=0.8), measure(names[2])]
got = provider.calc_aggregate(measures, qrels, run)
want = {r["measure"]: r["value"] for r in rpdi.evaluate(qrels, {"run": run}, names)}
print(json.dumps([[got[m] for m in measures], list(want.values()), type(provider).__module__]))
""" % MODULE_MODEL


def test_import_rpdi_after_ir_measures_registers_the_provider():
    """As in a PyTerrier session: ir_measures is imported, then rpdi; ir_measures' registry then
    has rpdi's provider, whose nDCG@10, RBP(p=0.8) and model of one's own are rpdi.evaluate's;
    ``import rpdi`` alone imports no ir_measures, and rpdi.ir_measures_provider registers it."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", IMPORTED_FIRST], capture_output=True, text=True, check=True)
    got, want, module = json.loads(out.stdout)
    assert got == want and len(got) == 3 and module == "rpdi.usermodels.ir_measures_provider"
    alone = ("import sys, rpdi; assert 'ir_measures' not in sys.modules; import ir_measures; "
             "assert 'rpdi' not in ir_measures.providers.registry; rpdi.ir_measures_provider; "
             "assert ir_measures.providers.registry['rpdi'] is rpdi.ir_measures_provider.provider")
    subprocess.run([sys.executable, "-c", alone], check=True)
