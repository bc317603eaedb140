"""trec_eval's own test suite (its ``test/`` folder), value by value.

The inputs and expected outputs are trec_eval's, committed unchanged under tests/data/trec_eval
(see its README for the source commits and licence). For every expected file, rpdi evaluates
the same inputs with the same measures and flags, and every printed value (4 decimals, counts as
integers, ``runid``, ``relstring``) must equal trec_eval's.

Where a value cannot be reproduced under trec_eval 10.0's semantics, it is listed in KNOWN with
its reason, and the reason is checked: the set of differing values must be exactly KNOWN (a new
difference fails, and so does a known one that disappears), and each known value must be
reproduced by the rule its reason names. The expected files available were written by builds
that still used trec_eval 9.x's interpolation rule (floor(r R + 0.9), in float64; trec_eval 10.0
takes lround(r R)); ``out.test.a.rbp`` by a build whose floating point gave floor(0.3 x 77 + 0.9)
= 24 where IEEE float64 gives 23 (x87 extended precision: exactly why trec_eval 10.0 moved to
lround, "not platform-safe"). A trec_eval 10.0-rc2 build differs from these files in exactly the
KNOWN values, and its own output (``te10/out.aq``) is rpdi's line for line.

``out.test.aqc`` and ``out.test.aqcM`` were made from ``results.trunc``, which trec_eval's
repository does not hold; ``results.trunc`` here is a reconstruction (see the data README) that a
trec_eval 10.0-rc2 build turns into every value of both files but the 9.x interpolation one. The
files in ``te10/`` are that build's own outputs, which rpdi's must equal line for line.
"""

import gzip
import io
import math
import sys
from pathlib import Path

import pytest

from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.experiments.cli import main
from rpdi.metrics import evaluate
from rpdi.metrics.trec_report import trec_report

DATA = Path(__file__).parents[1] / "data" / "trec_eval"
QRELS, RUN = str(DATA / "qrels.comment.test"), str(DATA / "results.comment.test")
TRUNC = str(DATA / "results.trunc")  # reconstructed, see the data README

MEAS_PARAMS = ["iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000", "Rprec_mult.5.0,0.2,0.35",
               "utility.2,-1,0,0", "11pt_avg..25,.5,.75", "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4",
               "success.2,5,20"]

# expected file: (trec_eval -m names, the run and flags as trec_report's options); trec_eval's
# Makefile runs each on qrels.test and results.test (or results.trunc), of which the comment files
# are copies with '#' lines (see the data README)
Q, C = dict(per_topic=True), dict(per_topic=True, topics="qrels", run=TRUNC)  # -q; -q -c on results.trunc
CASES = {
    "out.test": (["official"], {}),
    "out.test.a": (["all_trec"], {}),
    "out.test.aq": (["all_trec"], Q),
    "out.test.meas_params": (MEAS_PARAMS, Q),
    "out.test.a.rbp": (["all_trec"], {}),
    "out.test.aqc": (["all_trec"], C),
    "out.test.aqcM": (["all_trec"], {**C, "max_docs": 100}),
}

NINE_X = "written with trec_eval 9.x's interpolation rule floor(r R + 0.9); 10.0 takes lround(r R)"
X87 = ("written by a build computing floor(0.3 x 77 + 0.9) = 24 for topic 302 (float64 gives "
       "23.999999999999996, so 23): x87 extended precision")

