"""``rpdi eval`` over many runs: one run at a time, the same bytes as all at once; and its start-up."""

import os
import subprocess
import sys

import pytest

HEAVY = ("pandas", "scipy", "matplotlib", "pydantic")


def test_eval_starts_without_heavy_libraries(tmp_path):
    """A plain ``rpdi eval`` (each format) imports none of pandas, scipy, matplotlib, pydantic:
    each costs every call of a researcher's loop over files a tenth of a second or more."""
    (tmp_path / "q").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "a.run").write_text("1 Q0 d1 1 2.0 A\n1 Q0 d2 2 1.0 A\n")
    (tmp_path / "b.run").write_text("1 Q0 d2 1 2.0 B\n")
    code = ("import sys\nfrom rpdi.experiments.cli import main\n"
            "for fmt in ('table', 'trec', 'json', 'csv'):\n"
            f"    assert main(['eval', {str(tmp_path / 'q')!r}, {str(tmp_path / 'a.run')!r}, "
            f"{str(tmp_path / 'b.run')!r}, '-m', 'P@10', '-m', 'AP', '-m', 'RR', '-m', 'nDCG@10', '-m', 'nDCG', "
            "'--format', fmt]) == 0\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]"


def _collection(directory, depths=(30, 30, 30, 30, 30)):
    """Graded qrels (some grades with fractions) and one run per depth over 4 topics, scores
    rounded so that documents tie, lines in no particular order."""
    import numpy as np

    rng = np.random.default_rng(26)
    topics = ["401", "402", "403", "51"]
    lines = [f"{t} 0 D{t}-{d} {g}" for t in topics for d in rng.choice(90, 40, replace=False)
             for g in [rng.choice(["0", "1", "2", "1.5", "-1"])]]
    (directory / "qrels").write_text("\n".join(lines) + "\n")
    paths = []
    for s, depth in enumerate(depths):
        rows = [f"{t} Q0 D{t}-{d} 0 {sc:.1f} tag{s}" for t in topics[: 3 + s % 2]
                for d, sc in zip(rng.choice(90, depth, replace=False), rng.normal(0, 1, depth).round(1))]
        rng.shuffle(rows)
        paths.append(directory / f"r{s}.run")
        paths[-1].write_text("\n".join(rows) + "\n")
    return str(directory / "qrels"), [str(p) for p in paths]


MEASURES = ["P@10", "AP", "RR", "nDCG@10", "nDCG", "bpref", "RBP(p=0.8)", "ERR@20"]


def test_one_run_at_a_time_gives_the_bytes_of_all_at_once(tmp_path, monkeypatch):
    """Runs evaluated one after another (run_batches) give what evaluating them together gives:
    trec_eval's lines, -q and -c, and the records, to the last bit."""
    from rpdi.metrics.evaluate import _records, expand, prepare
    from rpdi.metrics.run_files import load_runs, run_batches
    from rpdi.metrics.trec_names import trec_eval_selection, trec_lines
    from rpdi.metrics.trec_report import _block, trec_report

    qrels, runs = _collection(tmp_path)
    sizes = [os.path.getsize(r) for r in runs]
    module = sys.modules["rpdi.metrics.run_files"]
    monkeypatch.setattr(module, "BATCH_BYTES", sum(sizes))  # all five files make one batch
    assert [len(b) for b in run_batches(runs, expand(MEASURES))] == [5]
    assert [len(b) for b in run_batches(runs, expand(MEASURES), together=False)] == [1] * 5  # (eval's)
    monkeypatch.setattr(module, "BATCH_BYTES", sizes[0] + sizes[1])  # the first two files fill a batch
    assert [len(b) for b in run_batches(runs, expand(MEASURES))][0] == 2
    monkeypatch.setattr(module, "BATCH_BYTES", 1)  # one at a time
    assert [len(b) for b in run_batches(runs, expand(MEASURES))] == [1] * 5
    together = prepare(qrels, load_runs(runs))
    assert len(together[0].runs) == 5 and together[1] is not None  # all at once, with integer grades
    parsed = expand(MEASURES)
    assert evaluate_all(qrels, runs, per_topic=True) == _records(*together, parsed, True, "zero", "macro",
                                                                 "trec_eval", "trec_eval")
    names = ["P.10", "map", "ndcg", "bpref", "num_rel", "relstring"]
    chosen, rest = trec_eval_selection(names)
    assert not rest
    lines = [line for name in chosen for line in trec_lines(name)]
    for topics in ("qrels", "intersection"):
        both = prepare(qrels, load_runs(runs), topics)
        runids = [run.runid for run in load_runs(runs)]
        which = list(range(len(runids)))
        expected = "\n".join(_block(*both, runids, which, lines, True, True, topics, "trec_eval", "trec_eval")) + "\n"
        assert trec_report(qrels, runs, names, per_topic=True, topics=topics) == expected


def evaluate_all(qrels, runs, **options):
    from rpdi.metrics import evaluate

    return evaluate(qrels, runs, MEASURES, **options)


def test_a_bad_third_run_of_five_is_exit_2_and_nothing_written(tmp_path, run_cli):
    qrels, runs = _collection(tmp_path)
    with open(runs[2], "a") as fh:
        fh.write("401 Q0 X 1 high tag2\n")
    for fmt in ("trec", "table", "json"):
        status, out, err = run_cli(["eval", qrels, *runs, "-m", "AP", "--format", fmt])
        assert status == 2 and out == "", (fmt, out)
        assert err.startswith(f"rpdi eval: {runs[2]}:") and "'high' is not a number" in err, err


def test_runs_of_one_name_are_refused_before_any_is_read(tmp_path, run_cli):
    """The name clash is found from the paths: the files, one of them unreadable, are not read."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "q").write_text("1 0 d1 1\n")
    (tmp_path / "a" / "x.run").write_text("1 Q0 d1 1 1.0 A\n")
    status, out, err = run_cli(["eval", str(tmp_path / "q"), str(tmp_path / "a" / "x.run"),
                                str(tmp_path / "b" / "x.run"), "-m", "AP"])
    assert status == 2 and out == "" and "same name 'x'" in err, err


def test_eval_holds_one_run_at_a_time(tmp_path, monkeypatch, most_alive, run_cli):
    """Each run file a batch of its own, whatever its size: none smaller than BATCH_BYTES, so
    none read ahead: the API and the command have at most one run read alive at once; all
    smaller, each read ahead while the one before is scored: at most two."""
    qrels, runs = _collection(tmp_path, depths=(30, 10, 30, 20, 30, 30))
    module = sys.modules["rpdi.metrics.run_files"]
    monkeypatch.setattr(module, "BATCH_BYTES", 1)
    evaluate_all(qrels, runs)
    assert len(most_alive) == 6 and max(most_alive) == 1, most_alive
    most_alive.clear()
    status, out, err = run_cli(["eval", qrels, *runs, "-m", "AP", "--format", "trec"])
    assert status == 0, err
    assert len(most_alive) == 6 and max(most_alive) == 1, most_alive
    most_alive.clear()
    monkeypatch.setattr(module, "BATCH_BYTES", max(os.path.getsize(r) for r in runs) + 1)
    evaluate_all(qrels, runs)
    assert len(most_alive) == 6 and max(most_alive) <= 2, most_alive
    most_alive.clear()
    status, out, err = run_cli(["eval", qrels, *runs, "-m", "AP", "--format", "trec"])
    assert status == 0, err
    assert len(most_alive) == 6 and max(most_alive) <= 2, most_alive


def test_a_run_is_let_go_of_before_its_measures_are_computed(tmp_path, monkeypatch, run_cli):
    """Once a run is ranked its lines are freed, before the measures are computed on the ranking:
    with no run read ahead (each file a batch too large for that), no run read is alive then,
    through the API (records) and the command (a table, and trec_eval's lines)."""
    import gc
    import importlib
    import weakref

    from rpdi.metrics import run_files

    evaluate_module, report_module = map(importlib.import_module, ("rpdi.metrics.evaluate", "rpdi.metrics.trec_report"))
    refs, alive = [], []
    done, compute = run_files.RunFile.done, evaluate_module.compute

    def read(self, run):
        run = done(self, run)
        refs.append(weakref.ref(run))
        return run

    def counted(*args, **kwargs):
        gc.collect()
        alive.append(sum(ref() is not None for ref in refs))
        return compute(*args, **kwargs)

    monkeypatch.setattr(run_files.RunFile, "done", read)
    monkeypatch.setattr(evaluate_module, "compute", counted)
    monkeypatch.setattr(report_module, "compute", counted)
    monkeypatch.setattr(run_files, "BATCH_BYTES", 1)
    qrels, runs = _collection(tmp_path)
    evaluate_all(qrels, runs)
    for fmt in ("table", "trec"):
        status, out, err = run_cli(["eval", qrels, *runs, "-m", "AP", "--format", fmt])
        assert status == 0, err
    assert alive == [0] * 15, alive


@pytest.mark.parametrize("first_depth, ahead", [(80, True), (20, False)])
def test_a_first_run_larger_than_the_qrels_file_is_read_while_they_are(tmp_path, monkeypatch, most_alive, run_cli,
                                                                     first_depth, ahead):
    """The first run, a batch of its own and larger than the qrels file, is being read when the
    qrels' reading starts (each waits for the other to have begun); one no larger, only after the
    qrels are read. Either is read once, is not kept alive past its batch, and the lines are
    those of runs read one after the other."""
    import os
    import threading

    from rpdi.metrics import run_files

    evaluate_module = sys.modules["rpdi.metrics.evaluate"]
    qrels, runs = _collection(tmp_path, depths=(first_depth, 10, 30))
    assert (os.path.getsize(runs[0]) > os.path.getsize(qrels)) == ahead
    expected = run_cli(["eval", qrels, *runs, "-m", "AP", "-m", "nDCG", "--format", "trec", "-q"])
    monkeypatch.setattr(run_files, "BATCH_BYTES", 1)
    started, reads, before_qrels = threading.Event(), [], []
    read_run, load_qrels = run_files.read_run, evaluate_module.load_qrels

    def reading_run(path, *args, **kwargs):
        reads.append(path)
        started.set()
        return read_run(path, *args, **kwargs)

    def reading_qrels(path):
        before_qrels.append(started.wait(10 if ahead else 0.5))
        return load_qrels(path)

    monkeypatch.setattr(run_files, "read_run", reading_run)
    monkeypatch.setattr(evaluate_module, "load_qrels", reading_qrels)
    most_alive.clear()
    assert run_cli(["eval", qrels, *runs, "-m", "AP", "-m", "nDCG", "--format", "trec", "-q"]) == expected
    assert before_qrels[0] == ahead and reads == runs and most_alive == [1, 1, 1], (before_qrels, reads, most_alive)


@pytest.mark.parametrize("how", ["records", "trec", "diversity"])
def test_the_qrels_judgments_are_found_once_for_every_batch(tmp_path, monkeypatch, how):
    """Five runs, one a batch, on qrels whose grades have fractions (1.5): the judgments of the
    qrels as given and of the same with integer grades (:func:`metrics.rankings.judgments`) are
    found once each, not again for a batch; for records, trec_eval's lines, and diversity qrels
    (their topic-level grades)."""
    from rpdi.metrics import evaluate, rankings
    from rpdi.metrics.trec_report import trec_report

    qrels, runs = _collection(tmp_path)
    if how == "diversity":  # each judgment for subtopic 1, and for subtopic 2 one grade lower
        lines = [line.split() for line in open(qrels).read().splitlines()]
        qrels = str(tmp_path / "diversity.qrels")
        with open(qrels, "w") as fh:
            fh.writelines(f"{t} {s} {d} {float(g) - s + 1}\n" for t, _, d, g in lines for s in (1, 2))
    passed, found = [], []
    judgments, ideal = rankings.judgments, rankings._ideal
    for module in (rankings, sys.modules["rpdi.metrics.evaluate"]):  # (rpdi.metrics.evaluate: the function)
        monkeypatch.setattr(module, "judgments", lambda q: passed.append(q) or judgments(q))
    monkeypatch.setattr(rankings, "_ideal", lambda *args: found.append(1) or ideal(*args))
    monkeypatch.setattr("rpdi.metrics.run_files.BATCH_BYTES", 1)
    if how == "trec":
        assert trec_report(qrels, runs, ["map", "ndcg"]).count("runid") == 5
    else:
        measures = ["AP", "nDCG"] + (["alpha-nDCG@10"] if how == "diversity" else [])
        assert len(evaluate(qrels, runs, measures)) == 5 * len(measures)
    # (and once each before the first batch is read, but for diversity qrels)
    assert len(passed) == (10 if how == "diversity" else 12), len(passed)
    assert len(found) == len({id(q) for q in passed}) == 2, found


def test_runs_compared_with_the_first_are_ranked_a_batch_at_a_time_after_it(tmp_path, monkeypatch, most_alive, run_cli):
    """With a measure that compares each run with the first (RBO), the runs are read in batches,
    the first run kept and ranked again at the head of each: the records and trec_eval's lines
    are those of all runs ranked at once to the last bit, each run's once and in order; with each
    file a batch of its own, at most two runs are alive (the first and the one ranked), through
    the API and the command."""
    import json

    from rpdi.metrics import evaluate
    from rpdi.metrics.evaluate import _records, expand, prepare
    from rpdi.metrics.run_files import load_runs
    from rpdi.metrics.trec_names import TrecFamily, TrecLine
    from rpdi.metrics.trec_report import _block, trec_report

    qrels, runs = _collection(tmp_path)
    module = sys.modules["rpdi.metrics.run_files"]
    monkeypatch.setattr(module, "BATCH_BYTES", 1)
    names = ["RBO(p=0.9)@10", "RBO_EXT(p=0.8)", "AP", "nDCG@10"]
    together = prepare(qrels, load_runs(runs))
    expected = _records(*together, expand(names), True, "zero", "macro", "trec_eval", "trec_eval")
    most_alive.clear()
    assert evaluate(qrels, runs, names, per_topic=True) == expected
    assert len(most_alive) == 5 and max(most_alive) == 2, most_alive
    lines = [TrecLine(m.text, TrecFamily("", "single"), m) for m in expand(names)]  # (as trec_report names them)
    runids = [run.runid for run in load_runs(runs)]
    block = _block(*prepare(qrels, load_runs(runs), "intersection"), runids, list(range(len(runs))), lines, True,
                   False, "intersection", "trec_eval", "trec_eval")
    assert trec_report(qrels, runs, names) == "\n".join(block) + "\n"
    most_alive.clear()
    status, out, err = run_cli(["eval", qrels, *runs, *(a for n in names for a in ("-m", n)), "--format", "json"])
    assert status == 0 and len(most_alive) == 5 and max(most_alive) == 2, (err, most_alive)
    assert [(r["run"], r["measure"], r["value"]) for r in json.loads(out) if r["topic"] == "all"] == \
        [(r["run"], r["measure"], r["value"]) for r in expected if r["topic"] == "all"]


def test_a_first_run_read_ahead_is_read_once_when_all_runs_are_read_at_once(tmp_path, monkeypatch, run_cli):
    """With a measure that compares runs (RBO) the first run is read once and kept: being read
    ahead (larger than the qrels file), it is taken from its thread, not read a second time."""
    import os

    from rpdi.metrics import run_files

    qrels, runs = _collection(tmp_path, depths=(80, 10, 30))
    assert os.path.getsize(runs[0]) > os.path.getsize(qrels)
    expected = run_cli(["eval", qrels, *runs, "-m", "RBO(p=0.9)", "--format", "json"])
    monkeypatch.setattr(run_files, "BATCH_BYTES", 1)
    reads, read_run, read_runs = [], run_files.read_run, run_files.read_runs
    monkeypatch.setattr(run_files, "read_run", lambda path, *a, **k: reads.append(path) or read_run(path, *a, **k))
    monkeypatch.setattr(run_files, "read_runs", lambda paths: reads.extend(paths) or read_runs(paths))
    ahead, read_ahead = [], run_files.RunFile.read_ahead

    def reading_ahead(self, beside=0):
        run_file = read_ahead(self, beside)
        ahead.append(run_file.ahead is not None)
        return run_file

    monkeypatch.setattr(run_files.RunFile, "read_ahead", reading_ahead)
    assert run_cli(["eval", qrels, *runs, "-m", "RBO(p=0.9)", "--format", "json"]) == expected
    assert sorted(reads) == sorted(runs) and ahead == [True], (reads, ahead)
