"""``--ties`` on the command line: rpdi eval and compare against brute force through the command
itself (every order of the tie groups written as a run of distinct scores and evaluated as
trec_eval orders it), every output format, bad values in one line, and no tie: today's output."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from rpdi.experiments.config import load_config
from rpdi.metrics.errors import InputError

QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "d": 1}, "q2": {"x": 1, "y": 0, "z": 1}}
RUNS = {"r": {"q1": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0}, "q2": {"x": 1.0, "y": 1.0, "z": 1.0}},
        "s": {"q1": {"c": 2.0, "a": 1.0, "b": 1.0}, "q2": {"y": 2.0, "x": 1.0, "w": 1.0, "z": 0.5}}}
MEASURES = ["RR", "P@2", "AP", "ERR@3", "INST", "RBP(p=0.5)"]


def orders(run: dict) -> list[dict]:
    """A run once per order of every tie group of every topic, as distinct scores."""
    per_topic = []
    for t, scores in run.items():
        levels = sorted(set(scores.values()), reverse=True)
        groups = [[d for d in scores if scores[d] == s] for s in levels]
        per_topic.append([(t, sum(p, ())) for p in itertools.product(*[itertools.permutations(g) for g in groups])])
    return [{t: {d: float(len(o) - i) for i, d in enumerate(o)} for t, o in combo}
            for combo in itertools.product(*per_topic)]


def values(run_cli, qrels, run_paths, extra=()) -> dict:
    """{(run, measure): value} of rpdi eval --format json (topic all)."""
    status, out, err = run_cli(["eval", qrels, *run_paths, *sum([["-m", m] for m in MEASURES], []),
                                "--format", "json", *extra])
    assert status == 0, err
    return {(r["run"], r["measure"]): r for r in json.loads(out)}


@pytest.fixture
def collection(tmp_path, write_trec):
    return write_trec(tmp_path, QRELS, RUNS)


def brute_force(run_cli, write_trec, tmp_path, name: str) -> dict:
    """{measure: every order's mean over topics} of run ``name``."""
    every = {m: [] for m in MEASURES}
    for i, run in enumerate(orders(RUNS[name])):
        (tmp_path / f"{name}{i}").mkdir(exist_ok=True)
        qrels, (path,) = write_trec(tmp_path / f"{name}{i}", QRELS, {name: run})
        for (_, m), r in values(run_cli, qrels, [path]).items():
            every[m].append(r["value"])
    return every


def test_eval_expected_and_range_equal_brute_force(collection, run_cli, write_trec, tmp_path):
    qrels, paths = collection
    expected = values(run_cli, qrels, paths, ["--ties", "expected"])
    spread = values(run_cli, qrels, paths, ["--ties", "range"])
    today = values(run_cli, qrels, paths)
    for name in RUNS:
        every = brute_force(run_cli, write_trec, tmp_path, name)
        for m in MEASURES:
            e, r = expected[name, m], spread[name, m]
            assert e["value"] == pytest.approx(np.mean(every[m]), rel=1e-9, abs=1e-12), (name, m, e["ties"])
            assert (r["low"], r["high"]) == pytest.approx((min(every[m]), max(every[m])), rel=1e-9, abs=1e-12)
            assert r["value"] == today[name, m]["value"]  # range keeps trec_eval's value
            assert e["stderr"] == 0.0 and e["ties"] != "unchanged"
    assert expected["r", "RR"]["ties"] == "closed_form" and expected["r", "INST"]["ties"] == "enumeration"
    assert expected["r", "RBP(p=0.5)"]["ties"] == "linear" and spread["r", "RR"]["ties"] == "sorted"


def test_eval_formats(collection, run_cli):
    qrels, paths = collection
    base = ["eval", qrels, *paths, "-m", "RR", "-m", "INST"]
    status, out, _ = run_cli(base + ["--ties", "expected"])
    assert status == 0 and "ties expected: each value is its expectation" in out
    assert "How: RR: closed_form; INST: enumeration" in out
    status, out, _ = run_cli(base + ["--ties", "range"])
    assert status == 0 and "ties range:" in out and "[" in out.splitlines()[1]
    status, out, _ = run_cli(base + ["--ties", "range", "--format", "csv"])
    assert out.splitlines()[0] == "run,topic,measure,value,residual,method,low,high,ties"
    status, out, _ = run_cli(base + ["--ties", "expected", "--format", "csv", "-q"])
    assert out.splitlines()[0] == "run,topic,measure,value,residual,method,ties,stderr"
    status, trec, _ = run_cli(base + ["--ties", "expected", "--format", "trec"])
    status, out, _ = run_cli(base + ["--ties", "expected", "--format", "json", "--topics", "intersection"])
    want = {(r["run"], r["measure"]): f"{r['value']:.4f}" for r in json.loads(out)}
    shown = [line.split("\t") for line in trec.splitlines()]
    run = None
    for name, _, value in shown:
        if name.strip() == "runid":
            run = value.removesuffix(".run")
        else:
            assert value == want[run, name.strip()]
    status, out, err = run_cli(base + ["--ties", "range", "--format", "trec"])
    assert status == 2 and out == "" and len(err.splitlines()) == 1 and "ties range" in err


def test_no_ties_gives_todays_output(tmp_path, run_cli, write_trec):
    runs = {"r": {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 2.0, "y": 1.0}},
            "s": {"q1": {"c": 3.0, "a": 1.0}, "q2": {"y": 2.0, "x": 1.0}}}
    qrels, paths = write_trec(tmp_path, QRELS, runs)
    for command in (["eval"], ["compare"]):
        argv = command + [qrels, *paths, "-m", "RR", "-m", "INST", "-m", "nDCG@2"]
        for fmt in ("table", "json", "csv"):
            today = run_cli(argv + ["--format", fmt])
            assert run_cli(argv + ["--format", fmt, "--ties", "trec_eval"]) == today
            if fmt == "json":  # the same values, with how ("unchanged") added
                for ties in ("expected", "range"):
                    got = json.loads(run_cli(argv + ["--format", fmt, "--ties", ties])[1])
                    for a, b in zip(json.loads(today[1]), got):
                        assert {k: v for k, v in b.items() if k in a} == a
                        assert b["ties"] == "unchanged"
    status, today, _ = run_cli(["eval", qrels, *paths, "-m", "RR", "--format", "trec"])
    assert run_cli(["eval", qrels, *paths, "-m", "RR", "--format", "trec", "--ties", "expected"])[1] == today


