"""rpdi's closed forms against independent oracles, per topic.

Oracles and the conventions compared (see the docstring of each test for the details):

* pytrec_eval (trec_eval): P@k, R@k, AP, AP@k, RR, nDCG, nDCG@k, Rprec, Success@k, SetP, SetR,
  SetF, IPrec@r, AP11pt, also at ``rel=2`` (``relevance_level=2``). pytrec_eval (trec_eval 9.x) ranks
  by float32 scores and interpolates with floor(r R + 0.9), so rpdi runs with
  ``compat="pytrec_eval"``; the one known difference (float64 scores that tie only in float32)
  has its own named test.
* gdeval (through ir_measures): ERR@k and nDCG(dcg='exp-log2')@k; gdeval prints 5 decimals.
* rbp_eval: RBP value and residual, binary and graded, to full depth and to a depth.
* cwl_eval: SDCG@k (``NDCGCWLMetric``) and RBP (``RBPCWLMetric``) expected utility.

The collections are random (hypothesis, derandomized): tied scores, unjudged documents,
negative grades where the oracle accepts them, topics with nothing relevant, qrels topics
missing from the run, a run topic missing from the qrels, and rankings shorter than the cutoffs.
Tolerance 1e-9 except against gdeval's printed output.
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import ir_measures
import numpy as np
import pytest
import pytrec_eval
from cwl.ruler.cwl_ruler import NDCGCWLMetric, RBPCWLMetric
from cwl.ruler.ranking import RankingMaker
from cwl.seeker.trec_qrel_handler import TrecQrelHandler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rbp_eval import DEPTH_FULL, Ordering, RelType, evaluate as rbp_evaluate, load_qrels, load_run

from rpdi.metrics import evaluate

REPO = Path(__file__).resolve().parents[2]
TOL = 1e-9
# gdeval prints %.5f: within 5e-6 of its value (0.109375 prints as 0.10938); 1e-12 more covers
# the binary value of the printed decimal and the order of floating-point sums
GDEVAL_TOL = 5e-6 + 1e-12

# 'd9' > 'd10' in byte order, so docno tie-breaking is string order, not numeric order
DOCS = [f"d{i}" for i in range(1, 21)]
TIED_SCORES = (-1.0, 0.0, 0.25, 0.5, 1.0, 2.0, 3.5)
RUN_ONLY_TOPIC = "999"  # in the run, not in the qrels: every tool drops it
CUTOFFS = (1, 3, 5, 10, 20)
LEVELS = tuple(i / 10 for i in range(11))

# (oracle, comparisons made): printed at the end of the module with ``pytest -s``
COUNTS: Counter = Counter()

SETTINGS = dict(derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    if COUNTS:
        print("\noracle comparisons (run, topic, measure):", dict(sorted(COUNTS.items())))


@st.composite
def collections(draw, *, min_grade=-1, max_grade=4, tied=True, all_negative=True):
    """``(qrels, run)`` as dicts with numeric topic ids (gdeval needs them) and lower-case docnos
    (rbp_eval lower-cases). Each topic is one of: retrieved, nothing relevant (grades <= 0),
    not in the run. ``tied`` draws scores from a small set, else distinct values exact in
    float32. Without ``all_negative`` every topic has a judgment >= 0: trec_eval cannot evaluate
    a topic whose judgments are all negative (form_res_rels allocates max_rel + 1 = 0 levels
    and gives up; pytrec_eval then returns stale values from its buffers)."""
    qrels, run = {}, {}
    for i in range(draw(st.integers(1, 4))):
        topic = str(101 + i)
        kind = draw(st.sampled_from(("retrieved", "retrieved", "retrieved", "nothing_relevant", "not_in_run")))
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=15, unique=True))
        top = 0 if kind == "nothing_relevant" else max_grade
        grades = draw(st.lists(st.integers(min(min_grade, top), top), min_size=len(judged), max_size=len(judged)))
        if not all_negative and max(grades) < 0:
            grades[0] = 0
        qrels[topic] = dict(zip(judged, grades))
        if kind == "not_in_run":
            continue
        ranked = draw(st.lists(st.sampled_from(DOCS), max_size=15, unique=True))  # judged and unjudged
        if tied:
            scores = draw(st.lists(st.sampled_from(TIED_SCORES), min_size=len(ranked), max_size=len(ranked)))
        else:
            steps = draw(st.lists(st.integers(-2 ** 20, 2 ** 20), min_size=len(ranked), max_size=len(ranked),
                                  unique=True))
            scores = [x / 1024 for x in steps]
        run[topic] = dict(zip(ranked, scores))
    run[RUN_ONLY_TOPIC] = {"d1": 1.0}
    return qrels, run


def trec_order(docs: dict[str, float]) -> list[str]:
    """Score descending (as float64), ties by docno descending in byte order."""
    keyed = sorted(((float(s), d.encode()) for d, s in docs.items()), reverse=True)
    return [d.decode() for _, d in keyed]


def rpdi_per_topic(qrels, run, measures, **kwargs) -> dict[tuple[str, str], dict]:
    records = evaluate(qrels, {"sys": run}, measures, per_topic=True, **kwargs)
    out = {(r["topic"], r["measure"]): r for r in records if r["topic"] != "all"}
    assert {t for t, _ in out} == set(qrels), "rpdi evaluates exactly the qrels topics"
    return out


class Mismatches:
    """Collects every disagreement, so a failure shows all of them at once."""

    def __init__(self, oracle: str):
        self.oracle, self.bad, self.n = oracle, [], 0

    def check(self, what, ours, theirs, tol=TOL):
        self.n += 1
        if ours is None or not abs(ours - theirs) <= tol:
            self.bad.append(f"{what}: rpdi {ours!r} vs {self.oracle} {theirs!r}")

    def done(self, context=""):
        COUNTS[self.oracle] += self.n
        assert not self.bad, f"{len(self.bad)} disagreements with {self.oracle} {context}\n" + "\n".join(self.bad[:20])


# --------------------------------------------------------------------------- pytrec_eval

def pytrec_pairs(rel: int) -> tuple[list[str], list[tuple[str, str]]]:
    """pytrec_eval measure requests and (pytrec_eval key, rpdi name) pairs at a relevance level."""
    r = "" if rel == 1 else f"(rel={rel})"
    cut = ",".join(map(str, CUTOFFS))
    requests = [f"P.{cut}", f"recall.{cut}", f"map_cut.{cut}", f"success.{cut}", "map", "recip_rank",
                "Rprec", "set_P", "set_recall", "set_F", "11pt_avg", "iprec_at_recall"]
    pairs = []
    for k in CUTOFFS:
        pairs += [(f"P_{k}", f"P{r}@{k}"), (f"recall_{k}", f"R{r}@{k}"), (f"map_cut_{k}", f"AP{r}@{k}"),
                  (f"success_{k}", f"Success{r}@{k}")]
    pairs += [("map", f"AP{r}"), ("recip_rank", f"RR{r}"), ("Rprec", f"Rprec{r}"), ("set_P", f"SetP{r}"),
              ("set_recall", f"SetR{r}"), ("set_F", f"SetF{r}"), ("11pt_avg", f"AP11pt{r}")]
    pairs += [(f"iprec_at_recall_{x:.2f}", f"IPrec{r}@{x}") for x in LEVELS]
    if rel == 1:  # relevance_level does not change trec_eval's ndcg (gain = grade)
        requests += ["ndcg", f"ndcg_cut.{cut}"]
        pairs += [("ndcg", "nDCG")] + [(f"ndcg_cut_{k}", f"nDCG@{k}") for k in CUTOFFS]
    return requests, pairs


def compare_pytrec(qrels, run, rels=(1, 2)) -> Mismatches:
    """Every overlapping measure, per topic. pytrec_eval reports only topics in both the run and
    the qrels; a qrels topic missing from the run is given to it as an empty ranking (all 0,
    trec_eval -c), which is what rpdi reports for it."""
    mm = Mismatches("pytrec_eval")
    run_c = {t: dict(run.get(t, {})) for t in qrels}
    run_c[RUN_ONLY_TOPIC] = run[RUN_ONLY_TOPIC]
    for rel in rels:
        requests, pairs = pytrec_pairs(rel)
        theirs = pytrec_eval.RelevanceEvaluator(qrels, requests, relevance_level=rel).evaluate(run_c)
        ours = rpdi_per_topic(qrels, run, [m for _, m in pairs], compat="pytrec_eval")
        assert set(theirs) == set(qrels)
        for topic, values in theirs.items():
            for key, name in pairs:
                expected = values[key]
                if math.isnan(expected):
                    # trec_eval's iprec/11pt start from num_rel_ret / num_ret: 0/0 on an empty
                    # ranking. Nothing retrieved: rpdi reports 0, as for every other measure.
                    assert not run.get(topic) and key.startswith(("iprec", "11pt")), (topic, key)
                    expected = 0.0
                mm.check(f"topic {topic} {name} ({key})", ours[topic, name]["value"], expected)
    return mm


@settings(max_examples=150, **SETTINGS)
@given(collections(all_negative=False))
def test_pytrec_eval_tied_scores(collection):
    qrels, run = collection
    compare_pytrec(qrels, run).done(f"on qrels={qrels} run={run}")


@settings(max_examples=60, **SETTINGS)
@given(collections(tied=False, all_negative=False))
def test_pytrec_eval_untied_float32_scores(collection):
    qrels, run = collection
    compare_pytrec(qrels, run).done(f"on qrels={qrels} run={run}")


def test_pytrec_eval_fixed_cases():
    """Hand-made corners: relevant documents beyond the cutoff (nDCG@k's ideal is cut at k even
    when k equals the longest ranking), docno tie-break 'd9' before 'd10', all tied, empty
    judged set of relevant documents, ranking longer than every cutoff."""
    qrels = {"1": {f"d{i}": 1 for i in range(1, 9)} | {"d20": 2},
             "2": {"d9": 1, "d10": 0, "d11": -1},
             "3": {"d1": 0, "d2": -1},
             "4": {"d3": 3, "d4": 1}}
    run = {"1": {"d1": 1.0, "d2": 0.5, "d30": 0.7},  # k = 3 is the longest ranking of the run
           "2": {"d10": 1.0, "d9": 1.0, "d11": 1.0},
           "3": {"d1": 2.0, "d2": 1.0, "d3": 0.0},
           RUN_ONLY_TOPIC: {"d1": 1.0}}
    compare_pytrec(qrels, run).done()
    long_run = {"4": {f"d{i}": float(-i) for i in range(1, 30)}, RUN_ONLY_TOPIC: {"d1": 1.0}}
    compare_pytrec(qrels, long_run).done()
    # trec_eval's recall level is floor(r R + 0.9) relevant documents, in float64: with R = 3,
    # 0.7 * 3 + 0.9 = 2.9999999999999996, so 2 of 3 relevant documents "reach" recall 0.7
    three = {"1": {"a": 1, "b": 1, "c": 1}}
    compare_pytrec(three, {"1": {"a": 3.0, "x": 2.0, "b": 1.0}, RUN_ONLY_TOPIC: {"d1": 1.0}}).done()
    assert rpdi_per_topic(three, {"s": {"1": {"a": 3.0, "x": 2.0, "b": 1.0}}}["s"], ["IPrec@0.7"])[
        "1", "IPrec@0.7"]["value"] == 2 / 3


# tied docnos longer than one and two 8-byte words, sharing prefixes, one a prefix of another,
# multi-byte UTF-8 (byte order is code point order, not the order of Python's str.lower etc.)
LONG_DOCNOS = ["doc-000000001", "doc-00000001", "doc-0000001é", "doc-0000001€x", "doc-0000001",
               "DOC-1", "doc-00000001ééé-long-long-long", "a", "ab", "abc-verylongprefix-0001",
               "abc-verylongprefix-0002", "abc-verylongprefix-001", "é", "z"]


@pytest.mark.parametrize("sort_bytes", [None, 0])
def test_pytrec_eval_tie_break_on_long_and_multibyte_docnos(monkeypatch, sort_bytes):
    """All scores tie; each topic judges one document relevant, so its reciprocal rank is the
    document's place in docno-descending byte order, as pytrec_eval (strcmp) ranks it. With
    ``sort_bytes=0`` the byte order is taken from Python strings instead of numpy words."""
    if sort_bytes is not None:
        monkeypatch.setattr("rpdi.metrics.docnos.SORT_BYTES", sort_bytes)
    qrels = {str(t): {d: int(d == relevant) for d in LONG_DOCNOS} for t, relevant in enumerate(LONG_DOCNOS)}
    run = {t: {d: 1.0 for d in LONG_DOCNOS} for t in qrels} | {RUN_ONLY_TOPIC: {"d1": 1.0}}
    compare_pytrec(qrels, run, rels=(1,)).done()
    expected = sorted(LONG_DOCNOS, key=str.encode, reverse=True)
    ours = rpdi_per_topic(qrels, run, ["RR"])
    assert [1 / ours[str(t), "RR"]["value"] for t in range(len(LONG_DOCNOS))] == \
        [expected.index(d) + 1 for d in LONG_DOCNOS]


def test_byte_order_of_random_strings_and_slices():
    """The string sort behind the tie-break against Python's sort of the UTF-8 bytes, on random
    strings (prefixes of one another, multi-byte characters, empty ones) of sliced arrays (a data
    buffer shared with strings outside the slice) and random subsets of them."""
    import pyarrow as pa

    from rpdi.metrics.docnos import byte_order

    rng = np.random.default_rng(7)
    alphabet = list("ab0-") + ["é", "€"]
    for _ in range(300):
        strings = ["".join(rng.choice(alphabet, rng.integers(0, 20))) for _ in range(rng.integers(1, 40))]
        start = int(rng.integers(0, len(strings)))
        array = pa.array(strings, pa.string()).slice(start)
        codes = rng.permutation(len(array))[: rng.integers(0, len(array) + 1)]
        order = byte_order(array, codes)
        got = [strings[start + c].encode() for c in codes[order]]
        assert got == sorted(strings[start + c].encode() for c in codes)


def test_pyarrow_columns_of_other_string_types_agree_with_pytrec_eval():
    """Qrels and runs built from pyarrow columns that are not int32-indexed dictionaries of
    strings (large strings, int8 indices, chunked arrays) are encoded as rpdi joins them."""
    import pyarrow as pa

    from rpdi.metrics.trec import Qrels, Run

    qrels = {"1": {"a": 1, "b": 0, "c": 2}, "2": {"a": 1}}
    run = {"1": {"c": 1.0, "a": 2.0, "x": 2.0}, "2": {"b": 1.0, "a": 0.5}}
    q_topic, q_doc = zip(*[(t, d) for t, docs in qrels.items() for d in docs])
    r_topic, r_doc = zip(*[(t, d) for t, docs in run.items() for d in docs])
    ours = evaluate(
        Qrels(pa.array(q_topic, pa.large_string()), pa.array(q_doc, pa.large_string()).dictionary_encode(),
              np.array([g for docs in qrels.values() for g in docs.values()], dtype=float)),
        [Run("sys", pa.chunked_array([pa.array(r_topic[:2]), pa.array(r_topic[2:])]),
             pa.DictionaryArray.from_arrays(pa.array(range(len(r_doc)), pa.int8()), pa.array(r_doc)),
             np.array([s for docs in run.values() for s in docs.values()]))],
        ["RR", "AP", "nDCG"], per_topic=True)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "map", "ndcg"}).evaluate(run)
    names = {"RR": "recip_rank", "AP": "map", "nDCG": "ndcg"}
    for r in ours:
        if r["topic"] != "all":
            assert r["value"] == pytest.approx(theirs[r["topic"]][names[r["measure"]]], abs=TOL)


def test_known_difference_float64_scores_tied_only_in_float32_rank_differently_from_pytrec_eval():
    """The one known difference with pytrec_eval: it stores scores as float32, so
    1.0000000001 and 1.0 tie and the tie goes to the larger docno ('b' first). rpdi by default
    ranks the float64 scores ('a' first); ``compat="pytrec_eval"`` reproduces pytrec_eval."""
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 1.0000000001, "b": 1.0}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, ["recip_rank", "P_1"]).evaluate(run)["1"]
    default = rpdi_per_topic(qrels, run, ["RR", "P@1"])
    as_float32 = rpdi_per_topic(qrels, run, ["RR", "P@1"], compat="pytrec_eval")
    assert (theirs["recip_rank"], theirs["P_1"]) == (0.5, 0.0)
    assert (default["1", "RR"]["value"], default["1", "P@1"]["value"]) == (1.0, 1.0)
    assert (as_float32["1", "RR"]["value"], as_float32["1", "P@1"]["value"]) == (0.5, 0.0)


def test_cli_json_per_topic_and_mean_agree_with_pytrec_eval(tmp_path, write_trec):
    """``rpdi eval QRELS RUN -m ... --per-topic --format json --compat pytrec_eval`` on TREC files
    (numpy seed 20210; ties, unjudged and negative grades, qrels topics missing from the run):
    every per-topic value and the mean over the qrels topics (trec_eval -c) match pytrec_eval."""
    rng = np.random.default_rng(20210)
    qrels, run = {}, {}
    for t in range(1, 31):
        docs = [f"doc{j}" for j in rng.choice(200, size=40, replace=False)]
        qrels[str(t)] = {d: int(g) for d, g in zip(docs[:25], rng.integers(-1, 4, size=25))}
        if t % 7:
            ranked = docs[10:] + [f"new{j}" for j in range(int(rng.integers(0, 40)))]
            run[str(t)] = {d: float(rng.choice([0.5, 1.0, rng.normal()])) for d in ranked}
        if max(qrels[str(t)].values()) < 0:
            qrels[str(t)][docs[0]] = 0
    qrels_path, (run_path,) = write_trec(tmp_path, qrels, {"mysys": run})
    pairs = [("P_10", "P@10"), ("map", "AP"), ("recip_rank", "RR"), ("ndcg_cut_10", "nDCG@10"),
             ("ndcg", "nDCG"), ("Rprec", "Rprec"), ("recall_100", "R@100"), ("11pt_avg", "AP11pt")]
    cli = Path(sys.executable).with_name("rpdi")
    args = [str(cli), "eval", str(qrels_path), str(run_path), "--per-topic", "--format", "json",
            "--compat", "pytrec_eval"] + [x for _, m in pairs for x in ("-m", m)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    ours = {(r["topic"], r["measure"]): r["value"] for r in json.loads(done.stdout)}
    assert {r["run"] for r in json.loads(done.stdout)} == {"mysys"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, [k for k, _ in pairs]).evaluate(
        {t: run.get(t, {}) for t in qrels})
    mm = Mismatches("pytrec_eval (CLI)")
    for key, name in pairs:
        per_topic = [0.0 if math.isnan(theirs[t][key]) else theirs[t][key] for t in qrels]
        for t, value in zip(qrels, per_topic):
            mm.check(f"topic {t} {name}", ours[t, name], value)
        mm.check(f"mean {name}", ours["all", name], sum(per_topic) / len(per_topic))
    mm.done()


# --------------------------------------------------------------------------- gdeval

GDEVAL_CUTOFFS = (3, 10)


def compare_gdeval(qrels, run) -> Mismatches:
    """ERR@k (R = (2^g - 1)/16) and nDCG(dcg='exp-log2')@k. gdeval ranks by float64 scores with
    docno descending, like rpdi's default. It prints no line for a topic without positive
    judgments or not in the run; ir_measures (and rpdi) report 0 there."""
    mm = Mismatches("gdeval")
    measures = [m for k in GDEVAL_CUTOFFS for m in (ir_measures.ERR @ k, ir_measures.nDCG(dcg="exp-log2") @ k)]
    theirs = {(m.query_id, str(m.measure)): float(m.value)
              for m in ir_measures.gdeval.iter_calc(measures, qrels, run)}
    ours = rpdi_per_topic(qrels, run, [f"ERR@{k}" for k in GDEVAL_CUTOFFS]
                          + [f"nDCG(dcg='exp-log2')@{k}" for k in GDEVAL_CUTOFFS])
    assert {t for t, _ in theirs} == set(qrels)
    for topic in qrels:
        for k in GDEVAL_CUTOFFS:
            for name in (f"ERR@{k}", f"nDCG(dcg='exp-log2')@{k}"):
                mm.check(f"topic {topic} {name}", ours[topic, name]["value"], theirs[topic, name], GDEVAL_TOL)
    return mm


@settings(max_examples=80, **SETTINGS)
@given(collections())
def test_gdeval_err_and_exp_ndcg(collection):
    qrels, run = collection
    compare_gdeval(qrels, run).done(f"on qrels={qrels} run={run}")


def test_gdeval_fixed_cases():
    """Positive judgments beyond the cutoff while the longest ranking is exactly k = 3 long
    (the ideal DCG still stops at k), all-tied scores (docno descending), grade 4."""
    qrels = {"1": {"d1": 4, "d2": 3, "d3": 1, "d4": 2, "d5": 2, "d6": -1},
             "2": {"d9": 1, "d10": 2, "d11": 0}}
    run = {"1": {"d1": 0.5, "d3": 0.7, "d30": 0.6},
           "2": {"d10": 1.0, "d9": 1.0, "d11": 1.0}}
    compare_gdeval(qrels, run).done()


# --------------------------------------------------------------------------- rbp_eval

PERSISTENCES = (0.5, 0.8, 0.95)
RBP_DEPTHS = (5, 10, DEPTH_FULL)


def rbp_eval_results(qrels, run, reltype, arg):
    """{(topic, depth, p): (sum, err)} from rbp_eval's API. Negative grades are rejected by
    rbp_eval; rpdi treats them as unjudged, so they are left out of rbp_eval's qrels."""
    qtext = "".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items() if g >= 0)
    rtext = "".join(f"{t} Q0 {d} {i} {s!r} sys\n" for t, docs in run.items()
                    for i, d in enumerate(trec_order(docs), 1) for s in [docs[d]])
    q = load_qrels(io.StringIO(qtext))
    q.set_reltype(reltype, arg)
    res = rbp_evaluate(q, load_run(io.StringIO(rtext)), Ordering.SCORE, list(PERSISTENCES), list(RBP_DEPTHS))
    out = {}
    for r in res.qid_res:
        if r.num_rel < 0:  # no qrels for this topic
            continue
        for di, depth in enumerate(RBP_DEPTHS):
            for pi, p in enumerate(PERSISTENCES):
                pr = r.depth_res[di].persist_res[pi]
                out[r.qid, depth, p] = (pr.sum, pr.err)
    return out


