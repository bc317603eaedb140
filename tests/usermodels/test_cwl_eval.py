"""Every metric cwl_eval 1.0.12 knows against rpdi's browsing model of it.

cwl_eval reports, per metric and topic, EU (the expected rate of gain E[G]/E[N]), ETU (the
expected total gain E[G]), EC and ETC (costs: one unit a document here, so EC = 1 and ETC = ED),
ED (the expected depth E[N]) and, with ``-r``, the residual of each: the same numbers with
unjudged documents and the padding of the ranking to its max_depth (1000) at gain 1, less the
numbers themselves. rpdi's are the exact expectations of the model behind the measure's name
(:func:`rpdi.usermodels.exact`): ``values["rate"]``, ``values["total"]``, ``values["depth"]``
and, for the upper end, ``upper[...]`` (the residual is upper - value), with the model's
horizon at cwl_eval's max_depth (a user still reading at rank 1000 stops there, as cwl_eval's
weights, renormalised over 1000 ranks, say).

:data:`CWL_EVAL` is the one place that says, for every metric class cwl_eval's package holds,
which rpdi measure it is (``Same``: EU, ETU, ED and the residuals equal within 1e-9), or why it
differs (``Differs``: the reason, and a check that the reason is the whole difference). A class
cwl_eval gains, or one listed that it lacks, fails :func:`test_every_cwl_eval_metric_is_listed`.
One bug of cwl_eval's is common to all: ETU = sum_i L_i cumgain_i over ranks 1..1000 leaves out
the users who would read past rank 1000 (mass V_1000 C_1000), while ED counts them as stopping
there; so ETU + V_1000 C_1000 cumgain_1000 is compared with E[G] (see :data:`ETU_LEAK`).

The rankings: random collections (ties broken by docno, unjudged documents, negative grades,
which cwl_eval and rpdi both leave unjudged, topics with nothing relevant, rankings shorter
than a cutoff and one longer than 1000) and 15 topics of two bundled CAsT 2021 runs. Gains are
grade/max grade for graded measures (cwl_eval wants gains in [0, 1]) and grade >= 1 for the
binary ones (P, RR, AP), as ir_measures feeds cwl_eval.
"""

from __future__ import annotations

import gzip
import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
from cwl.ruler.measures.cwl_metrics import CWLMetric
from cwl.ruler.ranking import RankingMaker
from cwl.seeker.trec_qrel_handler import TrecQrelHandler

from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.metrics import build_rankings, load_qrels, load_runs
from rpdi.metrics.rankings import truncate
from rpdi.usermodels import exact, model_for

CWL_DEPTH = 1000
TOL = 1e-9
GRADED, BINARY = "graded", "binary"
ETU_LEAK = ("cwl_eval's ETU sums L_i cumgain_i over ranks 1..max_depth with L_i = V_i (1 - C_i), "
            "leaving out the V_1000 C_1000 of users still reading on at rank 1000, whom its ED counts "
            "as stopping there")


@dataclass(frozen=True)
class Same:
    """cwl_eval's metric built with each ``args`` is the rpdi measure ``name`` (gains ``gains``)."""

    cases: tuple[tuple[tuple, str, str], ...]


@dataclass(frozen=True)
class Differs:
    """cwl_eval's metric differs from rpdi's for ``reason``; ``check(cls, data)`` asserts that
    the reason accounts for the whole difference."""

    reason: str
    check: Callable


# -- the data -----------------------------------------------------------------------------------

@dataclass
class Collection:
    """qrels and one run (topic -> doc -> grade / score), the run's rankings in trec order, and
    rpdi's Rankings of them."""

    qrels: dict
    order: dict  # topic -> docnos, score descending, ties by docno descending
    rankings: object
    max_grade: float

    def topics(self):
        index = {t: i for i, t in enumerate(self.rankings.topics)}
        return [(index[t], t) for t in self.order]


