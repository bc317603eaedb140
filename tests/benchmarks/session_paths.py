"""Time and peak memory of the path-DCG session measures on one bundled CAsT 2021 run: one
measure per call (``python tests/benchmarks/session_paths.py "esDCG@100"``), printing its
seconds, its peak traced memory (MiB) and the mean value."""

import sys
import time
import tracemalloc

from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.metrics.evaluate import load_qrels, load_runs
from rpdi.metrics.names import parse_measure
from rpdi.metrics.rankings import build_rankings
from rpdi.metrics.sessions import session_score, sessions_from_ids

qrels, runs = load_qrels(CAST2021_QRELS), load_runs(cast2021_runs()[:1])
rankings = build_rankings(qrels, runs)
sessions = sessions_from_ids(rankings.topics)
for name in sys.argv[1:]:
    tracemalloc.start()
    start = time.perf_counter()
    try:
        score = session_score(parse_measure(name), rankings, sessions)
        shown = f"mean {float(score.value[0].mean()):.6f}"
    except Exception as error:  # noqa: BLE001 - the measurement reports what failed
        shown = f"{type(error).__name__}: {str(error)[:100]}"
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
    tracemalloc.stop()
    print(f"{name}: {seconds:.2f} s, peak {peak:.0f} MiB, {shown}")
