"""How fast is fitting click models? Every metric user and standard click model on the bundled
Yandex sample (35k sessions; 75% to train).

Prints per model the wall-clock and CPU seconds of the fit (with standard errors unless
--no-stderr), and the same for PyClick's implementation of the same model, in the same run, when
PyClick is importable (``pip install git+https://github.com/markovi/PyClick``); otherwise the
anchor is reading and parsing the log. Target: all models together in seconds, not minutes.

    python tests/benchmarks/fit_speed.py [--models RBP,PBM,...] [--no-stderr] [--seed 0]
"""

import argparse
import time

from rpdi.experiments.bundled import YANDEX_SESSIONS
from rpdi.metrics.clicklogs import read_clicklog
from rpdi.usermodels.clickfit import fit
from rpdi.usermodels.clickmodels import METRIC_USERS, STANDARD

PYCLICK = {"CM": "CascadeModel", "PBM": "PBM", "UBM": "UBM", "DCM": "DCM", "DBN": "DBN", "SDBN": "SDBN", "CCM": "CCM",
           "GCTR": "GCTR", "RCTR": "RCTR", "DCTR": "DCTR"}


def timed(f):
    w, c = time.perf_counter(), time.process_time()
    out = f()
    return out, time.perf_counter() - w, time.process_time() - c


def pyclick_fit(name, path, fraction, seed):
    """PyClick's model of the same name trained on its own parse of the same file, or None."""
    try:
        import importlib

        from pyclick.utils.YandexRelPredChallengeParser import YandexRelPredChallengeParser
    except ImportError:
        return None
    import gzip
    import random
    import tempfile

    with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False) as f:
        f.write(gzip.decompress(open(path, "rb").read()))
    sessions = YandexRelPredChallengeParser().parse(f.name)
    random.Random(seed).shuffle(sessions)
    train = sessions[: int(len(sessions) * (1 - fraction))]
    module = importlib.import_module(f"pyclick.click_models.{PYCLICK[name]}")
    model = getattr(module, PYCLICK[name])()
    _, wall, cpu = timed(lambda: model.train(train))
    return wall, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(METRIC_USERS + STANDARD))
    ap.add_argument("--no-stderr", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    log, read_wall, read_cpu = timed(lambda: read_clicklog(YANDEX_SESSIONS))
    train, _ = log.split(0.25, args.seed)
    print(f"read {len(log)} sessions in {read_wall:.2f} s ({read_cpu:.2f} s CPU); fitting on {len(train)}")
    try:
        import pyclick  # noqa: F401
        have_pyclick = True
    except ImportError:
        have_pyclick = False
        print("PyClick is not importable: the anchor is reading the log "
              "(pip install git+https://github.com/markovi/PyClick to compare with it)")
    total_wall = total_cpu = 0.0
    print(f"{'model':10s} {'wall s':>8s} {'cpu s':>8s} {'x read':>8s} {'iters':>6s}  pyclick (wall s, ratio)")
    for name in args.models.split(","):
        m, wall, cpu = timed(lambda: fit(name, train, stderr=not args.no_stderr))
        total_wall += wall
        total_cpu += cpu
        anchor = ""
        if have_pyclick and name in PYCLICK:
            res = pyclick_fit(name, YANDEX_SESSIONS, 0.25, args.seed)
            anchor = "" if res is None else f"{res[0]:.2f} s, rpdi/pyclick {wall / res[0]:.2f}"
        print(f"{name:10s} {wall:8.2f} {cpu:8.2f} {cpu / read_cpu:8.1f} {m.iterations:6d}  {anchor}", flush=True)
    print(f"{'all':10s} {total_wall:8.2f} {total_cpu:8.2f} {total_cpu / read_cpu:8.1f}")


if __name__ == "__main__":
    main()
