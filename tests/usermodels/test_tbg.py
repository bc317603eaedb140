"""Time-biased gain with document lengths from an explicit lengths file (``--doc-lengths``);
a run's fields after the tag are ignored, as trec_eval ignores them."""

import numpy as np

from rpdi.experiments.cli import main
from rpdi.metrics import build_rankings, load_qrels, load_runs, parse_measure
from rpdi.metrics.evaluate import compute
from rpdi.metrics.trec import read_lengths, with_lengths
from rpdi.simulate import simulate
from rpdi.usermodels import exact, model_for

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 1\n1 0 e 1\n"
RUN = "1 Q0 a 1 4.0 r\n1 Q0 b 2 3.0 r\n1 Q0 c 3 2.0 r\n1 Q0 d 4 1.0 r\n1 Q0 e 5 0.5 r\n"
LENGTHS = "# docno words\na 120\nb 5000\nc 800\nd 60\ne 2000\n"


def _files(tmp_path, run=RUN, lengths=LENGTHS):
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r.run").write_text(run)
    (tmp_path / "lengths").write_text(lengths)
    return str(tmp_path / "q"), str(tmp_path / "r.run"), str(tmp_path / "lengths")


def _rankings(q, r, lengths):
    return build_rankings(load_qrels(q), [with_lengths(load_runs([r])[0], read_lengths(lengths))])


def _hand_tbg(relevant, words, halflife=224.0):
    """Smucker & Clarke's TBG by hand: gain 0.64 x 0.77 at each relevant document, discounted
    by the expected time to reach it (4.4 s a snippet, 0.018 words + 7.8 s a clicked document,
    clicks 0.64 relevant / 0.39 not)."""
    total, t = 0.0, 0.0
    for rel, w in zip(relevant, words):
        total += 0.64 * 0.77 * rel * np.exp(-t * np.log(2) / halflife)
        t += 4.4 + (0.64 if rel else 0.39) * (0.018 * w + 7.8)
    return total


def test_closed_form_uses_the_lengths_file(tmp_path):
    q, r, lengths = _files(tmp_path)
    value = compute(_rankings(q, r, lengths), [parse_measure("TBG")])[0].value[0, 0]
    assert abs(value - _hand_tbg([1, 0, 1, 0, 1], [120, 5000, 800, 60, 2000])) < 1e-12
    # documents the file leaves out have the default length
    q, r, lengths = _files(tmp_path, lengths="a 120\nc 800\n")
    value = compute(_rankings(q, r, lengths), [parse_measure("TBG(words=300.0)")])[0].value[0, 0]
    assert abs(value - _hand_tbg([1, 0, 1, 0, 1], [120, 300, 800, 300, 300])) < 1e-12


def test_a_seventh_run_column_is_ignored_like_trec_eval_ignores_it(tmp_path):
    """A number after the tag is not a document length: lengths come only from the user's file."""
    q, r, _ = _files(tmp_path, run=RUN.replace(" r\n", " r 5\n"))
    value = compute(build_rankings(load_qrels(q), load_runs([r])), [parse_measure("TBG(words=300.0)")])[0]
    assert abs(value.value[0, 0] - _hand_tbg([1, 0, 1, 0, 1], [300] * 5)) < 1e-12
    assert main(["eval", q, r, "-m", "TBG", "--doc-lengths", str(tmp_path / "lengths"), "--format", "json"]) == 0


def test_model_with_lengths_is_above_the_closed_form_and_simulation_agrees(tmp_path):
    """Jensen: E[exp(-l T_k)] >= exp(-l E[T_k]); both engines agree with the exact value."""
    q, r, lengths = _files(tmp_path)
    rankings = _rankings(q, r, lengths)
    m = parse_measure("TBG")
    ex = exact(model_for(m), rankings).value[0, 0]
    assert ex > compute(rankings, [m])[0].value[0, 0] + 1e-4
    run = with_lengths(load_runs([r])[0], read_lengths(lengths))
    for engine, users in (("vector", 40000), ("agent", 4000)):
        rec = simulate(q, [run], ["TBG"], users=users, seed=11, engine=engine)[0]
        assert abs(rec["exact"] - ex) < 1e-12
        assert abs(rec["z"]) < 3.5


def test_a_negative_length_is_bad_input(tmp_path, capsys):
    q, r, lengths = _files(tmp_path, lengths=LENGTHS.replace("d 60", "d -60"))
    assert main(["eval", q, r, "-m", "TBG", "--doc-lengths", lengths]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lengths:5:" in err[0] and "negative" in err[0]


def test_a_lengths_line_without_its_number_is_bad_input(tmp_path, capsys):
    q, r, lengths = _files(tmp_path, lengths=LENGTHS.replace("c 800", "c"))
    assert main(["eval", q, r, "-m", "TBG", "--doc-lengths", lengths]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lengths:4:" in err[0] and "expected 2 fields" in err[0]
