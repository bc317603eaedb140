"""``rpdi compare`` over many runs: a batch of runs in memory at a time, the bytes of all at once."""

import json

import numpy as np
import pytest

from rpdi.experiments.compare import compare

MEASURES = ["AP", "nDCG@10", "nDCG", "RR", "P@10", "RBP(p=0.8)", "ERR@20", "bpref"]


@pytest.fixture
def reads(monkeypatch):
    """A dict that counts, per run name, the times a run file has been read."""
    from collections import Counter

    from rpdi.metrics.run_files import RunFile

    counts, read = Counter(), RunFile.done

    def done(self, run):
        counts[self.run_name] += 1
        return read(self, run)

    monkeypatch.setattr(RunFile, "done", done)
    return counts


def test_compare_holds_one_batch_of_runs_at_a_time(batch_bytes, six_run_files, most_alive, run_cli):
    """Each run file a batch of its own: the API and the command have at most one run read alive
    at once, where reading every run first has all six (the runs before the deepest batch are
    read twice: :func:`experiments.run_scores.run_scores`)."""
    qrels, runs = six_run_files
    batch_bytes(1)
    compare(qrels, runs, ["AP", "nDCG@10"], ties="expected")
    assert len(most_alive) >= 6 and max(most_alive) == 1, most_alive
    most_alive.clear()
    status, out, err = run_cli(["compare", qrels, *runs, "-m", "AP", "--baseline", "run2", "--discriminative-power"])
    assert status == 0, err
    assert 6 <= len(most_alive) < 12 and max(most_alive) == 1, most_alive  # every pair's power from the same pass


def test_a_run_from_standard_input_leaves_the_files_a_batch_at_a_time(batch_bytes, six_run_files, monkeypatch,
                                                                      most_alive, run_cli):
    """A run read from standard input is read once, up front; the run files are still read one
    batch at a time: besides it, at most one run alive."""
    import io

    qrels, runs = six_run_files
    with open(runs[0], "rb") as f:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(f.read())))
    batch_bytes(1)
    status, out, err = run_cli(["compare", qrels, *runs[1:3], "-", *runs[3:], "-m", "AP", "--baseline", "stdin",
                                "--discriminative-power"])
    assert status == 0, err
    assert "stdin" in out and len(most_alive) >= 6 and max(most_alive) <= 2, most_alive


def test_only_the_shallower_batches_are_read_again(batch_bytes, tmp_path, reads, write_trec):
    """One run ranks deeper than the others: it and the run after it (padded to its depth, the
    deepest so far) are read once, the run before it twice (padded to its depth the second time),
    and the records are those of all runs ranked at once."""
    qrels, runs = write_trec(tmp_path, {"1": {"a": 1, "b": 0}, "2": {"c": 1, "a": 2}},
                             {"x": {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}},
                              "deep": {"1": {"b": 5.0, "z": 4.0, "y": 3.0, "a": 2.0}, "2": {"a": 1.0, "c": 0.5}},
                              "y": {"1": {"b": 2.0}, "2": {"c": 1.0, "a": 0.5}}})
    together = compare(qrels, runs, ["nDCG", "AP"], resamples=20)
    reads.clear()
    batch_bytes(1)
    assert json.dumps(compare(qrels, runs, ["nDCG", "AP"], resamples=20)) == json.dumps(together)
    assert reads == {"x": 2, "deep": 1, "y": 1}, reads


