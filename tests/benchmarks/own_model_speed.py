"""How fast is a model of one's own fitted, next to RBP's fit in the same run? The bundled Yandex
sample (75% to train), with standard errors, as ``rpdi fit -m file.py:Class`` would do it.

The models are what a new user writes: one parameter each, with 1, 2 and 10 automaton states
(the cost of the forward-backward passes grows with the states). Prints wall-clock and CPU
seconds and the CPU ratio to RBP's fit.

    python tests/benchmarks/own_model_speed.py [--no-stderr] [--seed 0]
"""

import argparse
import os
import tempfile
import time

from rpdi.experiments.bundled import YANDEX_SESSIONS
from rpdi.metrics.clicklogs import read_clicklog
from rpdi.usermodels.clickfit import fit

MODELS = '''
import numpy as np
from rpdi.usermodels.base import OPEN_UNIT, Branch, BrowsingModel, geometric


class Patient(BrowsingModel):
    """Reads on with q (RBP's user under another name): 1 state."""
    aggregation, rule, citation = "rate", "reads on with q", "benchmark"
    parameters = {"q": 0.5}
    fit_bounds = {"q": OPEN_UNIT}

    def step(self, state, at):
        return geometric(self.q, at.gain)


class Strikes(BrowsingModel):
    """Gives up after two skips in a row, else reads on with p: 2 states."""
    aggregation, rule, citation = "rate", "two skips in a row, else on with p", "benchmark"
    parameters = {"p": 0.8}
    fit_bounds = {"p": OPEN_UNIT}

    def n_states(self, view):
        return 2

    def step(self, state, at):
        misses = np.where(at.gain > 0, 0, state + 1)
        return [Branch(self.p, at.gain, misses < 2, np.minimum(misses, 1)), Branch(1 - self.p, at.gain, False)]


class Sated(BrowsingModel):
    """Reads on with p after a skip, p/2 after a click; the state counts the clicks: 10 states."""
    aggregation, rule, citation = "rate", "on with p, p/2 after a click", "benchmark"
    parameters = {"p": 0.8}
    fit_bounds = {"p": OPEN_UNIT}

    def n_states(self, view):
        return 10

    def step(self, state, at):
        clicked = at.gain > 0
        go, nxt = np.where(clicked, self.p / 2, self.p), np.minimum(state + clicked, 9)
        return [Branch(go, at.gain, True, nxt), Branch(1 - go, at.gain, False, nxt)]
'''


def timed(f):
    w, c = time.perf_counter(), time.process_time()
    out = f()
    return out, time.perf_counter() - w, time.process_time() - c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-stderr", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    train, _ = read_clicklog(YANDEX_SESSIONS).split(0.25, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mine.py")
        with open(path, "w") as f:
            f.write(MODELS)
        names = ["RBP", f"{path}:Patient", f"{path}:Strikes", f"{path}:Sated"]
        print(f"{'model':10s} {'states':>6s} {'wall s':>8s} {'cpu s':>8s} {'x RBP':>6s} {'iters':>6s}  parameters")
        base = None
        for name, states in zip(names, (1, 1, 2, 10)):
            m, wall, cpu = timed(lambda: fit(name, train, stderr=not args.no_stderr))
            base = base or cpu
            print(f"{name.rsplit(':', 1)[-1]:10s} {states:6d} {wall:8.2f} {cpu:8.2f} {cpu / base:6.1f} "
                  f"{m.iterations:6d}  {m.parameters_text()}", flush=True)


if __name__ == "__main__":
    main()
