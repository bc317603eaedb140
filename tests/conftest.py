"""Helpers shared by the test modules, as fixtures: pytest imports the tests with
``--import-mode=importlib``, so a test module cannot import another, or a helper module next to
it; what two or more of them use lives here.

- ``run_cli``: the ``rpdi`` command in-process, with its status, stdout and stderr;
- ``write`` and ``write_trec``: input files (text or bytes; qrels and runs given as dicts);
- ``random_collection``: seeded qrels and runs with the awkward cases (ties, unjudged and
  negative grades, R = 0, empty rankings, relevant documents no run retrieves);
- ``printed``: a value against the digits a paper prints;
- ``holm_by_definition``: Holm's step-down procedure written from its definition;
- ``mutations_benchmark``: tests/benchmarks/mutations.py as a module;
- ``diversity_collections``: synthetic diversity rankings; ``pairs_share_draws``: a planted
  engine bug; ``tie_cases``: small rankings with ties and every order of them;
- ``drawn``: the figures the plotting code saves, kept open (drawn) for a test to inspect.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
from pathlib import Path

import numpy as np
import pytest

from rpdi.experiments.cli import main


@pytest.fixture
def run_cli(capsys):
    """``run_cli(argv) -> (status, stdout, stderr)``: ``rpdi`` run in-process (arguments may be
    paths); an argparse error's SystemExit gives its status."""

    def run(argv) -> tuple[int, str, str]:
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:
            status = exc.code
        out, err = capsys.readouterr()
        return status, out, err

    return run


def _write(path, data: str | bytes) -> str:
    Path(path).write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(path)


@pytest.fixture(scope="session")
def write():
    """``write(path, data) -> str``: ``data`` (text, as UTF-8, or bytes) written to ``path``,
    which is returned as a str."""
    return _write


@pytest.fixture(scope="session")
def write_trec():
    """``write_trec(directory, qrels, runs) -> (qrels path, [run paths])``: qrels
    ``{topic: {docno: grade}}`` to ``qrels.txt`` and each run ``{name: {topic: {docno: score}}}``
    to ``name.run`` (tag ``name``, ranks in dict order: trec_eval ignores them, the scores
    decide)."""

    def write_trec(directory, qrels: dict, runs: dict) -> tuple[str, list[str]]:
        qpath = _write(os.path.join(directory, "qrels.txt"),
                       "".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items()))
        paths = [_write(os.path.join(directory, f"{name}.run"),
                        "".join(f"{t} Q0 {d} {i} {score!r} {name}\n" for t, docs in run.items()
                                for i, (d, score) in enumerate(docs.items(), 1)))
                 for name, run in runs.items()]
        return qpath, paths

    return write_trec


def _random_collection(rng: np.random.Generator, n_runs: int, n_topics: int,
                       negative: bool = True) -> tuple[dict, dict]:
    """Seeded qrels and runs (run0, run1, ...) as dicts: grades 0..3 (and -1 unless not
    ``negative``), unjudged documents, tied scores, topic t00 with a document of grade 3, t01
    with R = 0, t02 retrieved by no run, t03 with relevant documents no run retrieves (AP's
    users may read for ever), the last topic not retrieved by run1, rankings shorter and longer
    than the cutoffs, and a run topic that is not in the qrels."""
    qrels: dict[str, dict[str, float]] = {}
    pools: dict[str, list[str]] = {}
    for t in range(n_topics):
        topic = f"t{t:02d}"
        n_docs = int(rng.integers(1, 25))
        docs = [f"{topic}-d{i:02d}" for i in range(n_docs)]
        choices = [-1, 0, 0, 0, 1, 1, 2, 3] if negative else [0, 0, 0, 1, 1, 2, 3]
        grades = rng.choice(choices, size=n_docs)
        if t == 1:
            grades[:] = 0  # R = 0 and no positive grade
        if t == 0:
            grades[0] = 3  # the qrels' top grade is 3
        unjudged = rng.random(n_docs) < 0.3
        unjudged[0] = False
        qrels[topic] = {d: int(g) for d, g, u in zip(docs, grades, unjudged) if not u}
        if t == 3:
            qrels[topic].update({f"{topic}-x{i}": 2 for i in range(3)})  # in no pool: never retrieved
        pools[topic] = docs
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for s in range(n_runs):
        run: dict[str, dict[str, float]] = {}
        for t, (topic, docs) in enumerate(pools.items()):
            if t == 2 or (s == 1 and t == n_topics - 1) or rng.random() < 0.1:
                continue  # an empty ranking: the topic is in the qrels, not in the run
            n = int(rng.integers(0, len(docs) + 1))
            if n == 0:
                continue
            picked = rng.choice(docs, size=n, replace=False)
            scores = rng.integers(0, 4, size=n).astype(float)  # few distinct scores: many ties
            run[topic] = {d: float(x) for d, x in zip(picked, scores)}
        run["zz-not-in-qrels"] = {"x1": 1.0, "x2": 0.5}
        runs[f"run{s}"] = run
    return qrels, runs


