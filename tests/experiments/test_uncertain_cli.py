"""``rpdi eval`` and ``rpdi compare`` on uncertain grades: against the ordinary commands run in
every judgment world (brute force), probability-1 grades as today's output, assessors' files
combined, every output format, bad input."""

from __future__ import annotations

import csv
import io
import itertools
import json

import numpy as np
import pytest

# q1: d1 and d3 uncertain (2 x 3 worlds), q2: e1 uncertain (2 worlds): 12 worlds in all
UNCERTAIN = {("q1", "d1"): {0: 0.3, 1: 0.7}, ("q1", "d2"): {0: 1.0}, ("q1", "d3"): {0: 0.2, 1: 0.5, 2: 0.3},
             ("q2", "e1"): {1: 0.4, 2: 0.6}, ("q2", "e2"): {1: 1.0}}
RUN_A = "q1 Q0 d1 1 3.0 x\nq1 Q0 d2 2 2.0 x\nq1 Q0 d3 3 1.0 x\nq2 Q0 e2 1 2.0 x\nq2 Q0 e1 2 1.0 x\n"
RUN_B = "q1 Q0 d3 1 3.0 y\nq1 Q0 d1 2 2.0 y\nq2 Q0 e9 1 2.0 y\nq2 Q0 e1 2 1.0 y\n"
MEASURES = ["P@2", "ERR@3", "nDCG@3", "AP"]


def pairs_text(judgments) -> str:
    return "".join(f"{t} 0 {d} " + ",".join(f"{g}:{p}" for g, p in dist.items()) + "\n"
                   for (t, d), dist in judgments.items())


def worlds():
    """Every world of UNCERTAIN: (its qrels text, its probability)."""
    keys = list(UNCERTAIN)
    for grades in itertools.product(*(list(UNCERTAIN[k].items()) for k in keys)):
        text = "".join(f"{t} 0 {d} {g}\n" for (t, d), (g, _) in zip(keys, grades))
        yield text, float(np.prod([p for _, p in grades]))


@pytest.fixture
def files(tmp_path, write):
    return (write(tmp_path / "u.txt", pairs_text(UNCERTAIN)), write(tmp_path / "a.run", RUN_A),
            write(tmp_path / "b.run", RUN_B))


def measures_argv():
    return [x for m in MEASURES for x in ("-m", m)]


def by_world(tmp_path, write, run_cli, command, runs, fields):
    """Each world's ordinary output (json records keyed by run(s) and measure), with its probability."""
    out = []
    for i, (text, p) in enumerate(worlds()):
        q = write(tmp_path / f"world{i}.txt", text)
        status, stdout, err = run_cli([command, q, *runs, *measures_argv(), "--format", "json"])
        assert status == 0, err
        out.append(({tuple(r[f] for f in fields): r for r in json.loads(stdout)}, p))
    return out


def test_eval_expectation_and_sd_equal_every_world_of_the_ordinary_eval(files, tmp_path, write, run_cli):
    u, a, b = files
    status, stdout, err = run_cli(["eval", u, a, b, *measures_argv(), "--format", "json"])
    assert status == 0, err
    records = json.loads(stdout)
    assert len(records) == 2 * len(MEASURES)
    each = by_world(tmp_path, write, run_cli, "eval", [a, b], ("run", "measure"))
    assert sum(p for _, p in each) == pytest.approx(1)
    for r in records:
        values = np.array([w[r["run"], r["measure"]]["value"] for w, _ in each])
        weights = np.array([p for _, p in each])
        mean = values @ weights
        assert r["path"] == "enumeration" and r["error"] == 0
        assert r["value"] == pytest.approx(mean, abs=1e-12)
        assert r["sd"] == pytest.approx(np.sqrt(weights @ (values - mean) ** 2), abs=1e-12)
        assert values.min() - 1e-12 <= r["low"] <= r["high"] <= values.max() + 1e-12