def compare_rbp_eval(qrels, run) -> Mismatches:
    """RBP(rel=1,p) and RBP(rel=2,p) against RelType.BINARY, graded RBP(p) (gain grade / the
    qrels' largest grade) against RelType.FRACT with scale 1/max grade; value and residual, to
    depths 5 and 10 (rpdi ``@k``) and full. rbp_eval leaves out qrels topics missing from the
    run; for them rpdi reports value 0 and residual p^0 = 1, checked here too."""
    assert all(d == d.lower() for docs in run.values() for d in docs), "rbp_eval lower-cases ids"
    mm = Mismatches("rbp_eval")
    max_grade = max([g for docs in qrels.values() for g in docs.values()] + [0])
    variants = [("rel=1,", RelType.BINARY, 1), ("rel=2,", RelType.BINARY, 2),
                ("", RelType.FRACT, 1 / max_grade if max_grade > 0 else 1.0)]
    for prefix, reltype, arg in variants:
        theirs = rbp_eval_results(qrels, run, reltype, arg)
        names = {(d, p): f"RBP({prefix}p={p})" + ("" if d == DEPTH_FULL else f"@{d}")
                 for d in RBP_DEPTHS for p in PERSISTENCES}
        ours = rpdi_per_topic(qrels, run, list(names.values()))
        for topic in qrels:
            has_qrels = any(g >= 0 for g in qrels[topic].values())
            for (d, p), name in names.items():
                mine = ours[topic, name]
                if not run.get(topic) or not has_qrels:
                    # rbp_eval leaves out a topic not in the run (or with an empty ranking) and
                    # one whose judgments are all negative: nothing judged is retrieved, so
                    # rpdi's value is 0 and its residual the whole weight, 1
                    mm.check(f"topic {topic} {name} (nothing judged retrieved) value", mine["value"], 0.0)
                    mm.check(f"topic {topic} {name} (nothing judged retrieved) residual", mine["residual"], 1.0)
                    continue
                value, residual = theirs[topic, d, p]
                mm.check(f"topic {topic} {name} value", mine["value"], value)
                mm.check(f"topic {topic} {name} residual", mine["residual"], residual)
    return mm