@pytest.fixture
def six_run_files(tmp_path, random_collection, write_trec):
    """A qrels file and six run files of different depths (ties, empty rankings, a topic not in
    the qrels), for the tests of commands that read runs a batch at a time."""
    qrels, runs = random_collection(np.random.default_rng(2026), 6, 12)
    return write_trec(tmp_path, qrels, runs)


@pytest.fixture
def batch_bytes(monkeypatch):
    """A function that sets the bytes of run files read as one batch (metrics.run_files.BATCH_BYTES)."""
    return lambda size: monkeypatch.setattr("rpdi.metrics.run_files.BATCH_BYTES", size)


@pytest.fixture(scope="session")
def random_collection():
    """``random_collection(rng, n_runs, n_topics, negative=True) -> (qrels, runs)``, see
    :func:`_random_collection`."""
    return _random_collection


@pytest.fixture(scope="session")
def printed():
    """``printed(value, text)`` asserts that ``value`` rounds (half up or half down) to ``text`` at
    the number of decimals printed."""

    def printed(value: float, text: str) -> None:
        decimals = len(text.split(".")[1]) if "." in text else 0
        assert abs(value - float(text)) <= 0.5 * 10.0 ** -decimals + 1e-9, (value, text)

    return printed


@pytest.fixture(scope="session")
def holm_by_definition():
    """``holm_by_definition(pvalues, alpha) -> [index, ...]``: the hypotheses Holm's (1979)
    step-down procedure rejects, in ascending order of p (stable): the j-th smallest p (j from
    0) is rejected while it is at most alpha / (m - j), and the first that is not stops it.
    Written from the definition, for checking ``rpdi.simulate.stats.holm`` and for judging
    simulations without it."""

    def holm_by_definition(pvalues, alpha: float) -> list[int]:
        order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
        rejected = []
        for j, i in enumerate(order):
            if pvalues[i] > alpha / (len(pvalues) - j):
                break
            rejected.append(i)
        return rejected

    return holm_by_definition


