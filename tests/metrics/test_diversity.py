"""metrics/diversity.py: diversity qrels and intent probabilities read and checked, the subtopic
grades joined with the rankings by document, and the X-IA names (metrics/measures/diversity_ia.py)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from rpdi.metrics import InputError, evaluate, parse_measure
from rpdi.metrics.diversity import diversity_rankings, read_diversity_qrels, read_intents
from rpdi.metrics.measures.diversity_ia import intent_aware_base
from rpdi.metrics.rankings import judged_only, truncate
from rpdi.metrics.trec import read_run

SMALL = Path(__file__).parents[1] / "data" / "diversity"
QRELS, RUN = (SMALL / "small.qrels").read_bytes(), (SMALL / "small.run").read_bytes()


def _files(tmp_path, qrels=QRELS, run=RUN):
    (tmp_path / "div.qrels").write_bytes(qrels)
    (tmp_path / "r.run").write_bytes(run)
    return tmp_path / "div.qrels", tmp_path / "r.run"


def test_subtopic_grades_follow_the_documents(tmp_path):
    """Every subtopic's grade of each ranked document, read independently from the file; the
    topic-level grade is the largest; subtopics in ndeval's (numeric) order; tied scores docno
    descending (e2 before e1, as trec_eval and ndeval -traditional)."""
    q, r = _files(tmp_path)
    rankings = diversity_rankings(read_diversity_qrels(q), [read_run(r)])
    intents = rankings.intents
    assert intents.subtopics.tolist() == [["1", "2", "3"], ["7", "10", ""]]
    assert intents.mask.tolist() == [[True, True, True], [True, True, False]]
    expected = {}
    for line in QRELS.decode().splitlines():
        t, s, d, g = line.split()
        expected[t, s, d] = float(g)
    docs = {"1": ["d2", "x1", "d4", "d1"], "2": ["e2", "e1"]}
    grades = intents.grades(rankings.doc)
    for t, topic in enumerate(["1", "2"]):
        for rank, d in enumerate(docs[topic]):
            for i, s in enumerate(intents.subtopics[t]):
                assert grades[0, t, rank, i] == expected.get((topic, s, d), 0.0), (topic, d, s)
    assert rankings.grade[0, 0, :4].tolist() == [2.0, 0.0, 0.0, 1.0]
    assert rankings.judged[0, 0, :4].tolist() == [True, False, False, True]  # d4: -1 everywhere, unjudged
    # cut, or without unjudged documents: the same documents' grades
    cut = truncate(rankings, 1)
    assert cut.intents.grades(cut.doc)[0, 0, 0].tolist() == [0.0, 2.0, 0.0]
    kept = judged_only(rankings)
    assert kept.intents.grades(kept.doc)[0, 0, 1].tolist() == [1.0, 0.0, 0.0]  # d1 moved up to rank 2


def test_uniform_intents_are_ndevals_actual_subtopics(tmp_path):
    q, r = _files(tmp_path)
    intents = diversity_rankings(read_diversity_qrels(q), [read_run(r)]).intents
    assert intents.probabilities(1).tolist() == [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]
    assert intents.probabilities(2).tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]


@pytest.mark.parametrize("text, message", [
    (b"1 1 0.5\n1 2 0.5\n3 1 1\n", "intents.txt:3: topic 3 is not in the qrels"),
    (b"1 1 0.5\n1 9 0.5\n", "intents.txt:2: topic 1 has no subtopic 9"),
    (b"# P(i|q)\n1 1 0.5\n1 2 0.6\n2 7 1\n", "intents.txt:2: topic 1: the probabilities sum to 1.1, not 1"),
    (b"1 1 -0.5\n1 2 1.5\n2 7 1\n", "intents.txt:1: probability '-0.5' is negative"),
    (b"1 1 0.5\n1 1 0.5\n2 7 1\n", "intents.txt:2: subtopic 1 appears twice for topic 1"),
    (b"1 1 1\n", "intents.txt: topic 2 of the qrels has no intent probabilities"),
    (b"1 1 x\n", "intents.txt:1: probability 'x' is not a number"),
])
def test_bad_intent_probabilities_are_one_line(tmp_path, text, message):
    q, r = _files(tmp_path)
    (tmp_path / "intents.txt").write_bytes(text)
    with pytest.raises(InputError) as info:
        evaluate(q, r, ["P-IA@2"], intents=tmp_path / "intents.txt")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_bad_intent_probabilities_from_standard_input_name_the_entry(tmp_path, monkeypatch):
    q, r = _files(tmp_path)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"1 1 0.5\n1 2 0.5\n3 1 1\n")))
    with pytest.raises(InputError, match=r"^-: entry 3: topic 3 is not in the qrels$"):
        evaluate(q, r, ["P-IA@2"], intents="-")


def test_intent_probabilities_weigh_the_intents(tmp_path):
    q, r = _files(tmp_path)
    (tmp_path / "intents.txt").write_bytes(b"1 1 0.2\n1 2 0.7\n1 3 0.1\n2 7 0.25\n2 10 0.75\n")
    got = {x["topic"]: x["value"] for x in evaluate(q, r, ["RR-IA"], intents=read_intents(tmp_path / "intents.txt"),
                                                       per_topic=True)}
    # topic 1: intent 1 first finds d1 at rank 4, intent 2 d2 at 1, intent 3 nothing
    assert got["1"] == pytest.approx(0.2 / 4 + 0.7 * 1)
    assert got["2"] == pytest.approx(0.25 / 2 + 0.75 / 1)


def test_a_subtopic_judged_twice_is_named(tmp_path):
    q, r = _files(tmp_path, QRELS + b"1 2 d2 0\n")
    with pytest.raises(InputError, match=r"div.qrels:9: document d2 appears twice for topic 1 subtopic 2"):
        read_diversity_qrels(q)


def test_intent_aware_names_parse_as_their_base():
    m = parse_measure("RBP-IA(p=0.9)@10")
    assert m.spec.name == "RBP-IA" and m.params["p"] == 0.9 and m.cutoff == 10 and m.spec.intents
    base = intent_aware_base(m)
    assert base.text == "RBP(p=0.9)@10" and base.spec.name == "RBP" and base.cutoff == 10
    assert intent_aware_base(parse_measure("RBP")) is None
    with pytest.raises(InputError, match="unknown measure 'Nope-IA'"):
        parse_measure("Nope-IA@10")
    with pytest.raises(InputError, match="RBP-IA has no parameter 'q'"):
        parse_measure("RBP-IA(q=1)")


def test_intent_aware_needs_diversity_qrels():
    with pytest.raises(InputError, match="read as plain qrels"):
        from rpdi.metrics.trec import qrels_from_dict

        evaluate(qrels_from_dict({"1": {"a": 1}}), {"s": {"1": {"a": 1.0}}}, ["RBP-IA"])
    with pytest.raises(InputError, match="no diversity or intent-aware measure"):
        evaluate({"1": {"a": 1}}, {"s": {"1": {"a": 1.0}}}, ["RBP"], intents={"1": {"1": 1.0}})


def test_a_topic_without_intents_is_undefined():
    q = {"1": {"a": {"d1": 1}}, "2": {"a": {"e1": 0}}}
    got = evaluate(q, {"s": {"1": {"d1": 1.0}, "2": {"e1": 1.0}}}, ["P-IA@1"], per_topic=True, undefined="null")
    assert [x["value"] for x in got] == [1.0, None, 1.0]
    assert np.isclose(evaluate(q, {"s": {"1": {"d1": 1.0}}}, ["P-IA@1"])[0]["value"], 0.5)
