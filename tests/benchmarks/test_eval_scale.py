"""tests/benchmarks/eval_scale.py: its agreement checks refuse a wrong value from any anchor, a
smoke run of --quick on its tiniest shape agrees and measures every tool, bad arguments exit 2."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def scale():
    """tests/benchmarks/eval_scale.py loaded as a module (it is a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("eval_scale", Path(__file__).parent / "eval_scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_anchor_check_refuses_a_wrong_value(scale):
    ours = {("run01", "AP"): 0.37505606887285403, ("run01", "RR"): 1.0}
    near = {("run01", "AP"): 0.37505606887285403 + 5e-10, ("run01", "RR"): 1.0}
    assert scale.disagreements("pytrec_eval", ours, near, scale.agree_pytrec_eval) == []
    off = {("run01", "AP"): 0.37505606887285403 + 2e-9, ("run01", "RR"): 1.0}
    assert scale.disagreements("pytrec_eval", ours, off, scale.agree_pytrec_eval) == [
        f"run01 AP: rpdi 0.37505606887285403, pytrec_eval {off[('run01', 'AP')]!r}"]
    # a value the anchor lacks is a disagreement too
    assert scale.disagreements("pytrec_eval", ours, {("run01", "AP"): ours[("run01", "AP")]},
                               scale.agree_pytrec_eval) == ["run01 RR: rpdi 1.0, pytrec_eval has no value"]
    # trec_eval: its printed decimals
    printed = scale.trec_eval_means("map                   \tall\t0.3751\nmap\t401\t0.2000\n"
                                    "recip_rank\tall\t1.0000\nnum_q\tall\t50\n", "run01")
    assert printed == {("run01", "AP"): "0.3751", ("run01", "RR"): "1.0000"}
    assert scale.disagreements("trec_eval", ours, printed, scale.agree_trec_eval) == []
    printed[("run01", "AP")] = "0.3750"
    assert len(scale.disagreements("trec_eval", ours, printed, scale.agree_trec_eval)) == 1
    # ranx: inside rpdi's interval over the orders of tied documents, with 1e-6 of slack
    interval = {("run01", "AP"): (0.3748, 0.3751)}
    for value, agrees in ((0.37495, True), (0.3751 + 5e-7, True), (0.3751 + 2e-6, False), (0.3747, False)):
        assert (scale.disagreements("ranx", interval, {("run01", "AP"): value}, scale.agree_ranx) == []) is agrees


def test_a_quick_run_agrees_and_a_wrong_anchor_value_is_caught(scale, tmp_path, capsys):
    assert scale.main(["--quick", "--shapes", "3x10x100", "--rounds", "1", "--markdown",
                       "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "shape 3x10x100: 3 runs x 10 topics x 100 documents" in out
    assert "rpdi eval, one-line input" in out and "target peak RSS" in out and "| 3x10x100 |" in out
    assert "agreement: rpdi agrees with pytrec_eval" in out
    # the same check, through check(), with one pytrec_eval mean made wrong: rpdi runs for real
    directory = tmp_path / "3x10x100"
    qrels, runs = str(directory / "qrels.txt"), sorted(str(p) for p in directory.glob("run*.run"))
    child = scale.child_means(scale.run_child(scale.child_command("pytrec_eval", qrels, runs))[1])
    child[("run02", "nDCG@10")] += 1e-6
    problems = scale.check(qrels, runs, {"pytrec_eval": (None, child)}, None)
    assert len(problems) == 1 and problems[0].startswith("run02 nDCG@10: rpdi ")


def test_the_peak_per_run_added_is_told_for_shapes_alike_but_for_their_runs(scale):
    """Two shapes that differ only by their number of runs give the difference of rpdi's peaks
    per run added (8 MiB over 80 runs: 102 KiB a run); shapes that differ otherwise give none."""
    sample = lambda mib: scale.Sample(1.0, 1.0, mib * scale.MiB)
    rows = [("100x50x1000", scale.SHAPES["100x50x1000"], {"rpdi": sample(108)}, {"run": 1_900_000}),
            ("20x50x1000", scale.SHAPES["20x50x1000"], {"rpdi": sample(100)}, {"run": 1_800_000}),
            ("10x6980x100", scale.SHAPES["10x6980x100"], {"rpdi": sample(280)}, {"run": 26_000_000})]
    assert scale.growth(rows) == ["rpdi's peak per run added, 20x50x1000 -> 100x50x1000: +102 KiB (a run file: 1855 KiB)"]
    assert scale.growth(rows[1:]) == []


@pytest.mark.parametrize("argv", [["--shapes", "7x7x7"], ["--quick", "--shapes", "20x50x1000"],
                                  ["--rounds", "0"], ["--trec-eval", "/no/such/trec_eval"]])
def test_bad_arguments_exit_2(scale, argv):
    with pytest.raises(SystemExit) as exit_:
        scale.main(argv)
    assert exit_.value.code == 2