def test_compare_p_beats_equals_the_share_of_worlds_b_wins(files, tmp_path, write, run_cli):
    u, a, b = files
    status, stdout, err = run_cli(["compare", u, a, b, *measures_argv(), "--format", "json"])
    assert status == 0, err
    each = by_world(tmp_path, write, run_cli, "eval", [a, b], ("run", "measure"))
    # the fixed comparison: on each document's most probable grade (of equally probable ones, the lowest)
    probable = {k: max(d, key=lambda g: (d[g], -g)) for k, d in UNCERTAIN.items()}
    q = write(tmp_path / "probable.txt", "".join(f"{t} 0 {d} {g}\n" for (t, d), g in probable.items()))
    status, fixed, _ = run_cli(["compare", q, a, b, *measures_argv(), "--format", "json"])
    fixed = {r["measure"]: r for r in json.loads(fixed)}
    for r in json.loads(stdout):
        diff = np.array([w["b", r["measure"]]["value"] - w["a", r["measure"]]["value"] for w, _ in each])
        weights = np.array([p for _, p in each])
        assert r["grades"] == "most probable" and r["worlds_path"] == "enumeration"
        assert r["worlds_diff"] == pytest.approx(diff @ weights, abs=1e-12)
        assert r["p_b_beats"] == pytest.approx(weights[diff > 1e-12].sum(), abs=1e-12)
        assert r["p_tie"] == pytest.approx(weights[np.abs(diff) <= 1e-12].sum(), abs=1e-12)
        assert {k: r[k] for k in fixed[r["measure"]]} == fixed[r["measure"]]


@pytest.mark.parametrize("command,formats", [("eval", ("table", "json", "csv", "trec")),
                                             ("compare", ("table", "json", "csv"))])
def test_probability_one_grades_give_exactly_todays_output(command, formats, files, tmp_path, write, run_cli):
    _, a, b = files
    certain = {k: {max(d, key=d.get): 1.0} for k, d in UNCERTAIN.items()}
    plain = write(tmp_path / "plain.txt", "".join(f"{t} 0 {d} {g}\n" for (t, d), x in certain.items() for g in x))
    pairs = write(tmp_path / "pairs.txt", pairs_text(certain).replace(":1.0", ":1", 2))
    for fmt in formats:
        outputs = [run_cli([command, q, a, b, *measures_argv(), "--format", fmt]) for q in (plain, pairs)]
        assert outputs[0][0] == 0 and outputs[0] == outputs[1]


def test_assessors_combined_by_weight_equal_the_pairs_they_make(files, tmp_path, write, run_cli):
    _, a, b = files
    one = write(tmp_path / "one.txt", "q1 0 d1 1\nq1 0 d3 2\nq2 0 e1 2\n")
    two = write(tmp_path / "two.txt", "q1 0 d1 0\nq1 0 d3 1\nq2 0 e1 2\nq2 0 e2 1\n")
    # weights 1 and 3: d1 1:0.25,0:0.75; d3 2:0.25,1:0.75; e1 2; e2 judged by two only: 1
    made = write(tmp_path / "made.txt", "q1 0 d1 0:0.75,1:0.25\nq1 0 d3 1:0.75,2:0.25\nq2 0 e1 2\nq2 0 e2 1\n")
    for command in ("eval", "compare"):
        combined = run_cli([command, one, a, b, *measures_argv(), "--assessor", f"{two}:3", "--format", "json"])
        assert combined[0] == 0, combined[2]
        assert combined == run_cli([command, made, a, b, *measures_argv(), "--format", "json"])
    # --missing zero: e2, silent in one, is 0 with weight 1 of 4
    zero = run_cli(["eval", one, a, "-m", "P@2", "--assessor", f"{two}:3", "--missing", "zero", "--format", "json",
                    "-q"])
    per_topic = {r["topic"]: r["value"] for r in json.loads(zero[1])}
    assert per_topic["q2"] == pytest.approx((1 + 0.75) / 2)