def test_compare_expected_and_range(collection, run_cli, write_trec, tmp_path):
    qrels, paths = collection
    status, out, err = run_cli(["compare", qrels, *paths, "-m", "INST", "--ties", "expected", "--format", "json"])
    assert status == 0, err
    pair, = json.loads(out)
    expected = values(run_cli, qrels, paths, ["--ties", "expected"])
    assert (pair["mean_a"], pair["mean_b"]) == pytest.approx((expected["r", "INST"]["value"],
                                                              expected["s", "INST"]["value"]), rel=1e-12)
    status, out, err = run_cli(["compare", qrels, *paths, "-m", "INST", "--ties", "range", "--format", "json"])
    pair, = json.loads(out)
    diffs = [b - a for a in brute_force(run_cli, write_trec, tmp_path, "r")["INST"]
             for b in brute_force(run_cli, write_trec, tmp_path, "s")["INST"]]
    assert (pair["diff_low"], pair["diff_high"]) == pytest.approx((min(diffs), max(diffs)), rel=1e-9)
    status, out, _ = run_cli(["compare", qrels, *paths, "-m", "INST", "--ties", "range"])
    assert "diff_low" in out and "ties range: the values compared are trec_eval's order's" in out


def test_bad_values_are_one_line(collection, run_cli, tmp_path):
    qrels, paths = collection
    cases = [(["eval", "--ties", "bogus"], "invalid choice: 'bogus'"),
             (["eval", "--ties", "expected", "--average", "micro", "-m", "P@2"], "average micro: not given with ties"),
             (["compare", "--ties", "expected", "--users", "10"], "users: not given with ties expected yet"),
             (["simulate", "--ties", "range"], "invalid choice: 'range'"),
             (["eval", "--ties", "expected", "-m", "alpha-nDCG@10"], "no expectation over tie orders")]
    for argv, message in cases:
        status, out, err = run_cli([argv[0], qrels, *paths, "-m", "RR", *argv[1:]])
        assert status == 2 and out == "" and len(err.splitlines()) == 1 and message in err, (argv, err)


def test_config_ties(tmp_path, write):
    base = ('[experiment]\nname = "x"\n[data]\nqrels = "q.txt"\nruns = ["r.txt"]\n[[measures]]\nname = "RR"\n'
            '[compare]\n')
    write(tmp_path / "q.txt", "q 0 a 1\n")
    write(tmp_path / "r.txt", "q Q0 a 1 1.0 r\n")
    assert load_config(write(tmp_path / "a.toml", base + 'ties = "range"\n'))[0].compare.ties == "range"
    for bad, message in (('ties = "docno"\n', "compare.ties"),
                         ('ties = "expected"\nusers = 0\n', "not given with users")):
        with pytest.raises(InputError, match=message):
            load_config(write(tmp_path / "b.toml", base + bad))


@pytest.mark.parametrize("ties", ["expected", "range"])
def test_experiment_compare_ties_equals_the_api(tmp_path, write_trec, ties):
    import rpdi
    from rpdi.experiments.experiment import run_experiment

    qrels, paths = write_trec(tmp_path, QRELS, RUNS)
    config = tmp_path / "c.toml"
    config.write_text(f'[experiment]\nname = "c"\nusers = 0\n[data]\nqrels = "{qrels}"\nruns = {json.dumps(paths)}\n'
                      f'[[measures]]\nname = "INST"\n[compare]\nresamples = 500\ntest = "t"\nties = "{ties}"\n'
                      f'[output]\nplots = false\n')
    run_experiment(str(config), out=str(tmp_path / "out"))
    pairs = json.loads((tmp_path / "out" / "compare.json").read_text())
    api = rpdi.compare(qrels, paths, ["INST"], test="t", ties=ties)
    assert len(pairs) == len(api) == 1 and pairs[0].keys() == api[0].keys()
    for key, value in api[0].items():
        assert pairs[0][key] == (pytest.approx(value, rel=1e-9) if isinstance(value, float) else value), key
    assert f"ties {ties}:" in (tmp_path / "out" / "summary.md").read_text()
