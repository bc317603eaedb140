"""The command line's interface: runs named NAME=PATH, --digits and significant digits, the
``users`` column per topic, and a config's measures expanded once."""

from __future__ import annotations

import json

import pytest

from rpdi.experiments.formats import telling_apart
from rpdi.experiments.config import expand_measures, load_config
from rpdi.experiments.tasks import plan

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 e1 1\nq2 0 e2 1\n"
RUN_A = "q1 Q0 d1 1 3.0 x\nq1 Q0 d2 2 2.0 x\nq1 Q0 d3 3 1.0 x\nq2 Q0 e2 1 1.0 x\n"
RUN_B = "q1 Q0 d3 1 3.0 y\nq1 Q0 d1 2 2.0 y\nq2 Q0 e9 1 2.0 y\nq2 Q0 e1 2 1.0 y\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a" / "run.txt").write_text(RUN_A)
    (tmp_path / "b" / "run.txt").write_text(RUN_B)
    return tmp_path


def test_runs_of_the_same_file_name_are_named_name_equals_path(files, run_cli):
    q, a, b = str(files / "qrels.txt"), str(files / "a" / "run.txt"), str(files / "b" / "run.txt")
    status, out, err = run_cli(["eval", q, a, b, "-m", "P@2"])
    assert status == 2 and out == "" and err.count("\n") == 1
    assert a in err and b in err and "'run'" in err and "NAME=PATH" in err, err
    status, out, err = run_cli(["eval", q, f"first={a}", f"second={b}", "-m", "P@2", "-m", "AP",
                                    "--format", "json"])
    assert status == 0, err
    named = {(r["run"], r["measure"]): r["value"] for r in json.loads(out)}
    for name, path in (("first", a), ("second", b)):  # each named run scores as its file alone
        status, out, _ = run_cli(["eval", q, path, "-m", "P@2", "-m", "AP", "--format", "json"])
        assert status == 0
        alone = {r["measure"]: r["value"] for r in json.loads(out)}
        assert alone == {m: named[name, m] for m in ("P@2", "AP")}
    status, out, err = run_cli(["compare", q, f"first={a}", f"second={b}", "-m", "AP", "--format", "json"])
    assert status == 0, err
    [pair] = json.loads(out)
    assert (pair["run_a"], pair["run_b"], pair["mean_a"], pair["mean_b"]) == \
        ("first", "second", named["first", "AP"], named["second", "AP"])


def test_digits_and_significant_standard_errors(files, run_cli):
    q, a = str(files / "qrels.txt"), str(files / "a" / "run.txt")
    argv = ["simulate", q, a, "-m", "RBP(p=0.8)", "--users", "20000", "--seed", "3"]
    status, out, _ = run_cli(argv + ["--format", "json"])
    (record,) = json.loads(out)
    status, table, _ = run_cli(argv + ["--digits", "6"])
    header, row = (line.split() for line in table.splitlines()[:2])  # then the verdict
    cell = dict(zip(header, row))
    assert cell["exact"] == f"{record['exact']:.6f}" and cell["z"] == f"{record['z']:.2f}"
    assert 0 < record["stderr"] < 5e-3 and cell["stderr"] == f"{record['stderr']:.6g}"
    assert float(cell["stderr"]) == pytest.approx(record["stderr"], rel=1e-5)  # not 0.000000
    status, table, _ = run_cli(["eval", q, a, "-m", "RBP(p=0.8)", "--digits", "2"])
    # RBP(p=0.8) with gains grade/2: q1 reads 1, 0, 2 (residual p^3), q2 reads 1 (residual p)
    value = (0.2 * (0.5 + 0.8 ** 2) + 0.2 * 0.5) / 2
    assert table.splitlines()[1].split()[2:] == [f"{value:.2f}", f"+{(0.8 ** 3 + 0.8) / 2:.2f}"]


def test_telling_apart_counterexample_scores():
    a, b = 0.3554, 0.3554 + 5e-9
    d = telling_apart(a, b, 4)  # the fewest decimals that show the difference
    assert f"{a:.{d}f}" != f"{b:.{d}f}" and f"{a:.{d - 1}f}" == f"{b:.{d - 1}f}" and d > 4
    assert telling_apart(0.5, 0.125, 4) == 4
    assert telling_apart(0.25, 0.25, 3) == 3
    assert telling_apart(None, 0.25, 3) == 3


def test_users_is_per_topic_in_every_row(files, run_cli):
    q, a = str(files / "qrels.txt"), str(files / "a" / "run.txt")
    status, out, err = run_cli(["simulate", q, a, "-m", "RR", "--users", "300", "--per-topic",
                                    "--format", "json"])
    assert status == 0, err
    records = json.loads(out)
    assert [r["topic"] for r in records] == ["q1", "q2", "all"]
    assert all(r["users"] == 300 for r in records)