@settings(max_examples=100, **SETTINGS)
@given(collections(tied=False))
def test_rbp_eval_value_and_residual(collection):
    qrels, run = collection
    compare_rbp_eval(qrels, run).done(f"on qrels={qrels} run={run}")


def test_known_difference_rbp_eval_averages_weights_over_tied_scores():
    """rbp_eval does not break ties: each tied document gets the mean of the weights of the ranks
    the tie spans. rpdi breaks ties like trec_eval (docno descending: c, b, a), so with only 'a'
    relevant rpdi gives weight (1-p)p^2 and rbp_eval (1-p)(1+p+p^2)/3."""
    qrels = {"1": {"a": 1, "b": 0, "c": 0}}
    run = {"1": {"a": 1.0, "b": 1.0, "c": 1.0}}
    q = load_qrels(io.StringIO("1 0 a 1\n1 0 b 0\n1 0 c 0\n"))
    res = rbp_evaluate(q, load_run(io.StringIO("1 Q0 a 1 1.0 r\n1 Q0 b 2 1.0 r\n1 Q0 c 3 1.0 r\n")),
                       Ordering.SCORE, [0.8], [DEPTH_FULL])
    theirs = res.qid_res[0].depth_res[0].persist_res[0].sum
    ours = rpdi_per_topic(qrels, run, ["RBP(rel=1,p=0.8)"])["1", "RBP(rel=1,p=0.8)"]["value"]
    assert math.isclose(theirs, 0.2 * (1 + 0.8 + 0.64) / 3, abs_tol=TOL)
    assert math.isclose(ours, 0.2 * 0.64, abs_tol=TOL)