@pytest.fixture(scope="session")
def mutations_benchmark():
    """tests/benchmarks/mutations.py loaded as a module (it is a script, not a package module)."""
    path = Path(__file__).parent / "benchmarks" / "mutations.py"
    spec = importlib.util.spec_from_file_location("mutations", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def diversity_collections():
    """Synthetic diversity rankings (ties, unjudged documents, documents relevant to no
    subtopic, a subtopic only non-relevant judgments name), two seeds, each with uniform and
    with uneven intents."""
    from rpdi.experiments.synthetic_diversity import synthetic_diversity
    from rpdi.metrics.diversity import diversity_rankings

    out = []
    for seed in (3, 8):
        qrels, runs, intents = synthetic_diversity(topics=10, seed=seed)
        out += [diversity_rankings(qrels, runs), diversity_rankings(qrels, runs, intents=intents)]
    return out


def _pairs_share_draws(self, live, counts):
    """The vector engine's uniforms (``vector._Streams.take``), each drawn once and used by two
    users in a row: every user's outcome keeps its distribution, the users are not independent."""
    u = np.empty(int(counts.sum()))
    begin = 0
    for r, k in zip(live.tolist(), counts.tolist()):
        u[begin:begin + k] = np.repeat(self.rngs[r].random((k + 1) // 2), 2)[:k]
        begin += k
    return u


@pytest.fixture(scope="session")
def pairs_share_draws():
    """A planting for ``vector._Streams.take``: users sharing random draws in pairs."""
    return _pairs_share_draws


class TieCases:
    """Small random rankings with tie groups, and every order of their ties: metrics/ties.py and
    usermodels/tie_orders.py are checked against them by brute force."""

    @staticmethod
    def case(seed: int, groups=(3, 2, 2)):
        """qrels and one run of two topics: each topic's documents in tie groups of the given
        sizes (and two untied ones between them), grades in {unjudged, 0, 1, 2}, two relevant
        documents not retrieved."""
        rng = np.random.default_rng(seed)
        qrels, run = {}, {}
        for t in ("q1", "q2"):
            sizes = list(rng.permutation([*groups, 1, 1]))
            scores = {}
            for level, size in zip(range(len(sizes), 0, -1), sizes):
                for _ in range(size):
                    scores[f"{t}d{len(scores)}"] = float(level)
            qrels[t] = {d: int(g) for d in scores if (g := rng.integers(-1, 3)) >= 0}
            qrels[t].update({f"{t}x1": 1, f"{t}x2": 2})
            run[t] = scores
        return qrels, run

    @staticmethod
    def every_order(scores: dict) -> list[dict]:
        """One topic's scores once per order of every tie group, as distinct scores."""
        levels = sorted(set(scores.values()), reverse=True)
        groups = [[d for d in scores if scores[d] == s] for s in levels]
        orders = [sum(p, ()) for p in itertools.product(*[itertools.permutations(g) for g in groups])]
        return [{d: float(len(order) - i) for i, d in enumerate(order)} for order in orders]


@pytest.fixture(scope="session")
def tie_cases():
    return TieCases


@pytest.fixture
def drawn(monkeypatch):
    """The matplotlib figures closed while the test runs (every plot closes its figure once
    written), kept open and drawn, so that a test can measure where the text and legends landed;
    closed at the end."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    close, figures = plt.close, []

    def keep(fig=None):
        fig.canvas.draw()
        figures.append(fig)

    monkeypatch.setattr(plt, "close", keep)
    yield figures
    for fig in figures:
        close(fig)


@pytest.fixture
def most_alive(monkeypatch):
    """A list that receives, each time a run file has been read, how many runs read are alive."""
    import gc
    import weakref

    from rpdi.metrics.run_files import RunFile

    refs, counts = [], []
    read = RunFile.done

    def done(self, run):
        run = read(self, run)
        gc.collect()  # what nothing refers to any more is not counted
        refs.append(weakref.ref(run))
        counts.append(sum(ref() is not None for ref in refs))
        return run

    monkeypatch.setattr(RunFile, "done", done)
    return counts


def _session_topics(rng, sessions: int, most_turns: int) -> list[str]:
    """CAsT-style topic ids ``x_q`` of ``sessions`` sessions of 1 to ``most_turns`` turns each
    (drawn from ``rng``), session 0 missing its turn 2 when it has more than two turns."""
    topics = []
    for x in range(sessions):
        n = int(rng.integers(1, most_turns + 1))
        topics += [f"{x}_{q}" for q in range(1, n + 1) if not (x == 0 and q == 2 and n > 2)]
    return topics


@pytest.fixture(scope="session")
def session_topics():
    """:func:`_session_topics`: the turns of random sessions, for the session measures' tests."""
    return _session_topics
