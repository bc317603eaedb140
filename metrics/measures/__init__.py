"""rpdi's measures, one module per family: each holds its measures' declarations
(:class:`~metrics.measures.registry.MeasureSpec`, with their typed parameters) next to their
closed forms, and registers them (:func:`~metrics.measures.registry.register`) when imported.
:mod:`~metrics.measures.registry` holds the declaration machinery and the parsing of names,
:mod:`~metrics.measures.kernels` the numeric pieces several families share.

A closed form takes a :class:`~metrics.view.View` (the rankings cut at depth k) and the measure's
parameters, vectorised over (run, topic, rank) arrays, and returns a
:class:`~metrics.view.Score`. Notation: g_i the grade at rank i, b_i = [g_i >= rel], R the number
of judged documents with grade >= rel, n the ranking's length, k the cutoff. Undefined values are
NaN; :mod:`metrics.evaluate` reports them as 0 (trec_eval) or null. The examples use
:func:`metrics.score`, which scores one grade vector.
"""

# The families register their measures as they are imported: this order is the order of
# `rpdi measures` (keep it when sorting imports).
from rpdi.metrics.measures import (precision_recall, average_precision, reciprocal_rank, rprec,  # noqa: F401
                                   satisfaction, dcg, rbp, err, cwl, bpm, ift, umeasure, economic, tbg, counts,
                                   bpref, utility, unjudged, trec_gain, rbo, agreement, diversity, session)