KNOWN = {
    "out.test": {("iprec_at_recall_0.10", "all"): NINE_X, ("iprec_at_recall_0.60", "all"): NINE_X},
    "out.test.a": {("iprec_at_recall_0.10", "all"): NINE_X, ("iprec_at_recall_0.60", "all"): NINE_X,
                   ("11pt_avg", "all"): NINE_X},
    "out.test.aq": {("iprec_at_recall_0.10", "301"): NINE_X, ("iprec_at_recall_0.60", "302"): NINE_X,
                    ("11pt_avg", "302"): NINE_X, ("iprec_at_recall_0.10", "all"): NINE_X,
                    ("iprec_at_recall_0.60", "all"): NINE_X, ("11pt_avg", "all"): NINE_X},
    "out.test.meas_params": {("iprec_at_recall_0.10", "301"): NINE_X, ("iprec_at_recall_0.25", "302"): NINE_X,
                             ("11pt_avg_.25,.5,.75", "302"): NINE_X, ("iprec_at_recall_0.10", "all"): NINE_X,
                             ("iprec_at_recall_0.25", "all"): NINE_X, ("11pt_avg_.25,.5,.75", "all"): NINE_X},
    "out.test.a.rbp": {("iprec_at_recall_0.10", "all"): NINE_X, ("iprec_at_recall_0.60", "all"): NINE_X,
                       ("iprec_at_recall_0.30", "all"): X87, ("11pt_avg", "all"): X87},
    "out.test.aqc": {("iprec_at_recall_0.10", "301"): NINE_X},
    "out.test.aqcM": {},
}


def _lines(text: str) -> list[tuple[str, str, str]]:
    return [tuple(field.strip() for field in line.split("\t")) for line in text.splitlines()]


def _expected(name: str) -> list[tuple[str, str, str]]:
    return _lines((DATA / name).read_text())


