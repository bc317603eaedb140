"""Doctests in the packages see ``score`` (one grade vector, one measure) without importing it."""

import pytest


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    from metrics import score

    doctest_namespace["score"] = score
