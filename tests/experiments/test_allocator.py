"""The process settings of experiments/allocator.py, each in a fresh interpreter (they act when
numpy is first imported, or on the C library's allocator for the whole process)."""

import os
import subprocess
import sys

import pytest

ADVICE = ("from rpdi.experiments.allocator import no_huge_page_advice; no_huge_page_advice(); "
          "import os, numpy; core = getattr(numpy, '_core', None) or numpy.core; "  # (numpy 1.26: numpy.core)
          "print(os.environ['NUMPY_MADVISE_HUGEPAGE'], core.multiarray._get_madvise_hugepage())")


def _advice(environment: dict) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"} | environment
    done = subprocess.run([sys.executable, "-c", ADVICE], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy gives huge-page advice on Linux only")
def test_numpy_gives_no_huge_page_advice_unless_asked_to():
    assert _advice({}) == "0 False"
    assert _advice({"NUMPY_MADVISE_HUGEPAGE": "1"}) == "1 True"  # the user's own setting is kept