@pytest.fixture(scope="module")
def reports():
    """rpdi's output for every case, under trec_eval 10.0 semantics and under --compat pytrec_eval."""
    return {(name, compat): _lines(trec_report(QRELS, [options.get("run", RUN)], names, compat=compat,
                                               **{k: v for k, v in options.items() if k != "run"}))
            for name, (names, options) in CASES.items() for compat in ("trec_eval", "pytrec_eval")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_value_of_trec_evals_expected_output(reports, name):
    ours = {(m, t): v for m, t, v in reports[name, "trec_eval"]}
    expected = _expected(name)
    differing = {(m, t) for m, t, v in expected if ours.get((m, t)) != v}
    assert differing == set(KNOWN[name]), "values differing from trec_eval other than the known ones"
    assert len(expected) - len(differing) >= 0.9 * len(expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_known_differences_are_the_rule_their_reason_names(reports, name):
    """A 9.x-rule value is reproduced by --compat pytrec_eval (same inputs, same flags); the x87
    values by the 9.x rule with 24 relevant documents for topic 302 at recall 0.3 (level 0.31
    gives that cutoff and leaves the other topics' values as they are)."""
    ours = {(m, t): v for m, t, v in reports[name, "pytrec_eval"]}
    expected = {(m, t): v for m, t, v in _expected(name)}
    for (m, t), reason in KNOWN[name].items():
        if reason == NINE_X:
            assert ours[m, t] == expected[m, t], (m, t)
    if any(reason == X87 for reason in KNOWN[name].values()):
        levels = "0,0.1,0.2,0.31,0.4,0.5,0.6,0.7,0.8,0.9,1"
        iprec, eleven = evaluate(QRELS, [RUN], ["IPrec@0.31", f"AP11pt(levels='{levels}')"],
                                 topics="intersection", compat="pytrec_eval")
        assert f"{iprec['value']:.4f}" == expected["iprec_at_recall_0.30", "all"]
        assert f"{eleven['value']:.4f}" == expected["11pt_avg", "all"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_lines_in_trec_evals_order(reports, name):
    """Same measure names, topics and order as trec_eval prints (the older all_trec of
    out.test.a/.aq had no rbp, rbp_resid and unj lines yet; under -c -q trec_eval 10 also prints
    topic 302, which results.trunc lacks, and the 9.x build that wrote .aqc/.aqcM did not)."""
    expected = [(m, t) for m, t, _ in _expected(name)]
    kept, topics = {m for m, _ in expected}, {t for _, t in expected}
    ours = [(m, t) for m, t, _ in reports[name, "trec_eval"]]
    assert [(m, t) for m, t in ours if m in kept and t in topics] == expected
    assert {m for m, _ in ours} - kept <= {"rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"}
    assert {t for _, t in ours} - topics == ({"302"} if CASES[name][1].get("topics") == "qrels" else set())


def test_command_line_output_is_trec_evals_byte_for_byte(capsys, monkeypatch):
    """``rpdi eval --format trec`` diffs clean: the run read from standard input (``-``)."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(RUN).read_bytes())))
    assert main(["eval", QRELS, "-", "-m", "official", "--format", "trec", "--compat", "pytrec_eval"]) == 0
    assert capsys.readouterr().out == (DATA / "out.test").read_text()


def _first_difference(ours: str, expected: str):
    """The first line where two outputs differ, with its number, or None if they are equal."""
    a, b = ours.splitlines(), expected.splitlines()
    for i, pair in enumerate(zip(a, b)):
        if pair[0] != pair[1]:
            return i + 1, pair
    return None if len(a) == len(b) else (min(len(a), len(b)) + 1, "one output is longer")


def _te10_cast(run: str) -> list[str]:
    """trec_eval 10.0-rc2's ``-q -m all_trec`` output of a bundled CAsT 2021 run, as lines."""
    return gzip.open(DATA / "te10" / f"cast2021.{Path(run).name.split('.')[0]}.aq.gz", "rt").read().splitlines(True)


def test_cast2021_all_trec_is_trec_eval_10s_line_for_line():
    """trec_eval 10.0-rc2's ``-q -m all_trec`` on the 5 bundled CAsT 2021 runs (graded judgments,
    unjudged documents, topics without relevant documents), 76,335 lines, equals rpdi's: each
    run's block is trec_eval's output for it, its ``runid`` line moved to the head of the block
    (with several runs, the runid line heads each run's block, per-topic lines included)."""
    runs = cast2021_runs()
    blocks = [_te10_cast(r) for r in runs]
    expected = "".join(line for lines in blocks for line in sorted(lines, key=lambda x: not x.startswith("runid ")))
    assert len(expected.splitlines()) == 5 * 15267
    assert _first_difference(trec_report(str(CAST2021_QRELS), runs, ["all_trec"], per_topic=True), expected) is None


def test_several_runs_are_told_apart_by_their_runid_lines(capsys):
    """Issue 24: ``--format trec -m map`` with several runs printed blocks of ``map all`` lines
    with nothing saying which run each was. Each run's block now starts with trec_eval's
    ``runid all TAG`` line: without -q the block is what ``trec_eval -m runid -m map`` prints for
    the run (here taken from trec_eval 10.0-rc2's own outputs); one run's output is unchanged."""
    runs = cast2021_runs()[:3]
    summaries = [[line for line in _te10_cast(r) if "\tall\t" in line] for r in runs]
    runid_and_map = "".join(line for lines in summaries for line in lines if line.startswith(("runid ", "map ")))
    assert len(runid_and_map.splitlines()) == 6 and len({line.split()[2] for line in runid_and_map.splitlines()
                                                         if line.startswith("runid")}) == 3
    assert main(["eval", str(CAST2021_QRELS), *runs, "-m", "map", "--format", "trec"]) == 0
    assert capsys.readouterr().out == runid_and_map
    # every measure: the summary lines as trec_eval prints them (runid first), run after run
    assert trec_report(str(CAST2021_QRELS), runs, ["all_trec"]) == "".join(sum(summaries, []))
    # a single run: trec_eval's output, with no runid line it did not ask for
    assert main(["eval", str(CAST2021_QRELS), runs[0], "-m", "map", "--format", "trec"]) == 0
    assert capsys.readouterr().out == runid_and_map.splitlines(True)[1]


CAST_RUN = next(r for r in cast2021_runs() if "org_manual_ance." in r)
CONVDR = next(r for r in cast2021_runs() if "org_convdr." in r)
# every family's parameters as trec_eval reads them (rbp's p=, gains level=gain, set_F's beta^2, ...)
PARAMS = ["rbp.p=0.5", "rbp_resid.p=0.8", "ndcg.0=1,1=2,2=4", "G.1=2", "Rndcg.1=3", "ndcg_rel.2=5", "P.7",
          "success.3", "iprec_at_recall..33", "11pt_avg.0.2,0.5", "set_F.0.5", "utility.1,-2,0,0", "relstring.20",
          "map_cut.7", "ndcg_cut.3", "relative_P.4", "Rprec_mult.1.5", "recall.7", "unj.3", "binG", "infAP"]

# trec_eval 10.0-rc2's outputs for its flags (te10/, commands in the data README): (qrels, run,
# -m names, trec_report's options)
POOLED = str(DATA / "pooled.qrels"), str(DATA / "pooled.run")  # grades -1..3, 30 topics (see the README)
MIXED = str(DATA / "mixed.qrels"), str(DATA / "mixed.run")  # grades 1.5 and 12, tied scores, 3 tags
TE10 = {
    "out.aqJ": (QRELS, RUN, ["all_trec"], dict(per_topic=True, judged_only=True)),
    "pooled.aq": (*POOLED, ["all_trec"], dict(per_topic=True)),
    "mixed.aq": (*MIXED, ["all_trec"], dict(per_topic=True)),
    "mixed.aqM5": (*MIXED, ["all_trec"], dict(per_topic=True, max_docs=5)),
    "out.aqc": (QRELS, TRUNC, ["all_trec"], dict(per_topic=True, topics="qrels")),
    "out.aqcM": (QRELS, TRUNC, ["all_trec"], dict(per_topic=True, topics="qrels", max_docs=100)),
    "cast2021.org_manual_ance.cM100.a": (str(CAST2021_QRELS), CAST_RUN, ["all_trec"],
                                         dict(topics="qrels", max_docs=100)),
    "cast2021.org_manual_ance.Jl2.a": (str(CAST2021_QRELS), CAST_RUN, ["all_trec"],
                                       dict(judged_only=True, relevance_level=2)),
    "cast2021.org_manual_ance.N.a": (str(CAST2021_QRELS), CAST_RUN, ["all_trec", "utility.1,-1,0,1"],
                                     dict(docs=100000)),
    "cast2021.org_convdr.params.aq.gz": (str(CAST2021_QRELS), CONVDR, PARAMS, dict(per_topic=True)),
    "cast2021.org_convdr.dcg_yaap.aq.gz": (str(CAST2021_QRELS), CONVDR, ["dcg", "ideal_dcg", "yaap"],
                                           dict(per_topic=True)),  # trec_eval's, not in all_trec
    "cast2021.org_convdr.dcg_gains.aq.gz": (str(CAST2021_QRELS), CONVDR, ["dcg.1=2,4=1"], dict(per_topic=True)),
}


# trec_eval's later test inputs (see the data README): test id -> (qrels, run, trec_report's options,
# trec_eval 10.0-rc2's output of `-q -m all_trec` on them in te10/)
QRELS_302, RUN_302 = str(DATA / "qrels-302.test"), str(DATA / "results-302.test")  # topic 302 alone
FLOATS = str(DATA / "qrels.test.with-floats")  # qrels.test with grades 1.5, 0.3, 1e+8, 1.1.11, 0x37
NEWER = {
    "302": (QRELS_302, RUN_302, {}, "results-302.aq"),
    "302-c": (QRELS, RUN_302, dict(topics="qrels"), "results-302.aqc"),  # -c: topics 301, 303 count as 0
    "with-floats": (FLOATS, RUN, {}, "with-floats.aq"),
    # its comment lines and a '#' inside a (non-relevant) docno leave trec_eval's output out.aq's
    "with-comments": (str(DATA / "qrels.test.with-comments"), RUN, {}, "out.aq"),
}
# grades trec_eval reads partially ("Warning, value `1.1.11' partially read as `1'.") that are not
# numbers, which rpdi refuses: the test gives rpdi the integers trec_eval read (trec_eval prints the
# same output for either file)
NOT_NUMBERS = {" 1.1.11\n": " 1\n", " 0x37\n": " 0\n"}


@pytest.mark.parametrize("name", sorted(NEWER))
def test_trec_evals_later_test_files_as_trec_eval_10_prints_them(name, tmp_path):
    qrels, run, options, expected = NEWER[name]
    if qrels == FLOATS:
        text = Path(FLOATS).read_text()
        for partial, read in NOT_NUMBERS.items():
            assert text.count(partial) == 1
            text = text.replace(partial, read)
        qrels = tmp_path / "qrels"
        qrels.write_text(text)
    ours = trec_report(str(qrels), [run], ["all_trec"], per_topic=True, **options)
    assert _first_difference(ours, (DATA / "te10" / expected).read_text()) is None


def test_a_grade_that_is_not_a_number_is_refused_where_trec_eval_reads_a_prefix(capsys):
    """qrels.test.with-floats as it is: trec_eval warns and reads 1.1.11 as 1 and 0x37 as 0 (strtol);
    rpdi stops with exit 2 and one line naming the first such grade (its own names need a number)."""
    assert main(["eval", FLOATS, RUN, "-q", "-m", "all_trec", "--format", "trec"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "qrels.test.with-floats:19: grade '1.1.11' is not a number" in err[0]


@pytest.mark.parametrize("name", sorted(TE10))
def test_flags_as_trec_eval_10_prints_them(name):
    """-J, -c (a qrels topic the run lacks), -M, -l, -N and a family's parameters overriding
    all_trec's, line for line."""
    qrels, run, names, options = TE10[name]
    path = DATA / "te10" / name
    expected = gzip.open(path, "rt").read() if name.endswith(".gz") else path.read_text()
    assert _first_difference(trec_report(qrels, [run], names, **options), expected) is None


def test_judged_only_leaving_a_topic_empty_prints_zero_where_trec_eval_10_prints_nan():
    """-J on pooled.run leaves topics with no document: trec_eval 10 still prints them, and its
    interpolated precision at levels l with lround(l R) = 0 is 0/0, printed ``-nan`` (and so is the
    mean over topics). rpdi prints those topics too, with 0 there (and means with those zeros);
    every other line is the same."""
    expected = (DATA / "te10" / "pooled.aqJ").read_text().splitlines()
    ours = trec_report(*POOLED, ["all_trec"], per_topic=True, judged_only=True).splitlines()
    assert len(ours) == len(expected)
    differing = [(a, b) for a, b in zip(ours, expected) if a != b]
    assert differing and [b for _, b in differing] == [b for b in expected if b.endswith("\t  -nan")]
    assert all(a == b.replace("  -nan", "0.0000") for a, b in differing if "\tall\t" not in b)


def test_run_from_standard_input_as_trec_eval_10_prints_it(capsys, monkeypatch):
    """``rpdi eval QRELS - -q -m all_trec --format trec`` is trec_eval 10's output for the run on
    standard input (trec_eval 10's own out.test.aq, rbp and unj lines included)."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(RUN).read_bytes())))
    assert main(["eval", QRELS, "-", "-q", "-m", "all_trec", "--format", "trec"]) == 0
    assert _first_difference(capsys.readouterr().out, (DATA / "te10" / "out.aq").read_text()) is None


def _all(names, **options) -> dict:
    return {(r["measure"]): r["value"] for r in evaluate(QRELS, [RUN], names, topics="intersection", **options)}


def test_flag_M_evaluates_the_first_documents_only():
    """-M100: 100 documents a topic; map is then the full run's map_cut_100."""
    cut = _all(["num_ret", "map"], max_docs=100)
    full = _all(["map_cut_100"])
    assert cut["num_ret"] == 300 and cut["map"] == pytest.approx(full["map_cut_100"], abs=1e-12)


def test_flag_J_drops_unjudged_documents():
    """-J: the retrieved set is the judged documents; unj becomes 0 and P_10 counts judged ones."""
    judged = _all(["num_ret", "unj_20", "num_rel_ret"], judged_only=True)
    full = _all(["num_rel_ret", "num_nonrel_judged_ret"])
    assert judged["num_ret"] == full["num_rel_ret"] + full["num_nonrel_judged_ret"]
    assert judged["unj_20"] == 0 and judged["num_rel_ret"] == full["num_rel_ret"]


def test_flag_c_averages_over_every_qrels_topic(tmp_path):
    """-c: a qrels topic the run never retrieved for counts, with 0 for every measure."""
    qrels = tmp_path / "qrels"
    qrels.write_bytes(Path(QRELS).read_bytes() + b"304 0 DOC-X 1\n")
    plain = _all(["num_q", "map"])
    every = {r["measure"]: r["value"] for r in evaluate(str(qrels), [RUN], ["num_q", "map"], topics="qrels")}
    assert (plain["num_q"], every["num_q"]) == (3, 4)
    assert every["map"] == pytest.approx(plain["map"] * 3 / 4, abs=1e-12)


def test_flag_l_sets_the_relevant_grade(tmp_path):
    """-l2 on qrels whose relevant documents have grade 1: nothing is relevant."""
    values = {r["measure"]: r["value"] for r in evaluate(QRELS, [RUN], ["num_rel", "map"], topics="intersection",
                                                         relevance_level=2)}
    assert values == {"num_rel": 0, "map": 0}


def test_trec_names_are_aliases_with_a_suggestion_for_unknown_ones(capsys):
    assert _all(["P_10", "ndcg_cut_10", "iprec_at_recall_0.20"]) == {
        "P_10": _all(["P@10"])["P@10"], "ndcg_cut_10": _all(["nDCG@10"])["nDCG@10"],
        "iprec_at_recall_0.20": _all(["IPrec@0.2"])["IPrec@0.2"]}
    assert main(["eval", QRELS, RUN, "-m", "ndcg_cutt_10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean ndcg_cut" in err[0]


@pytest.mark.parametrize("sep", [" ", "\t", "  "])
def test_fields_after_the_tag_and_comment_lines_are_ignored(tmp_path, sep):
    run = tmp_path / "run"
    lines = ["# a comment", "1 Q0 a 1 2.0 tag extra 7", "  # an indented comment", "1 Q0 b 2 1.0 tag"]
    run.write_text("".join(line.replace(" ", sep) + "\n" for line in lines))
    qrels = tmp_path / "qrels"
    qrels.write_text("# judged\n1 0 a 1.7\n1 0 b 0\n")
    values = {r["measure"]: r["value"] for r in evaluate(str(qrels), [str(run)], ["num_ret", "num_rel", "P@1"])}
    assert values == {"num_ret": 2, "num_rel": 1, "P@1": 1.0}


def test_trec_eval_names_read_integer_grades_rpdis_keep_fractions():
    """The issue's example: a = 1.5, b = 1 ranked b, a. trec_eval reads a as 1, so ndcg = 1;
    rpdi's nDCG keeps 1.5: (1 + 1.5/log2 3) / (1.5 + 1/log2 3) = 0.9134."""
    qrels, run = {"q": {"a": 1.5, "b": 1}}, {"s": {"q": {"b": 2.0, "a": 1.0}}}
    values = {r["measure"]: r["value"] for r in evaluate(qrels, run, ["ndcg", "nDCG", "P_2", "P@2"])}
    assert values["ndcg"] == 1.0 and round(values["nDCG"], 4) == 0.9134
    assert values["P_2"] == values["P@2"] == 1.0


def test_a_grade_with_an_exponent_is_read_as_trec_eval_reads_it(tmp_path):
    """trec_eval 10 reads a grade with strtol: 1e+8 is 1 and -1E0 is -1 (in the pool, not judged),
    each with a warning; the measures named as trec_eval names them do the same (trec_eval 10.0-rc2
    prints ndcg 0.8597, num_rel 2, unj_5 0.2000 for these files), rpdi's own keep 10^8."""
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 1e+8\n1 0 b 2\n1 0 c -1E0\n")
    run.write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n")
    values = {r["measure"]: r["value"] for r in evaluate(str(qrels), [str(run)], ["ndcg", "num_rel", "unj_5", "nDCG"])}
    assert round(values["ndcg"], 4) == 0.8597 and values["num_rel"] == 2 and values["unj_5"] == 0.2
    assert values["nDCG"] == 1.0


# trec_eval's per-topic loops (its m_*.c), written out document by document as an independent
# reference for graded judgments and pool-unjudged documents, which its own test files lack.
# rel_list: each retrieved document's grade, -1 pooled but unjudged, -2 not in the pool.

def _levels(judged_grades):
    """trec_eval's gains by level (gain = grade), highest first, with their counts."""
    return sorted(((g, judged_grades.count(g)) for g in set(judged_grades)), reverse=True)


def _ideal_walk(judged_grades, n):
    """The ideal gain at positions 0..n-1 as trec_eval's level walk produces it (0 when used up)."""
    walk = [g for g, count in _levels(judged_grades) for _ in range(count) if g > 0]
    return walk[:n] + [0] * max(0, n - len(walk))


def _ref_g(rel_list, judged):
    ideal = _ideal_walk(judged, len(rel_list))
    cost = seen = total = 0.0
    for i, rel in enumerate(rel_list):
        gain = max(rel, 0)
        seen += gain
        cost += max(ideal[i], 1.0)
        if gain:
            total += gain / math.log2(2 + cost - seen)
    best = sum(g for g in judged if g > 0)
    return total / best if best else 0.0


def _ref_ndcg_rel(rel_list, judged):
    n_pos = sum(1 for g in judged if g > 0)
    if not n_pos:  # 0/0 in trec_eval, which then reports 0
        return 0.0
    ideal = _ideal_walk(judged, max(len(rel_list), n_pos))
    results = ideal_dcg = total = 0.0
    hits = 0
    for i in range(max(len(rel_list), n_pos)):
        gain = max(rel_list[i], 0) if i < len(rel_list) else 0
        results += gain / math.log2(i + 2)
        ideal_dcg += ideal[i] / math.log2(i + 2)
        if gain > 0:
            total += results / ideal_dcg
            hits += 1
    total += (n_pos - hits) * results / ideal_dcg
    return total / n_pos if total > 0 else 0.0


def _ref_rndcg(rel_list, judged):
    n_pos = sum(1 for g in judged if g > 0)
    if not n_pos:
        return 0.0
    width = max(len(rel_list), n_pos) + 1
    ideal = _ideal_walk(judged, width)
    results = ideal_dcg = total = 0.0
    count, n = 0, len(rel_list)
    for p in range(width):  # prefix lengths; the ideal's gain drops at p
        if 0 < p <= n_pos and ideal[p] != ideal[p - 1]:
            total += results / ideal_dcg
            count += 1
        if p < n:
            results += max(rel_list[p], 0) / math.log2(p + 2)
        ideal_dcg += ideal[p] / math.log2(p + 2)
    if n > n_pos + 1:  # trec_eval's loop adds the whole ranking's nDCG after the ideal runs out
        total += results / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        count += 1
    return total / count


def _ref_bpref_infap(rel_list, judged):
    R = sum(1 for g in judged if g >= 1)
    N = sum(1 for g in judged if g == 0)
    bpref = inf_ap = 0.0
    nonrel = rel = unjudged = 0
    for j, g in enumerate(rel_list):
        if g == -2:
            continue
        if g == -1:
            unjudged += 1
            continue
        if g < 1:
            nonrel += 1
            continue
        rel += 1
        bpref += 1.0 - min(nonrel, R) / min(N, R) if nonrel else 1.0
        inf_ap += 1.0 if j == 0 else 1 / (j + 1) + j / (j + 1) * (rel - 1 + nonrel + unjudged) / j * \
            (rel - 1 + 0.00001) / (rel - 1 + nonrel + 2 * 0.00001)
    return (bpref / R, inf_ap / R) if R else (0.0, 0.0)


def test_graded_and_pooled_measures_follow_trec_evals_loops(tmp_path):
    import random

    rng = random.Random(9)
    qrels, run, refs = [], [], {}
    for t in range(40):
        docs = [f"d{t}-{i}" for i in range(rng.randint(1, 25))]
        grades = {d: rng.choice([-1, 0, 0, 1, 2, 3]) for d in docs if rng.random() < 0.7}
        ranked = rng.sample(docs, rng.randint(1, len(docs)))
        qrels += [f"{t} 0 {d} {g}" for d, g in grades.items()]
        run += [f"{t} Q0 {d} {i + 1} {100 - i} r" for i, d in enumerate(ranked)]
        if not any(g >= 0 for g in grades.values()):
            continue  # trec_eval evaluates no topic without a judgment
        rel_list = [grades.get(d, -2) for d in ranked]
        judged = [g for g in grades.values() if g >= 0]
        bpref, inf_ap = _ref_bpref_infap(rel_list, judged)
        unjudged = [i for i, g in enumerate(rel_list) if g < 0]
        resid = (0.9 ** len(rel_list) + 0.1 * sum(0.9 ** i for i in unjudged)) if unjudged else 0.0
        refs[str(t)] = {"G": _ref_g(rel_list, judged), "ndcg_rel": _ref_ndcg_rel(rel_list, judged),
                        "Rndcg": _ref_rndcg(rel_list, judged), "bpref": bpref, "infAP": inf_ap,
                        "rbp_resid": resid}
    (tmp_path / "q").write_text("\n".join(qrels) + "\n")
    (tmp_path / "r").write_text("\n".join(run) + "\n")
    ours = evaluate(str(tmp_path / "q"), [str(tmp_path / "r")], list(next(iter(refs.values()))),
                    per_topic=True, topics="intersection")
    checked = 0
    for rec in ours:
        if rec["topic"] in refs:
            assert rec["value"] == pytest.approx(refs[rec["topic"]][rec["measure"]], abs=1e-12), rec
            checked += 1
    assert checked == 6 * len(refs) > 100


def test_a_grade_that_is_none_is_refused_not_read_as_nan():
    from rpdi.metrics.errors import InputError
    from rpdi.metrics.evaluate import score

    with pytest.raises(InputError, match="judged="):
        score("RBP(p=0.5)", [2, 0, None, 1])
    # graded RBP: gains grade / max grade, (1 - p) sum_i g_i p^(i-1)
    assert score("RBP(p=0.5)", [2, 0, 0, 1], judged=[True, True, False, True]) == 0.5 * (1 + 0.5 ** 3 / 2)


@pytest.mark.parametrize("cells", [1, 2 * 30, 7 * 30])
def test_every_measure_a_block_of_topics_at_a_time_is_every_measure_at_once(cells, monkeypatch):
    """Every declared measure on plain rankings (its defaults; with a cutoff where it takes one),
    computed over a block of topics at a time (one, two, seven: ``COMPUTE_CELLS`` of two runs of
    15 ranks), gives to the bit what it gives over every topic at once: fractional grades (with
    trec_eval's integer ones), negative, unjudged, tied scores, rankings of every length, topics a
    run does not retrieve."""
    import importlib

    import numpy as np

    from rpdi.metrics.measures.registry import MEASURES

    module = importlib.import_module("rpdi.metrics.evaluate")  # (rpdi.metrics.evaluate is also the function)
    rng = np.random.default_rng(26)
    topics = [f"t{i}" for i in range(23)]
    qrels = {t: {f"d{j}": float(rng.choice([-1, 0, 0.5, 1, 2, 3])) for j in range(rng.integers(1, 25))}
             for t in topics}
    runs = {name: {t: {f"d{j}": float(rng.integers(0, 6)) for j in rng.choice(40, rng.integers(1, 16), replace=False)}
                   for t in topics if rng.random() < 0.9} for name in ("a", "b")}
    specs = [s for s in MEASURES.values() if s.compute and not (s.between_runs or s.intents or s.session)]
    cut = lambda spec: "@0.5" if spec.cutoff_kind is float else "@5"
    names = [s.name for s in specs if s.cutoff != "required"] + [s.name + cut(s) for s in specs if s.cutoff != "none"]
    measures = module.expand(names)
    rankings, integer = module.prepare(qrels, runs)
    assert integer is not None and rankings.grade.shape[:2] == (2, len(topics))
    whole = module.compute(rankings, measures, "trec_eval", integer)
    monkeypatch.setattr(module, "COMPUTE_CELLS", cells)
    blocked = module.compute(rankings, measures, "trec_eval", integer)
    for m, ours, theirs in zip(measures, blocked, whole):
        for field in ("value", "residual", "num", "den"):
            a, b = getattr(ours, field), getattr(theirs, field)
            assert (a is None) == (b is None), (m.text, field)
            if a is not None:
                assert a.shape == b.shape and np.array_equal(a, b, equal_nan=True), (m.text, field)
