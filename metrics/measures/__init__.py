"""Measure declarations: :mod:`~metrics.measures.registry` holds the declaration machinery and the
parsing of rpdi's names, :mod:`~metrics.measures.kernels` the numeric pieces several closed forms
share; the measures themselves are declared and registered in :mod:`metrics.closed_forms`."""

from rpdi.metrics import closed_forms  # noqa: F401  (registers the measures)