def trec_order(scores: dict) -> list:
    return [d for s, d in sorted(((float(s), d) for d, s in scores.items()), reverse=True)]


def collection(qrels: dict, run: dict) -> Collection:
    rankings = build_rankings(load_qrels(qrels), load_runs({"sys": run}))
    grades = [g for docs in qrels.values() for g in docs.values()]
    return Collection(qrels, {t: trec_order(docs) for t, docs in run.items()}, rankings, float(max(grades)))


def random_collections() -> list[Collection]:
    rng = np.random.default_rng(20)
    out = []
    for c in range(3):
        qrels, run = {}, {}
        for t in range(10):
            topic = f"{c}_{t}"
            docs = [f"d{i:02d}" for i in range(60)]
            judged = rng.choice(60, size=int(rng.integers(1, 40)), replace=False)
            top = 0 if t == 0 else 4  # topic 0: nothing relevant
            qrels[topic] = {docs[j]: int(rng.integers(-1, top + 1)) for j in judged}
            ranked = rng.choice(60, size=int(rng.integers(1, 50)), replace=False)
            run[topic] = {docs[j]: float(rng.choice([0.0, 0.5, 1.0, 2.0, 3.0])) for j in ranked}
        qrels[f"{c}_9"]["d59"] = 4  # and the qrels' largest grade is 4
        out.append(collection(qrels, run))
    long = {f"x{i:04d}": float(-i) for i in range(1100)}  # longer than cwl_eval's max_depth
    out.append(collection({"L": {f"x{i:04d}": i % 3 for i in range(0, 1100, 7)}}, {"L": long}))
    return out


def cast_collections(topics: int = 15) -> list[Collection]:
    qrels: dict = {}
    with gzip.open(CAST2021_QRELS, "rt") as fh:
        for line in fh:
            topic, _, doc, grade = line.split()
            qrels.setdefault(topic, {})[doc] = int(grade)
    out = []
    for path in cast2021_runs()[:2]:
        run: dict = {}
        with gzip.open(path, "rt") as fh:
            for line in fh:
                topic, _, doc, _, score, _ = line.split()
                if topic in qrels:
                    run.setdefault(topic, {})[doc] = float(score)
        chosen = sorted(run)[:topics]
        out.append(collection({t: qrels[t] for t in chosen}, {t: run[t] for t in chosen}))
    return out


@pytest.fixture(scope="module")
def data() -> list[Collection]:
    return random_collections() + cast_collections()


def cwl_ranking(col: Collection, topic: str, gains: str, max_n: int = CWL_DEPTH):
    """cwl_eval's Ranking of one topic, fed as its main() feeds it (unit costs), gains in [0, 1];
    documents with negative grades are left out of the qrels (unjudged), as rpdi treats them."""
    handler = TrecQrelHandler(None)
    for doc, g in col.qrels[topic].items():
        if g >= 0:
            handler.put_value(topic, doc, float(g >= 1) if gains == BINARY else g / col.max_grade)
    maker = RankingMaker(topic, handler, None, max_gain=1.0, min_gain=0.0, max_cost=1.0, min_cost=1.0, max_n=max_n)
    for doc in col.order[topic]:
        maker.add(doc, "_")
    return maker.get_ranking()


def cwl_numbers(metric, ranking) -> dict:
    """cwl_eval's EU, ETU (with the leak :data:`ETU_LEAK` added back), ED, for the worst case
    (``low``) and the best (``high``: the value plus cwl_eval's residual)."""
    metric.residuals = True
    metric.measure(ranking)
    out = {}
    for case, worst in (("low", True), ("high", False)):
        c = metric.c_vector(ranking, worst)
        reach = np.cumprod(np.concatenate([[1.0], c[:-1]]))
        leak = reach[-1] * c[-1] * ranking.get_gain_vector(worst).sum()
        eu, etu, ed = metric.expected_utility, metric.expected_total_utility, metric.expected_items
        if case == "high":
            eu += metric.residual_expected_utility
            etu += metric.residual_expected_total_utility
            ed += metric.residual_expected_items
        out[case] = {"rate": eu, "total": etu + leak, "depth": ed}
    return out


