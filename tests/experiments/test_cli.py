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


DIVERSITY_QRELS = "1 1 d1 1\n1 2 d1 0\n1 2 d2 1\n1 3 d3 1\n1 3 d4 0\n2 1 e1 1\n2 2 e2 1\n2 2 e3 1\n"
DIVERSITY_RUN = "1 Q0 d2 1 3 a\n1 Q0 d1 2 2 a\n1 Q0 x 3 1 a\n1 Q0 d3 4 0.5 a\n2 Q0 e2 1 1 a\n2 Q0 e1 2 0.5 a\n"


def test_eval_prints_ndevals_numbers_to_its_precision(tmp_path, run_cli):
    """``rpdi eval --format trec`` with ndeval's names: trec_eval's lines, values to ndeval's 6
    decimals, each equal to pyndeval's printed value (the run has no tie, where pyndeval's order
    differs); ir_measures' names give the same numbers."""
    import pyndeval

    (tmp_path / "div.qrels").write_text(DIVERSITY_QRELS)
    (tmp_path / "a.run").write_text(DIVERSITY_RUN)
    names = ["alpha-nDCG@5", "ERR-IA@10", "nERR-IA@20", "alpha-DCG@5", "NRBP", "nNRBP", "MAP-IA", "P-IA@5", "strec@5"]
    argv = ["eval", str(tmp_path / "div.qrels"), str(tmp_path / "a.run"), "--format", "trec", "-q", "-c"]
    status, out, err = run_cli(argv + [x for name in names for x in ("-m", name)])
    assert status == 0, err
    printed = {(name, topic): value for name, topic, value in (line.split("\t") for line in out.splitlines())}
    qrels = [tuple(line.split()[:3]) + (int(line.split()[3]),) for line in DIVERSITY_QRELS.splitlines()]
    run = [(t, d, float(s)) for t, _, d, _, s, _ in (line.split() for line in DIVERSITY_RUN.splitlines())]
    theirs = pyndeval.ndeval(qrels, run, measures=names)
    for name in names:
        for topic in ("1", "2"):
            assert printed[f"{name:<22}", topic] == f"{theirs[topic][name]:.6f}", (name, topic)
        assert printed[f"{name:<22}", "all"] == f"{(theirs['1'][name] + theirs['2'][name]) / 2:.6f}"
    status, again, _ = run_cli(argv + ["-m", "alpha_nDCG@5", "-m", "AP_IA"])
    lines = dict(((name.strip(), topic), value) for name, topic, value in (x.split("\t") for x in again.splitlines()))
    assert lines["alpha_nDCG@5", "all"] == printed[f"{'alpha-nDCG@5':<22}", "all"]
    assert lines["AP_IA", "all"] == printed[f"{'MAP-IA':<22}", "all"]


def test_eval_with_intent_probabilities(tmp_path, run_cli):
    (tmp_path / "div.qrels").write_text(DIVERSITY_QRELS)
    (tmp_path / "a.run").write_text(DIVERSITY_RUN)
    (tmp_path / "intents.txt").write_text("1 1 0.5\n1 2 0.25\n1 3 0.25\n2 1 1\n")
    base = ["eval", str(tmp_path / "div.qrels"), str(tmp_path / "a.run"), "--format", "json", "-q"]
    status, out, err = run_cli(base + ["-m", "P-IA@1", "-m", "RR-IA", "--intents", str(tmp_path / "intents.txt")])
    assert status == 0, err
    got = {(r["measure"], r["topic"]): r["value"] for r in json.loads(out)}
    # topic 1 ranks d2 (intent 2), d1 (intent 1), x, d3 (intent 3); topic 2 e2 (intent 2), e1 (intent 1)
    assert got["P-IA@1", "1"] == 0.25 and got["P-IA@1", "2"] == 0.0
    assert got["RR-IA", "1"] == pytest.approx(0.5 / 2 + 0.25 / 1 + 0.25 / 4) and got["RR-IA", "2"] == 0.5


@pytest.mark.parametrize("qrels, intents, measure, message", [
    ("1 1 d1\n", None, "alpha-nDCG@5", "div.qrels:1: expected 4 fields (topic subtopic docno grade), found 3"),
    (DIVERSITY_QRELS + "2 2 e3 0\n", None, "ERR-IA@5", "div.qrels:9: document e3 appears twice for topic 2 subtopic 2"),
    (DIVERSITY_QRELS, "1 1 0.5\n1 2 0.25\n1 3 0.2\n2 1 1\n", "P-IA@5", "intents.txt:1: topic 1: the probabilities sum"),
    (DIVERSITY_QRELS, "1 1 0.5\n1 4 0.5\n2 1 1\n", "P-IA@5", "intents.txt:2: topic 1 has no subtopic 4"),
    (DIVERSITY_QRELS, "1 1 1\n2 1 1\n3 1 1\n", "RBP-IA", "intents.txt:3: topic 3 is not in the qrels"),
    (DIVERSITY_QRELS, "1 1 1\n2 1 1\n", "P@5", "intents: given, but no diversity or intent-aware measure"),
    (DIVERSITY_QRELS, None, "alpha-nDCG", "alpha-nDCG needs a cutoff"),
    (DIVERSITY_QRELS, None, "NRBP(beta=2)", "beta=2 out of range"),
])
def test_bad_diversity_input_is_one_line_and_status_2(tmp_path, run_cli, qrels, intents, measure, message):
    (tmp_path / "div.qrels").write_text(qrels)
    (tmp_path / "a.run").write_text(DIVERSITY_RUN)
    argv = ["eval", str(tmp_path / "div.qrels"), str(tmp_path / "a.run"), "-m", measure]
    if intents is not None:
        (tmp_path / "intents.txt").write_text(intents)
        argv += ["--intents", str(tmp_path / "intents.txt")]
    status, out, err = run_cli(argv)
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err, err
