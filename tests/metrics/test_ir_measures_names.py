"""metrics/ir_measures_names.py: every measure of ir_measures' registry, read from the installed
package, is accepted by rpdi under its ir_measures name and parameters (as text and as an
ir_measures ``Measure`` object) and gives ir_measures' number per topic, on the bundled CAsT
2021 runs and on random collections (ties, unjudged documents, negative grades, topics with
nothing relevant or missing from the run; none whose judgments are all negative, which
pytrec_eval cannot evaluate) — or is listed in ``DIFFERENCES`` with why.

ir_measures chooses a provider per measure (pytrec_eval, cwl_eval, gdeval, msmarco, judged,
...); the test asks it which one and compares with that provider's conventions: pytrec_eval is
trec_eval 9.x with float32 scores, which rpdi's ``compat="pytrec_eval"`` reproduces; gdeval
prints 5 decimals. A measure listed as differing on ties is compared where no scores tie.
"""

from __future__ import annotations

import gzip
import importlib.util
import math
from pathlib import Path

import ir_measures
import pytest
from hypothesis import given, settings

from rpdi.metrics import evaluate, parse_measure
from rpdi.metrics.ir_measures_names import DIFFERENCES, Difference


def _shared():
    """tests/metrics/test_measures.py, for its random collections (the test folder is not a package)."""
    path = Path(__file__).with_name("test_measures.py")
    spec = importlib.util.spec_from_file_location("_test_measures_shared", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SHARED = _shared()
SETTINGS, TOL, collections = _SHARED.SETTINGS, _SHARED.TOL, _SHARED.collections
GDEVAL_TOL = 5e-6 + 1e-12  # gdeval prints %.5f

# the names tried for each name of ir_measures' registry: its parameters, as its users write them
CASES: dict[str, list[str]] = {
    "Accuracy": ["Accuracy", "Accuracy@5", "Accuracy(rel=2)@10"],
    "Compat": ["Compat", "Compat(p=0.8)", "Compat(normalize=False)"],
    "AP": ["AP", "AP@5", "AP(rel=2)", "AP(judged_only=True)"],
    "MAP": ["MAP", "MAP@10"],
    "BPM": ["BPM(max_rel=4)@10", "BPM(T=2.0,max_rel=4)@5", "BPM(T=1.5,min_rel=1,max_rel=3)@20"],
    "Bpref": ["Bpref", "Bpref(rel=2)"],
    "BPref": ["BPref"],
    "ERR": ["ERR@5", "ERR@20"],
    "INST": ["INST(max_rel=4)", "INST(T=3.0,max_rel=4)", "INST(min_rel=1,max_rel=3)"],
    "INSQ": ["INSQ(max_rel=4)", "INSQ(T=2.0,min_rel=1,max_rel=4)"],
    "infAP": ["infAP", "infAP(rel=2)"],
    "IPrec": ["IPrec@0.2", "IPrec(recall=0.5)", "IPrec(judged_only=True)@0.3"],
    "Judged": ["Judged@5", "Judged"],
    "nDCG": ["nDCG", "nDCG@5", "nDCG(dcg='exp-log2')@10", "nDCG(gains={0:0,1:1,2:3,3:7,4:15})@10",
             "nDCG(judged_only=True)@5"],
    "NDCG": ["NDCG@10"],
    "NERR8": ["NERR8(max_rel=4)@5", "NERR8(min_rel=1,max_rel=3)@10"],
    "NERR9": ["NERR9(max_rel=4)@10"],
    "NERR10": ["NERR10(max_rel=4)", "NERR10(p=0.7,min_rel=1,max_rel=4)"],
    "NERR11": ["NERR11(max_rel=4)", "NERR11(T=3.0,max_rel=4)"],
    "NumQ": ["NumQ"],
    "NumRel": ["NumRel"],
    "NumRet": ["NumRet", "NumRet(rel=2)"],
    "NumRelRet": ["NumRelRet"],
    "P": ["P@5", "P(rel=2)@10", "P(judged_only=True)@5"],
    "Precision": ["Precision@10"],
    "R": ["R@10", "R(judged_only=True)@5"],
    "Recall": ["Recall@10"],
    "RBP": ["RBP(rel=1)", "RBP(rel=2,p=0.9)"],
    "Rprec": ["Rprec", "Rprec(rel=2)", "Rprec(judged_only=True)"],
    "RPrec": ["RPrec"],
    "RR": ["RR", "RR(rel=2)", "RR@5", "RR(judged_only=True)"],
    "MRR": ["MRR", "MRR@10"],
    "SDCG": ["SDCG(max_rel=4)@10", "SDCG(min_rel=1,max_rel=3)@5"],
    "SetP": ["SetP", "SetP(rel=2)", "SetP(relative=True)", "SetP(judged_only=True)"],
    "SetRelP": ["SetRelP"],
    "SetR": ["SetR", "SetR(rel=2)"],
    "SetF": ["SetF", "SetF(beta=2.0)", "SetF(judged_only=True)"],
    "SetAP": ["SetAP", "SetAP(judged_only=True)"],
    "Success": ["Success@1", "Success(rel=2)@5", "Success(judged_only=True)@5"],
    # the diversity measures, on diversity qrels (test_diversity_names_equal_ir_measures); ir_measures'
    # pyndeval provider cannot take judged_only=True (it hands pyndeval a dict where it iterates tuples)
    "ERR_IA": ["ERR_IA@5", "ERR_IA@20", "ERR_IA(rel=2)@10"],
    "nERR_IA": ["nERR_IA@10", "nERR_IA(rel=2)@20"],
    "alpha_DCG": ["alpha_DCG@10", "alpha_DCG(alpha=0.3)@20"],
    "α_DCG": ["α_DCG@5"],
    "alpha_nDCG": ["alpha_nDCG@20", "alpha_nDCG(alpha=0.7)@5", "alpha_nDCG(rel=2)@10"],
    "α_nDCG": ["α_nDCG@20"],
    "NRBP": ["NRBP", "NRBP(alpha=0.3,beta=0.8)"],
    "nNRBP": ["nNRBP", "nNRBP(beta=0.7)", "nNRBP(rel=2)"],
    "AP_IA": ["AP_IA", "AP_IA(rel=2)"],
    "MAP_IA": ["MAP_IA"],
    "P_IA": ["P_IA@5", "P_IA(rel=2)@10"],
    "StRecall": ["StRecall@5", "StRecall(rel=2)@20"],
}


def _registry() -> dict:
    from ir_measures.measures import registry

    return registry


def _tested(diversity: bool | None = False) -> list[tuple[str, str]]:
    """(registry name, name tried): those of diversity qrels, the others, or (None) all."""
    return [(key, text) for key in _registry() for text in CASES.get(key, [])
            if diversity is None or parse_measure(text).spec.intents == diversity]


def _provider(measure) -> str:
    """The provider ir_measures computes the measure with: the first available that supports it."""
    for provider in ir_measures.DefaultPipeline.providers:
        if provider.is_available() and provider.supports(measure):
            return provider.NAME
    raise AssertionError(f"ir_measures has no provider for {measure}")


def test_every_registry_name_is_tried_or_listed():
    """The registry of the installed ir_measures, each name tried here; no entry of DIFFERENCES
    names a measure ir_measures does not have."""
    registry = _registry()
    missing = [k for k in registry if not CASES.get(k)]
    assert not missing, f"ir_measures names not tried: {missing}"
    assert set(DIFFERENCES) <= set(registry), set(DIFFERENCES) - set(registry)
    assert set(CASES) <= set(registry), set(CASES) - set(registry)
    for key, difference in DIFFERENCES.items():
        if "parameters" in difference.when:
            assert set(difference.equals) <= set(CASES[key]), key


@pytest.mark.parametrize("key, text", _tested(None))
def test_a_name_and_its_measure_object_are_accepted(key, text):
    """The text, and ir_measures' object for it (whose str() leaves out its defaults), each parse."""
    theirs = ir_measures.parse_measure(text)
    assert parse_measure(text).text == text
    assert parse_measure(theirs).text == str(theirs)


def _theirs(measures, qrels, run, topics: dict[str, set]) -> dict[tuple[str, str], float]:
    """ir_measures' values {(str(measure), topic): value}, one call per measure name (ir_measures'
    pytrec_eval provider reports NumRet from each of its invocations, the last one winning, when
    a call mixes, say, judged_only and not); for a provider that raises on some topics (Accuracy's
    divides by zero where every document retrieved is relevant), topic by topic, those left out.
    ``topics``: the topics compared, by measure name (ir_measures is given only those)."""
    def calc(measures, qrels, run):
        return {(str(m.measure), m.query_id): float(m.value) for m in ir_measures.iter_calc(measures, qrels, run)}

    theirs = {}
    for name in {m.NAME for m in measures} - set(UNSAFE):
        theirs |= calc([m for m in measures if m.NAME == name], {t: qrels[t] for t in topics[name]},
                       {t: run[t] for t in topics[name] if t in run})
    for m in measures:
        if m.NAME in UNSAFE:
            for topic in topics[m.NAME]:
                try:
                    theirs |= calc([m], {topic: qrels[topic]}, {topic: run[topic]} if topic in run else {})
                except ZeroDivisionError:
                    pass
    return theirs


# ir_measures' provider divides by zero on some topics where the value is undefined (DIFFERENCES says so)
UNSAFE = tuple(key for key, difference in DIFFERENCES.items() if "undefined" in difference.when)


def _outside(docs: dict[str, float] | None, when: tuple[str, ...]) -> bool:
    """A topic's ranking (None: not in the run) lies outside the conditions a difference names."""
    scores = list((docs or {}).values())
    return not ("ties" in when and len(set(scores)) < len(scores)) and \
        not ("scores <= 0" in when and any(x <= 0 for x in scores)) and not ("missing" in when and not docs)


def _rewritten(measure) -> bool:
    """ir_measures' measure is asked as its provider defines it (see _compare)."""
    return bool(measure.params.get("judged_only") or measure.params.get("gains"))


def _compare(qrels, run, cases) -> list[str]:
    """Per topic, every case against ir_measures, by name and as ir_measures' object, on the
    topics outside the conditions its difference names (if any); the disagreements."""
    chosen = []  # (text, ir_measures measure, provider, rpdi names, compat, topics, undefined listed)
    for key, text in cases:
        difference = DIFFERENCES.get(key, Difference(""))
        topics = [t for t in qrels if _outside(run.get(t), difference.when)]
        measure = ir_measures.parse_measure(text)
        provider = _provider(measure)
        if provider == "gdeval" and not all(t.isdigit() for t in qrels):
            continue  # gdeval reads numeric topic ids only (CAsT's are 106_1, ...)
        names = (text, measure)
        if difference.equals and text in difference.equals:
            names = (difference.equals[text],)  # the rpdi name said to give ir_measures' number
        compat = "pytrec_eval" if provider == "pytrec_eval" else "trec_eval"
        chosen.append((text, measure, provider, names, compat, topics, "undefined" in difference.when))
    # a TREC run cannot hold a topic with no documents: ir_measures is given the run without them
    nonempty = {t: docs for t, docs in run.items() if docs}
    topics = {}
    for c in chosen:
        topics.setdefault(c[1].NAME, set()).update(c[5])
    theirs = _theirs(list({str(c[1]): c[1] for c in chosen if not _rewritten(c[1])}.values()),
                     qrels, nonempty, topics)
    # judged_only=True and gains={...}: ir_measures runs pytrec_eval with trec_eval's -J, or on
    # qrels mapped through the gains; pytrec_eval keeps state between evaluators in a process,
    # and after other tests these calls gave wrong values (nDCG 0 for 1). They are asked the
    # same measure as its provider defines it: on the run without its unjudged documents, or on
    # the qrels with every grade mapped through the gains.
    judged = {t: {d: x for d, x in docs.items() if qrels.get(t, {}).get(d, -1) >= 0} for t, docs in nonempty.items()}
    judged = {t: docs for t, docs in judged.items() if docs}
    for c in chosen:
        if _rewritten(c[1]):
            params = {k: v for k, v in c[1].params.items() if k not in ("judged_only", "gains", "cutoff")}
            plain = type(c[1])()(**params) if params else type(c[1])()
            if "cutoff" in c[1].params:
                plain = plain @ c[1].params["cutoff"]
            gains = c[1].params.get("gains") or {}
            mapped = {t: {d: gains.get(g, g) for d, g in docs.items()} for t, docs in qrels.items()}
            values = _theirs([plain], mapped, judged if c[1].params.get("judged_only") else nonempty,
                             {plain.NAME: topics[c[1].NAME]})
            theirs |= {(str(c[1]), t): x for (_, t), x in values.items()}
    ours = {}
    for compat in {c[4] for c in chosen}:
        names = [n for c in chosen if c[4] == compat for n in c[3]]
        for r in evaluate(qrels, {"s": run}, names, per_topic=True, compat=compat):
            ours[compat, r["measure"], r["topic"]] = r["value"]
    bad = []
    for text, measure, provider, names, compat, topics, undefined in chosen:
        tol = GDEVAL_TOL if provider == "gdeval" else TOL
        for name in names:
            for topic in topics:
                mine = ours[compat, str(name), topic]
                other = theirs.get((str(measure), topic))
                if other is None and undefined:
                    continue  # ir_measures gives no number where the value is undefined
                if other is None or mine is None or not (math.isnan(other) and mine == 0 or abs(mine - other) <= tol):
                    bad.append(f"{text} ({provider}{', as object ' + str(measure) if name is measure else ''}) "
                               f"topic {topic}: rpdi {mine!r} vs ir_measures {other!r}")
    return bad


# every topic has a judgment >= 0: pytrec_eval, behind most of ir_measures' measures, cannot
# evaluate a topic whose judgments are all negative (stale buffers, or no return at all)
@settings(max_examples=25, **SETTINGS)
@given(collections(all_negative=False))
def test_ir_measures_names_on_tied_collections(collection):
    qrels, run = collection
    bad = _compare(qrels, run, _tested())
    assert not bad, f"{len(bad)} disagreements on qrels={qrels} run={run}\n" + "\n".join(bad[:20])


@settings(max_examples=25, **SETTINGS)
@given(collections(tied=False, all_negative=False))
def test_ir_measures_names_on_untied_collections(collection):
    qrels, run = collection
    bad = _compare(qrels, run, _tested())
    assert not bad, f"{len(bad)} disagreements on qrels={qrels} run={run}\n" + "\n".join(bad[:20])


CAST_RUNS = ("org_convdr", "org_convdr_bert")  # no ties; ties (91 topics) and scores <= 0


def _cast():
    """The CAsT 2021 qrels and two of the bundled runs."""
    import pytrec_eval

    from rpdi.experiments.bundled import CAST2021_QRELS

    data = Path(CAST2021_QRELS).parent
    with gzip.open(data / "qrels.txt.gz", "rt") as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    runs = []
    for name in CAST_RUNS:
        with gzip.open(data / "runs" / f"{name}.run.gz", "rt") as fh:
            runs.append(pytrec_eval.parse_run(fh))
    return qrels, runs


def test_ir_measures_names_on_cast2021():
    """Two bundled runs, every topic (outside the conditions of a listed difference): one
    without ties, one with ties and scores <= 0."""
    qrels, runs = _cast()
    bad = [line for run in runs for line in _compare(qrels, run, _tested())]
    assert not bad, f"{len(bad)} disagreements\n" + "\n".join(bad[:30])


def _diversity_collection(seed: int):
    """tests/metrics/test_diversity_ndeval.py's collection, each run's scores made distinct (pyndeval
    orders ties otherwise: ties are compared with pyndeval itself there)."""
    path = Path(__file__).with_name("test_diversity_ndeval.py")
    spec = importlib.util.spec_from_file_location("_test_diversity_ndeval_shared", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    qrels, runs = module.collection(seed)
    runs = {name: {t: {d: -float(r) for r, d in enumerate(module.traditional_order(docs))} for t, docs in run.items()}
            for name, run in runs.items()}
    return qrels, runs


@pytest.mark.parametrize("seed", range(3))
def test_diversity_names_equal_ir_measures(seed):
    """Every diversity name of ir_measures' registry, by name and as its object, per topic against
    ir_measures (its pyndeval provider) on diversity qrels given with their subtopics as the
    iteration column: subtopics, documents relevant to none, unjudged documents, a topic with
    nothing relevant (ndeval's nNRBP there is nan: rpdi reports an undefined value as 0)."""
    qrels, runs = _diversity_collection(seed)
    lines = [ir_measures.Qrel(t, d, g, s) for t, per in qrels.items() for s, docs in per.items()
             for d, g in docs.items()]
    lines.sort(key=lambda q: int(q.iteration))  # pyndeval numbers subtopics by first appearance: keep ndeval's order
    cases = _tested(diversity=True)
    bad, compared = [], 0
    for name, run in runs.items():
        measures = [ir_measures.parse_measure(text) for _, text in cases]
        # one call per measure: in one call ir_measures' pyndeval provider hands its run, a generator, to
        # one pyndeval invocation per (rel, alpha, beta), and the later ones get it empty (every value 0)
        theirs = {(str(m.measure), m.query_id): m.value for measure in measures
                  for m in ir_measures.iter_calc([measure], lines, run)}
        ours = {(r["measure"], r["topic"]): r["value"]
                for r in evaluate(qrels, {name: run}, [text for _, text in cases] + measures, per_topic=True)}
        for (_, text), measure in zip(cases, measures):
            for topic in run:
                other = theirs[str(measure), topic]
                for mine in (ours[text, topic], ours[str(measure), topic]):
                    compared += 1
                    if not (math.isnan(other) and mine == 0 or abs(mine - other) <= TOL):
                        bad.append(f"{name} {text} topic {topic}: rpdi {mine!r} vs ir_measures {other!r}")
    assert compared == len(runs) * len(cases) * 7 * 2 and not bad, "\n".join(bad[:20])