def rpdi_numbers(name: str, col: Collection, horizon: int = CWL_DEPTH) -> dict:
    e = exact(model_for(name), col.rankings, horizon=horizon)
    return {"low": e.values, "high": e.upper}


def compare(cls, args: tuple, name: str, gains: str, data, horizon: int = CWL_DEPTH,
            never_stops: bool = False) -> int:
    """Assert cwl_eval's numbers equal rpdi's on every topic; returns the number compared.
    ``never_stops``: where rpdi's user never stops (E[N] infinite), cwl_eval's stops at max_depth."""
    bad, n = [], 0
    for col in data:
        ours = rpdi_numbers(name, col, horizon)
        for t, topic in col.topics():
            theirs = cwl_numbers(cls(*args), cwl_ranking(col, topic, gains))
            for case in ("low", "high"):
                for key, value in theirs[case].items():
                    mine = float(ours[case][key][0, t])
                    if never_stops and key == "depth" and np.isinf(mine):
                        mine = CWL_DEPTH
                    n += 1
                    if not abs(mine - value) <= TOL * max(1.0, abs(value)):
                        bad.append(f"{topic} {case} {key}: rpdi {mine!r} cwl_eval {value!r}")
    assert not bad, (f"{cls.__name__}{args} vs {name}: {len(bad)} of {n} differ (ETU with the leak added "
                     f"back: {ETU_LEAK}): " + "; ".join(bad[:5]))
    return n


# -- the differences, each checked ----------------------------------------------------------------

def check_ap(cls, data):
    """cwl_eval's AP user is Moffat et al.'s C/W/L reading of AP (C_i = sum_{j>i} r_j/j over
    sum_{j>=i} r_j/j), not Robertson's user behind rpdi's AP, so ETU and ED belong to another
    user; its EU is AP with the relevant documents *retrieved* (within max_depth) as the
    denominator, not the qrels' R as its docstring says: EU = AP R / R_retrieved (AP of the
    ranking cut at max_depth, as cwl_eval cuts it)."""
    n = 0
    for col in data:
        ap = exact(model_for("AP"), truncate(col.rankings, CWL_DEPTH)).values["mean_rate"]
        for t, topic in col.topics()[:4]:  # cwl_eval's AP takes O(max_depth^2) a ranking
            ranking = cwl_ranking(col, topic, BINARY)
            metric = cls()
            eu = metric.measure(ranking)
            R = sum(g >= 1 for g in col.qrels[topic].values())
            retrieved = ranking.get_gain_vector(True).sum()
            want = float(ap[0, t]) * R / retrieved if retrieved else 0.0
            assert abs(eu - want) <= TOL, (topic, eu, want)
            n += 1
    return n


def check_rr(cls, data):
    """On a ranking with nothing relevant retrieved, rpdi's RR user never stops (E[N] infinite,
    rate 0: the user of RR's definition) where cwl_eval's stops at max_depth (ED = 1000); every
    other number is the same."""
    return compare(cls, (), "RR", BINARY, data, never_stops=True)


def check_trap(cls, data):
    """TrAPCWLMetric's constructor skips CWLMetric's (``super(CWLMetric, self).__init__()``), so
    an instance lacks the attributes measure() reads: cwl_eval cannot compute it."""
    col = data[0]
    _, topic = col.topics()[1]
    with pytest.raises(AttributeError):
        cls().measure(cwl_ranking(col, topic, BINARY))
    return 1


def check_bpm_dynamic(cls, data):
    """BPMDCWLMetric's cost loop updates T where it means K (``T = T + self.hc * ...``, after the
    gain loop has finished), so its K never moves: it is rpdi's BPM-Dynamic with hc = 0."""
    n = 0
    for T, K, hb, hc, med in ((1.0, 10, 1.0, 1.0, 0.5), (2.0, 5, 0.5, 2.0, 0.25), (0.5, 20, 2.0, -1.0, 0.5)):
        n += compare(cls, (T, K, hb, hc, med), f"BPM-Dynamic(T={T},K={K},hb={hb},hc=0,gain_med={med})",
                     GRADED, data)
    return n