def test_a_configs_measures_are_expanded_once(tmp_path):
    """Loading a config expands its grid, running the model file once whatever the number of
    names it gives; planning reuses the names, it does not load the model again."""
    log = tmp_path / "loaded.log"
    (tmp_path / "model.py").write_text(
        f"open({str(log)!r}, 'a').write('x')\n"
        "from rpdi.usermodels.base import Branch, BrowsingModel\n\n"
        "class Reader(BrowsingModel):\n    parameters = {'n': 1}\n    aggregation = 'rate'\n\n"
        "    def step(self, state, at):\n        return [Branch(1.0, at.gain, self.before_cutoff(at.rank))]\n")
    (tmp_path / "c.toml").write_text(
        '[experiment]\nname = "once"\nusers = 0\n\n[data.synthetic]\ntopics = 2\nruns = 2\ndepth = 5\n\n'
        '[[measures]]\nname = "model.py:Reader(n={n})@3"\ngrid = { n = [1, 2, 3] }\n')
    config, _ = load_config(str(tmp_path / "c.toml"))
    assert log.read_text() == "x"
    tasks = plan(config)
    assert len(tasks) == 6 and expand_measures(config) == [t["measure"] for t in tasks[::2]]
    assert log.read_text() == "x"


def test_a_run_sharing_no_topic_with_the_qrels_is_named(tmp_path, run_cli):
    """Issue 24: a run whose topics are none of the qrels' gave AP 0.0000, status 0, no word.
    Averaged over the qrels' topics it is a one-line warning naming the run and the qrels; over
    the topics a run shares with them (--topics intersection, and --format trec's default, as
    trec_eval's "No queries with both results and relevance info") an error, status 2."""
    (tmp_path / "q.txt").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d1 1\n")
    (tmp_path / "r.txt").write_text("1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n2 Q0 d1 1 1.0 t\n")
    (tmp_path / "r2.txt").write_text("1 Q0 d2 1 2.0 u\n2 Q0 d1 1 1.0 u\n")
    (tmp_path / "off.txt").write_text("x1 Q0 d1 1 2.0 o\nx2 Q0 d2 2 1.0 o\n")
    files = [tmp_path / "q.txt", tmp_path / "off.txt", tmp_path / "r.txt", tmp_path / "r2.txt"]
    named = f"run 'off' ({tmp_path / 'off.txt'}) shares no topic with the qrels {tmp_path / 'q.txt'} (its 2 topics: x1, x2)"
    for argv in (["eval", *files, "-m", "AP"], ["simulate", *files, "-m", "AP", "--users", "10"],
                 ["compare", *files, "-m", "AP"]):
        status, out, err = run_cli(argv)
        assert status == 0 and out, (argv, err)
        assert err == f"rpdi {argv[0]}: warning: {named}: its values are those of empty rankings\n", err
        status, out, err = run_cli(argv + ["--topics", "intersection"])
        assert status == 2 and out == "" and err.startswith(f"rpdi {argv[0]}: {named}: averaged over the topics"), err
        assert len(err.splitlines()) == 1
    status, out, err = run_cli(["eval", *files, "-m", "map", "--format", "trec"])
    assert status == 2 and out == "" and "--topics intersection" in err
    # a run sharing one topic is evaluated without a word
    status, out, err = run_cli(["eval", tmp_path / "q.txt", tmp_path / "r2.txt", "-m", "AP"])
    assert status == 0 and err == ""
    # a config's run is named too (rpdi run averages over the qrels' topics)
    (tmp_path / "c.toml").write_text('[experiment]\nname = "c"\nusers = 10\n\n[data]\nqrels = "q.txt"\n'
                                     'runs = ["off.txt", "r.txt"]\n\n[[measures]]\nname = "AP"\n')
    status, out, err = run_cli(["run", tmp_path / "c.toml", "--out", tmp_path / "out"])
    assert status == 0 and "rpdi run: warning: run 'off' " in err and "shares no topic with the qrels" in err, err


def test_discriminative_power_with_a_baseline_is_over_all_pairs(tmp_path, run_cli, write_trec):
    """Issue 24: ``--discriminative-power --baseline`` was refused on the command line while a
    config's ``[compare]`` with a baseline computed it. Sakai's discriminative power is a property
    of a measure over all pairs of runs; a baseline only chooses which pairs the table shows. The
    command line now computes it as the config does: the same ASLs, with or without a baseline."""
    import json

    qrels = {f"q{t}": {f"d{i}": int(i % 3 == t % 3) for i in range(6)} for t in range(6)}
    runs = {name: {q: {f"d{i}": float((i * k + t) % 6) for i in range(6)} for t, q in enumerate(qrels)}
            for k, name in ((1, "a"), (5, "b"), (2, "c"))}
    qpath, paths = write_trec(tmp_path, qrels, runs)
    argv = ["compare", qpath, *paths, "-m", "AP", "-m", "RR", "--discriminative-power", "--format", "json",
            "--resamples", "500"]
    status, out, err = run_cli(argv)
    assert status == 0, err
    every = json.loads(out)
    assert [p["pairs"] for p in every] == [3, 3]
    status, out, err = run_cli(argv + ["--baseline", "a"])
    assert status == 0, err
    assert json.loads(out) == every
    (tmp_path / "c.toml").write_text(
        f'[experiment]\nname = "dp"\nusers = 0\n[data]\nqrels = "{qpath}"\nruns = {json.dumps(paths)}\n'
        '[[measures]]\nname = "AP"\n[[measures]]\nname = "RR"\n'
        '[compare]\nbaseline = "a"\nresamples = 500\n[output]\nplots = false\n')
    status, out, err = run_cli(["run", tmp_path / "c.toml", "--out", tmp_path / "o"])
    assert status == 0, err
    assert json.loads((tmp_path / "o" / "discriminative_power.json").read_text()) == every