@pytest.mark.parametrize("order", [("deep", "short", "mid"), ("short", "mid", "deep"), ("short", "deep", "mid")])
def test_batches_in_any_order_have_the_values_of_all_runs_ranked_at_once(batch_bytes, tmp_path, reads, write_trec,
                                                                         order):
    """Runs of 13, 21 and 200 documents a topic, one a batch, the deepest first, last or in the
    middle: every value is that of the three ranked together, to the bit (the sums over whole
    rankings of nDCG, RBP and ERR, 8 lanes then the rest, differ for the two shorter runs ranked
    alone in some topics), and only the runs before the deepest are read twice."""
    from rpdi.experiments.run_scores import run_scores
    from rpdi.metrics.names import parse_measure

    rng = np.random.default_rng(26)
    docs = [f"d{i}" for i in range(300)]
    qrels = {t: {d: int(g) for d, g in zip(rng.choice(docs, 80, replace=False), rng.integers(0, 4, 80))}
             for t in map(str, range(40))}
    depth = {"short": 13, "mid": 21, "deep": 200}
    runs = {name: {t: dict(zip(rng.choice(docs, depth[name], replace=False), rng.normal(size=depth[name]).tolist()))
                   for t in qrels} for name in order}
    qrels, paths = write_trec(tmp_path, qrels, runs)
    measures = [parse_measure(m) for m in ("nDCG", "RBP(p=0.95)", "AP", "ERR")]
    together = run_scores(qrels, paths, measures)
    reads.clear()
    batch_bytes(1)
    apart = run_scores(qrels, paths, measures)
    assert apart.runs == together.runs == order
    for mine, theirs in zip(apart.scores, together.scores):
        assert mine.value.tobytes() == theirs.value.tobytes()
    first = order.index("deep")
    assert reads == {name: 2 if i < first else 1 for i, name in enumerate(order)}, reads
    for s, path in enumerate(paths):  # each run ranked alone, unpadded: the shorter ones' sums differ
        alone = run_scores(qrels, [path], measures).scores[0].value[0]
        assert (alone.tobytes() == together.scores[0].value[s].tobytes()) == (order[s] == "deep"), order[s]


@pytest.mark.parametrize("argv, message", [
    (["--baseline", "nosuch"], "baseline 'nosuch': not one of the runs (run0, run1, broken)"),
    ([], None)])
def test_run_names_are_checked_before_any_run_is_read(tmp_path, six_run_files, most_alive, run_cli, write,
                                                      argv, message):
    """A baseline that names no run, or a single run, is the error, one line, before any run file
    is read (one that would not parse among them)."""
    qrels, runs = six_run_files
    broken = write(tmp_path / "broken.run", "1 Q0 d1 1 not-a-score x\n")
    status, out, err = run_cli(["compare", qrels, *runs[:2], broken, "-m", "AP", *argv] if message else
                               ["compare", qrels, broken, "-m", "AP"])
    assert status == 2 and out == "" and most_alive == [], (status, most_alive)
    assert err.count("\n") == 1 and (message or "compare needs two or more runs") in err, err


@pytest.mark.parametrize("options", [dict(), dict(topics="intersection", baseline="run3"),
                                     dict(ties="expected"), dict(ties="range", test="t")])
def test_one_batch_at_a_time_gives_the_bytes_of_all_at_once(batch_bytes, six_run_files, options):
    """Runs ranked one by one (rankings of different depths) give the records of all six ranked
    together, to the last bit."""
    qrels, runs = six_run_files
    together = compare(qrels, runs, MEASURES, resamples=200, **options)
    batch_bytes(1)
    apart = compare(qrels, runs, MEASURES, resamples=200, **options)
    assert len(together) == (5 if "baseline" in options else 15) * len(MEASURES)
    assert json.dumps(apart) == json.dumps(together)


def test_a_run_read_twice_is_warned_about_once(batch_bytes, tmp_path, run_cli, write_trec):
    """Rankings of different depths in different batches: the runs are read again, deeper; the
    run that shares no topic with the qrels is named once."""
    qrels, runs = write_trec(tmp_path, {"1": {"a": 1, "b": 0}, "2": {"c": 1}},
                             {"a": {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}},
                              "b": {"1": {"b": 2.0}, "2": {"c": 1.0}}, "c": {"9": {"b": 2.0}}})
    batch_bytes(1)
    status, out, err = run_cli(["compare", qrels, *runs, "-m", "AP"])
    assert status == 0 and err.count("shares no topic") == 1, err