def check_umeasure_last_rank(cls, data):
    """UMeasureCWLMetric's w_vector gives the last of the max_depth ranks weight 0 (its loop
    stops one rank short), so for L >= max_depth - 1 its reader stops at rank 999 at the latest:
    it is rpdi's U with the horizon at 999. (For L < 999, the default cases below, it is U.)"""
    return compare(cls, (1000,), "U(L=1000)", GRADED, data, horizon=CWL_DEPTH - 1)


def check_set(cls, data):
    """SETCWLMetric's C_i = w(i+1)/w(i) with w(i) = (i+1)^beta - i^beta, the gain rank i + 1 adds
    (its w counts from 0), so its weights are Azzopardi's d_{i+1} = (i+1)^beta - i^beta where
    rpdi's SET has d_i = i^beta - (i-1)^beta: EU = sum_{i<=k} d_{i+1} r_i / ((k+1)^beta - 1).
    The same for beta = 1 (P@k), compared with rpdi there."""
    n = 0
    for beta, k in ((0.5, 10), (0.25, 5), (0.8, 20)):
        for col in data:
            for _, topic in col.topics():
                ranking = cwl_ranking(col, topic, GRADED)
                eu = cls(beta, k).measure(ranking)
                i = np.arange(1, k + 1)
                d = (i + 1.0) ** beta - i ** beta
                want = (d * ranking.get_gain_vector(True)[:k]).sum() / d.sum()
                assert abs(eu - want) <= TOL, (beta, k, topic, eu, want)
                n += 1
    return n + compare(cls, (1.0, 10), "SET(beta=1.0)@10", GRADED, data)


def check_base(cls, data):
    """CWLMetric is the base class of the others (C_i = 1: a user reading all max_depth ranks),
    no metric of its own ("Undefined")."""
    assert cls().name() == "Undefined"
    return 1


# -- the list -------------------------------------------------------------------------------------

def _t(H: float) -> str:
    return f"RBP(p={2 ** (-1 / H)!r})"