# --------------------------------------------------------------------------- cwl_eval

def cwl_scores(qrels, topic, ranking, metric, gain, max_n):
    """(EU, residual EU) of a cwl metric on one ranking fed in trec order. ``gain(grade)`` maps
    a grade to [0, 1]; documents with negative grades are left unjudged, as rpdi treats them."""
    handler = TrecQrelHandler(None)
    for d, g in qrels[topic].items():
        if g >= 0:
            handler.put_value(topic, d, float(gain(g)))
    maker = RankingMaker(topic, handler, None, max_gain=1.0, min_gain=0.0, max_cost=1.0, min_cost=1.0, max_n=max_n)
    for d in ranking:
        maker.add(d, "_")
    metric.residuals = True
    metric.measure(maker.get_ranking())
    return float(metric.expected_utility), float(metric.residual_expected_utility)


CWL_DEPTHS = (5, 12, 1000)


def compare_cwl(qrels, run) -> Mismatches:
    """SDCG@k = cwl NDCGCWLMetric(k) EU (gains grade / max grade; cwl's W over n = 1000 is
    exactly SDCG's normalisation for k <= 1000).

    RBP: cwl truncates the ranking to max_depth n and renormalises the weights over those n
    ranks: EU = (1-p)/(1-p^n) sum_{i<=n} p^(i-1) g_i. Its best case counts unjudged ranks and
    the padding up to n as gain 1. So, exactly, with rpdi's RBP(p)@n:
        value    = EU (1 - p^n)
        residual = ResEU (1 - p^n) + p^n
    compared for n = 5, 12 (rankings longer than n are truncated) and 1000, graded and rel=1."""
    mm = Mismatches("cwl_eval")
    max_grade = max([g for docs in qrels.values() for g in docs.values()] + [0])
    graded = (lambda g: g / max_grade) if max_grade > 0 else (lambda g: 0.0)
    binary = lambda g: 1.0 if g >= 1 else 0.0  # noqa: E731
    names = [f"SDCG@{k}" for k in CUTOFFS]
    names += [f"RBP({r}p={p})@{n}" for r in ("", "rel=1,") for p in PERSISTENCES for n in CWL_DEPTHS]
    ours = rpdi_per_topic(qrels, run, names)
    for topic in qrels:
        ranking = trec_order(run.get(topic, {}))
        for k in CUTOFFS:
            eu, _ = cwl_scores(qrels, topic, ranking, NDCGCWLMetric(k), graded, 1000)
            mm.check(f"topic {topic} SDCG@{k}", ours[topic, f"SDCG@{k}"]["value"], eu)
        for r, gain in (("", graded), ("rel=1,", binary)):
            for p in PERSISTENCES:
                for n in CWL_DEPTHS:
                    eu, res = cwl_scores(qrels, topic, ranking, RBPCWLMetric(p), gain, n)
                    mine = ours[topic, f"RBP({r}p={p})@{n}"]
                    mm.check(f"topic {topic} RBP({r}p={p})@{n} value", mine["value"], eu * (1 - p ** n))
                    mm.check(f"topic {topic} RBP({r}p={p})@{n} residual", mine["residual"],
                             res * (1 - p ** n) + p ** n)
    return mm


