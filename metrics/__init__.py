"""Closed-form effectiveness metrics on TREC qrels and runs.

``evaluate`` scores runs (paths, objects or dicts) with measures named as in ir_measures;
``score`` scores one grade vector; ``parse_measure`` and ``MEASURES`` expose the declarations.
This package knows nothing of users or simulation.
"""

from rpdi.metrics.evaluate import evaluate, load_qrels, load_runs, rankings_from_grades, score
from rpdi.metrics.measures.registry import MEASURES, Measure
from rpdi.metrics.names import parse_measure
from rpdi.metrics.rankings import Rankings, build_rankings
from rpdi.metrics.errors import InputError
from rpdi.metrics.trec import Qrels, Run, read_qrels, read_run

__all__ = ["evaluate", "score", "load_qrels", "load_runs", "rankings_from_grades", "MEASURES",
           "Measure", "parse_measure", "Rankings", "build_rankings", "InputError", "Qrels", "Run",
           "read_qrels", "read_run"]