CWL_EVAL: dict[str, Same | Differs] = {
    "CWLMetric": Differs("the base class, not a metric", check_base),
    "PrecisionCWLMetric": Same(tuple(((k,), f"P@{k}", BINARY) for k in (1, 5, 10, 20))),
    "RBPCWLMetric": Same(tuple(((p,), f"RBP(p={p})", GRADED) for p in (0.2, 0.8, 0.95))),
    "RRCWLMetric": Differs("with nothing relevant, rpdi's RR user never stops; cwl_eval's stops at "
                           "max_depth", check_rr),
    "APCWLMetric": Differs("another user (Moffat et al.'s C/W/L AP, not Robertson's), and R = the "
                           "relevant documents retrieved", check_ap),
    "TrAPCWLMetric": Differs("cwl_eval bug: its constructor skips CWLMetric's; it cannot be measured",
                             check_trap),
    "NDCGCWLMetric": Same(tuple(((k,), f"SDCG@{k}", GRADED) for k in (1, 5, 10, 20))),
    "INSTCWLMetric": Same(tuple(((T,), f"INST(T={T})", GRADED) for T in (1.0, 3.0))),
    "INSQCWLMetric": Same(tuple(((T,), f"INSQ(T={T})", GRADED) for T in (1.0, 3.0))),
    # unit costs: W_i ~ 2^(-(i-1)/H), RBP's user with p = 2^(-1/H) (rpdi's TBG reads by time)
    "TBGCWLMetric": Same(tuple(((H,), _t(H), GRADED) for H in (2.0, 10.0, 224.0))),
    "BPMCWLMetric": Same(tuple(((T, K), f"BPM(T={T})@{K}", GRADED)
                               for T, K in ((1.0, 10), (2.0, 5), (0.5, 20), (3.0, 1000)))),
    "BPMDCWLMetric": Differs("cwl_eval bug: the cost budget K never moves (its loop updates T)",
                             check_bpm_dynamic),
    "UMeasureCWLMetric": Same(tuple(((L,), f"U(L={L})", GRADED) for L in (5.0, 50.0, 998.0))),
    "IFTGoalCWLMetric": Same(tuple(((T, b1, R1), f"IFT-C1(T={T},b1={b1},R1={R1})", GRADED)
                                   for T, b1, R1 in ((1.0, 0.9, 1.0), (2.0, 0.5, 10.0), (0.5, 2.0, 0.0)))),
    "IFTRateCWLMetric": Same(tuple(((A, b2, R2), f"IFT-C2(A={A},b2={b2},R2={R2})", GRADED)
                                   for A, b2, R2 in ((0.2, 0.9, 1.0), (0.5, 0.5, 10.0), (0.1, 2.0, 0.0)))),
    "IFTGoalRateCWLMetric": Same(tuple(((T, b1, R1, A, b2, R2),
                                        f"IFT-C1-C2(T={T},b1={b1},R1={R1},A={A},b2={b2},R2={R2})", GRADED)
                                       for T, b1, R1, A, b2, R2 in ((1.0, 0.9, 1.0, 0.2, 0.9, 1.0),
                                                                    (2.0, 0.5, 10.0, 0.5, 0.5, 5.0)))),
    "NERReq8CWLMetric": Same(tuple(((k,), f"NERR8@{k}", GRADED) for k in (1, 5, 10))),
    "NERReq9CWLMetric": Same(tuple(((k,), f"NERR9@{k}", GRADED) for k in (1, 5, 10))),
    "NERReq10CWLMetric": Same(tuple(((p,), f"NERR10(p={p})", GRADED) for p in (0.5, 0.9))),
    "NERReq11CWLMetric": Same(tuple(((T,), f"NERR11(T={T})", GRADED) for T in (1.0, 3.0))),
    "NPVCWLMetric": Same(tuple(((r,), f"NPV(rate={r})", GRADED) for r in (0.1, 1.0))),
    "SETCWLMetric": Differs("cwl_eval bug: its weights are shifted by one rank", check_set),
}
# The default U(L=1000) of cwl_eval meets its last-rank bug; checked as a case of its own.
DEFAULT_U = Differs("cwl_eval bug: the last of max_depth ranks gets weight 0", check_umeasure_last_rank)


def cwl_eval_classes() -> dict[str, type]:
    """Every CWLMetric class defined in cwl_eval's package of measures."""
    import cwl.ruler.measures as package

    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, CWLMetric) and obj.__module__ == module.__name__:
                found[name] = obj
    return found


def test_every_cwl_eval_metric_is_listed():
    assert set(cwl_eval_classes()) == set(CWL_EVAL)


SAME = [(cls, case) for cls, entry in CWL_EVAL.items() if isinstance(entry, Same) for case in entry.cases]


@pytest.mark.parametrize("cls,case", SAME, ids=[f"{c}-{case[1]}" for c, case in SAME])
def test_cwl_eval_equals_rpdi(cls, case, data):
    args, name, gains = case
    assert compare(cwl_eval_classes()[cls], args, name, gains, data) > 0


DIFFERS = [(cls, entry) for cls, entry in CWL_EVAL.items() if isinstance(entry, Differs)] + [
    ("UMeasureCWLMetric", DEFAULT_U)]


@pytest.mark.parametrize("cls,entry", DIFFERS, ids=[f"{c}-{e.check.__name__}" for c, e in DIFFERS])
def test_cwl_eval_differs_only_as_listed(cls, entry, data):
    assert entry.check(cwl_eval_classes()[cls], data) > 0