def test_tables_and_csv_say_expectation_sd_interval_and_path(files, run_cli):
    u, a, b = files
    status, table, _ = run_cli(["eval", u, a, b, "-m", "AP", "-q"])
    assert status == 0
    header = table.splitlines()[0].split()
    assert header == ["run", "topic", "measure", "expected", "sd", "interval", "path"]
    assert "enumeration" in table
    status, text, _ = run_cli(["eval", u, a, b, "-m", "AP", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["run", "topic", "measure", "value", "sd", "low", "high", "error", "path"]
    status, table, _ = run_cli(["compare", u, a, b, "-m", "AP"])
    assert status == 0 and "P(B beats A)" in table and "diff (most probable)" in table


def test_sampled_worlds_are_seeded_and_carry_their_monte_carlo_error(tmp_path, write, run_cli):
    # 14 uncertain documents: 16384 worlds, more than are enumerated; nDCG is not linear: sampled
    q = write(tmp_path / "many.txt", "".join(f"q 0 d{i} 0:0.5,1:0.5\n" for i in range(14)))
    r = write(tmp_path / "r.run", "".join(f"q Q0 d{i} {i + 1} {20 - i} r\n" for i in range(14)))
    argv = ["eval", q, r, "-m", "nDCG@10", "--format", "json", "--worlds", "400"]
    first, again, other = (run_cli(argv + ["--seed", s]) for s in ("1", "1", "2"))
    assert first == again and first[1] != other[1]
    (rec,) = json.loads(first[1])
    assert rec["path"] == "sampled" and 0 < rec["error"] == pytest.approx(rec["sd"] / np.sqrt(400))


@pytest.mark.parametrize("argv,says", [
    (["--format", "trec"], "--format trec: not with uncertain grades"),
    (["--worlds", "1"], "worlds: expected a whole number of at least 2"),
    (["-l", "2"], "-l: not with uncertain grades"),
    (["--seed", "-1"], "seed: expected a whole number >= 0"),
    (["--assessor", "/nonexistent/qrels:2"], "/nonexistent/qrels: no such file"),
    (["--assessor", "PAIRS"], "has grade:probability pairs; an assessor's qrels give one grade"),
])
def test_bad_options_are_one_line(argv, says, files, tmp_path, write, run_cli):
    u, a, _ = files
    if "--assessor" in argv:  # assessors combine plain qrels
        u = write(tmp_path / "plain.txt", "q1 0 d1 1\n")
        argv = [x.replace("PAIRS", files[0]) for x in argv]
    status, out, err = run_cli(["eval", u, a, "-m", "P@2", *argv])
    assert status == 2 and out == "" and err.count("\n") == 1 and says in err, err


def test_bad_input_is_one_line(files, tmp_path, write, run_cli):
    _, a, b = files
    bad = write(tmp_path / "bad.txt", "q1 0 d1 0:0.3,1:0.7\nq1 0 d3 0:0.5,1:0.4\n")
    for command in ("eval", "compare"):
        status, out, err = run_cli([command, bad, a, b, "-m", "P@2"])
        assert status == 2 and out == "" and err.count("\n") == 1, err
        assert f"{bad}:2" in err and "sum to 0.9" in err
    plain = write(tmp_path / "plain.txt", "q1 0 d1 1\n")
    status, out, err = run_cli(["eval", plain, a, "-m", "P@2", "--assessor", f"{plain}:-1"])
    assert status == 2 and err.count("\n") == 1 and "weights" in err, err
    status, out, err = run_cli(["compare", files[0], a, b, "-m", "P@2", "--users", "10"])
    assert status == 2 and err.count("\n") == 1 and "--users" in err, err


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_standard_input_is_read_as_a_file_and_names_the_bad_line(gzipped, files, monkeypatch, run_cli):
    """Pairs on standard input (``-``) are uncertain grades as in a file, and a bad entry is named
    by its line, comments and blank lines counted (it used to be read as plain qrels)."""
    import gzip

    u, a, b = files

    def stdin(text):
        data = text.encode()
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(data) if gzipped else data)))

    status, from_file, err = run_cli(["eval", u, a, b, *measures_argv(), "--format", "json"])
    assert status == 0, err
    stdin(pairs_text(UNCERTAIN))
    assert run_cli(["eval", "-", a, b, *measures_argv(), "--format", "json"]) == (0, from_file, "")
    for command in ("eval", "compare"):
        stdin("# judged twice\n\nq1 0 d1 0:0.3,1:0.7\nq1 0 d2 1\nq1 0 d3 0:0.5,1:0.4\n")
        status, out, err = run_cli([command, "-", a, b, "-m", "P@2"])
        assert (status, out) == (2, "") and err.count("\n") == 1, err
        assert err.endswith(": -:5: grades '0:0.5,1:0.4': probabilities sum to 0.9, not 1\n"), err