def test_a_batch_deepened_has_the_arrays_of_all_runs_ranked_at_once(six_run_files):
    """One run ranked alone and padded to the depth of all six ranked together has their arrays
    for it, field by field (document lengths given; the codes of documents the qrels do not
    judge are the batch's own, only where a ranking ends is compared)."""
    from dataclasses import fields

    from rpdi.metrics.rankings import deepened
    from rpdi.metrics.evaluate import load_qrels, load_runs
    from rpdi.metrics.rankings import build_rankings
    from rpdi.metrics.trec import with_lengths

    qrels, paths = six_run_files
    qrels = load_qrels(qrels)
    runs = [with_lengths(run, {docno: float(len(docno)) for docno in run.docno.dictionary.to_pylist()[::2]})
            for run in load_runs(paths)]
    together = build_rankings(qrels, runs)
    alone = build_rankings(qrels, runs[3:4])
    assert alone.depth < together.depth and together.tie is not None
    alone = deepened(alone, together.depth)
    for f in fields(together):
        value = getattr(together, f.name)
        if isinstance(value, np.ndarray) and value.ndim == 3:  # (runs, topics, ranks)
            mine = getattr(alone, f.name)
            if f.name == "doc":
                mine, value = mine < 0, value < 0
            np.testing.assert_array_equal(mine, value[3:4], err_msg=f.name)


def test_diversity_qrels_are_prepared_once_for_every_batch(batch_bytes, tmp_path, monkeypatch, write, write_trec):
    """Runs scored a batch at a time on diversity qrels: the topic-level qrels' judgments (their
    docno table) are found once, not once a batch."""
    from rpdi.metrics.docnos import DocnoTable

    _, runs = write_trec(tmp_path, {}, {f"r{i}": {t: {f"d{(i + j + k) % 6}": 6.0 - j for j in range(3 + i)}
                                                  for k, t in enumerate(["1", "2", "3"])} for i in range(4)})
    qrels = write(tmp_path / "diversity.qrels", "".join(f"{t} {s} d{d} {int((d + s) % 3 == 0)}\n"
                                                        for t in "123" for s in (1, 2) for d in range(6)))
    made, of = [], DocnoTable.of.__func__
    monkeypatch.setattr(DocnoTable, "of", classmethod(lambda cls, dictionary, keys=None:
                                                      made.append(1) or of(cls, dictionary, keys)))
    batch_bytes(1)
    records = compare(qrels, runs, ["alpha-nDCG@10", "ERR-IA@20"], resamples=20)
    assert len(records) == 12 and len(made) == 1, made


@pytest.mark.parametrize("command, grade, builds", [("compare", "1", 1), ("evaluate", "1", 1), ("evaluate", "1.5", 2)])
def test_the_intents_table_is_built_once_for_every_batch(batch_bytes, tmp_path, monkeypatch, write, write_trec,
                                                         command, grade,
                                                         builds):
    """Runs scored a batch at a time on diversity qrels with a file's intent probabilities: the
    subtopics' table (:meth:`metrics.diversity.Intents.build`) is built once a command, not once
    a batch; with grades that have fractions, once more for trec_eval's integer grades (eval)."""
    from rpdi.metrics import evaluate
    from rpdi.metrics.diversity import Intents

    _, runs = write_trec(tmp_path, {}, {f"r{i}": {t: {f"d{(i + j + k) % 6}": 6.0 - j for j in range(3 + i)}
                                                  for k, t in enumerate(["1", "2", "3"])} for i in range(4)})
    qrels = write(tmp_path / "diversity.qrels", "".join(f"{t} {s} d{d} {grade if (d + s) % 3 == 0 else 0}\n"
                                                        for t in "123" for s in (1, 2) for d in range(6)))
    intents = write(tmp_path / "intents", "".join(f"{t} {s} {p}\n" for t in "123" for s, p in ((1, 0.3), (2, 0.7))))
    built, build = [], Intents.build.__func__
    monkeypatch.setattr(Intents, "build", classmethod(lambda cls, *args: built.append(1) or build(cls, *args)))
    batch_bytes(1)
    measures = ["alpha-nDCG@10", "ERR-IA@20", "AP-IA"]
    if command == "compare":
        assert len(compare(qrels, runs, measures, resamples=20, intents=intents)) == 18
    else:
        assert len(evaluate(qrels, runs, measures, intents=intents)) == 12
    assert len(built) == builds, built