@settings(max_examples=40, **SETTINGS)
@given(collections())
def test_cwl_eval_sdcg_and_rbp(collection):
    qrels, run = collection
    compare_cwl(qrels, run).done(f"on qrels={qrels} run={run}")


# --------------------------------------------------------------------------- CAsT 2021

def _load_cast_check():
    path = REPO / "tests" / "checks" / "cast2021_vs_pytrec_eval.py"
    spec = importlib.util.spec_from_file_location("cast2021_vs_pytrec_eval", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cast2021_runs_agree_with_pytrec_eval(capsys):
    """The real CAsT 2021 qrels and five runs (bundled with rpdi), through the standalone check
    script."""
    check = _load_cast_check()
    data = check.default_data_dir()
    status = check.main([str(data)])
    out = capsys.readouterr().out
    assert status == 0, out
    compared = int(out.split("compared ")[1].split()[0])
    assert compared > 5 * 150 * 8, out
    COUNTS["pytrec_eval (CAsT 2021)"] += compared


@pytest.mark.parametrize("topics", ["qrels", "intersection"])
def test_undefined_values_in_the_mean(topics):
    """AP of a topic with no relevant document (R = 0) is undefined: 0 in the mean by default, as
    trec_eval counts it; left out of the mean with undefined="null". Worked by hand: t1 AP 1,
    t2 undefined, t3 AP 1/2 (its relevant document second), t4 not retrieved (0 under the qrels'
    topics, absent from the intersection); gm_map floors a 0 at 1e-5."""
    qrels = {"t1": {"a": 1, "b": 0}, "t2": {"c": 0}, "t3": {"d": 1}, "t4": {"e": 1}}
    run = {"s": {"t1": {"a": 2.0, "b": 1.0}, "t2": {"c": 1.0}, "t3": {"x": 1.0, "d": 0.5}}}
    mean = lambda undefined, m="AP": next(r["value"] for r in evaluate(  # noqa: E731
        qrels, run, [m], topics=topics, undefined=undefined) if r["topic"] == "all")
    counted = [1, 0, 0.5] + ([0] if topics == "qrels" else [])
    assert mean("zero") == pytest.approx(sum(counted) / len(counted))
    defined = [1, 0.5] + ([0] if topics == "qrels" else [])
    assert mean("null") == pytest.approx(sum(defined) / len(defined))
    floors = [max(x, 1e-5) for x in counted]
    assert mean("zero", "gm_map") == pytest.approx(math.exp(sum(map(math.log, floors)) / len(floors)))
    per_topic = {r["topic"]: r["value"] for r in evaluate(qrels, run, ["AP"], topics=topics, undefined="null",
                                                          per_topic=True)}
    assert per_topic["t2"] is None and per_topic["t1"] == 1.0
