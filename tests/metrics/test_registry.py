"""metrics/measures/registry.py: a measure registered from outside the package is a measure
everywhere names are parsed; a name declared twice is refused."""

from __future__ import annotations

import pytest

from rpdi.metrics import InputError, parse_measure, score
from rpdi.metrics.measures.registry import MEASURES, REL, MeasureSpec, register
from rpdi.metrics.view import Score


def _relevant_count(v, rel):
    """RelCount@k = sum_{i<=k} b_i."""
    return Score(v.relevant(rel).sum(axis=-1))


def test_a_measure_registered_from_outside_is_parsed_and_scored():
    spec = MeasureSpec("RelCount", _relevant_count, (REL,), "required", "counts the relevant documents", "test")
    register(spec)
    try:
        assert list(MEASURES)[-1] == "RelCount"
        assert parse_measure("RelCount(rel=2)@5").params == {"rel": 2.0}
        assert score("RelCount@3", [1, 0, 2, 1]) == 2.0
        assert score("RelCount(rel=2)@3", [1, 0, 2, 1]) == 1.0
        register(spec)  # the same declaration again (a module executed twice): ignored
        assert list(MEASURES).count("RelCount") == 1
    finally:
        MEASURES.pop("RelCount")


def test_a_name_declared_twice_is_refused():
    other = MeasureSpec("P", _relevant_count, (REL,), "required", "counts the relevant documents", "test")
    with pytest.raises(InputError, match="measure 'P': declared twice"):
        register(other)
    assert MEASURES["P"].compute is not _relevant_count


def test_every_family_registers_its_measures_in_the_order_of_rpdi_measures():
    """The package imports the families in this order; the first and last of each family."""
    names = list(MEASURES)
    order = ["P", "SetAP", "AP", "YAAP", "RR", "CautiousRR", "Rprec", "RprecMult", "Success", "Best", "DCG",
             "SN-DCG", "RBP", "trec_rbp_resid", "ERR", "INST", "NERR11", "TBG", "NumQ", "NumNonRelJudgedRet",
             "Bpref", "infAP", "Utility", "Unj", "G", "trec_ideal_dcg", "RBO", "RBO_EXT"]
    assert [n for n in names if n in order] == order
