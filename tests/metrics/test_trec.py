"""``rpdi eval`` on bad input: exit status 2, exactly one line on stderr naming the file and line
(or the measure / parameter), nothing on stdout, never a traceback. And the white-space and
line-ending variants that must parse: tabs, runs of spaces, CRLF, gzip."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys

import pytest

QRELS = b"1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n1 0 d4 1\n2 0 d1 1\n2 0 d5 0\n"
RUN = (b"1 Q0 d1 1 3.5 tag\n1 Q0 d2 2 2.5 tag\n1 Q0 d3 3 1.5 tag\n1 Q0 d6 4 0.5 tag\n"
       b"2 Q0 d5 1 2.0 tag\n2 Q0 d1 2 1.0 tag\n")
MEASURES = ["P@2", "AP", "nDCG@3", "RBP(p=0.8)", "RR"]


def assert_one_line_error(status, out, err, *fragments):
    assert status == 2, (status, err)
    assert out == ""
    assert "Traceback" not in err
    assert err.endswith("\n") and len(err.splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def assert_bad(run_cli, argv, *fragments):
    assert_one_line_error(*run_cli(argv), *fragments)


def eval_argv(qrels, runs, measures=("P@2",)):
    argv = ["eval", qrels, *runs]
    for m in measures:
        argv += ["-m", m]
    return argv


# ------------------------------------------------------------------ bad lines in run and qrels

BAD_RUN_LINES = {
    "short line": (b"1 Q0 d9 5 0.1\n", "expected at least 6 fields"),
    "short line, trailing blank": (b"1 Q0 d9 5 0.1 \n", "expected at least 6 fields"),
    "short last line, trailing blank": (b"1 Q0 d9 5 0.1 ", "expected at least 6 fields"),
    # five fields that a doubled blank spreads over six: an empty one among those ignored
    "no Q0, doubled blank": (b"1  d9 5 0.1 tag\n", "expected at least 6 fields"),
    "no rank, doubled blank": (b"1 Q0 d9  0.1 tag\n", "expected at least 6 fields"),
    "non-numeric score": (b"1 Q0 d9 5 high tag\n", "not a number"),
    "nan score": (b"1 Q0 d9 5 nan tag\n", "not a finite number"),
    "NaN score": (b"1 Q0 d9 5 NaN tag\n", "not a finite number"),
    "inf score": (b"1 Q0 d9 5 inf tag\n", "not a finite number"),
    "-Infinity score": (b"1 Q0 d9 5 -Infinity tag\n", "not a finite number"),
    "overflowing score": (b"1 Q0 d9 5 1e999 tag\n", "not a finite number"),
    "duplicate document": (b"1 Q0 d2 5 0.1 tag\n", "appears twice"),
}

BAD_QRELS_LINES = {
    "short line": (b"1 0 d9\n", "expected 4 fields"),
    "no iteration, doubled blank": (b"1  d9 1\n", "expected 4 fields"),
    "too many fields": (b"1 0 d9 1 extra\n", "expected 4 fields"),
    "non-numeric grade": (b"1 0 d9 rel\n", "not a number"),
    "nan grade": (b"1 0 d9 nan\n", "not a finite number"),
    "inf grade": (b"1 0 d9 inf\n", "not a finite number"),
    "duplicate document": (b"1 0 d3 0\n", "appears twice"),
}


@pytest.mark.parametrize("case", sorted(BAD_RUN_LINES))
def test_bad_run_line(tmp_path, case, run_cli, write):
    line, problem = BAD_RUN_LINES[case]
    run = write(tmp_path / "run.txt", RUN + line)  # the bad line is line 7
    qrels = write(tmp_path / "qrels.txt", QRELS)
    assert_bad(run_cli, eval_argv(qrels, [run]), f"{run}:7:", problem)


@pytest.mark.parametrize("case", sorted(BAD_QRELS_LINES))
def test_bad_qrels_line(tmp_path, case, run_cli, write):
    line, problem = BAD_QRELS_LINES[case]
    qrels = write(tmp_path / "qrels.txt", QRELS + line)  # the bad line is line 7
    run = write(tmp_path / "run.txt", RUN)
    assert_bad(run_cli, eval_argv(qrels, [run]), f"{qrels}:7:", problem)


@pytest.mark.parametrize("layout", ["tab", "crlf", "multi-space", "leading blank"])
@pytest.mark.parametrize("which, line, problem", [
    ("run", "1 Q0 d9 5 0.1", "expected at least 6 fields"),
    ("qrels", "1 0 d9", "expected 4 fields"),
    ("qrels", "1 0 d9 1 extra", "expected 4 fields"),
])
def test_field_count_in_other_layouts(tmp_path, layout, which, line, problem, run_cli, write):
    """The white-space tolerant parser must not pad short lines or fold long ones."""
    good = (RUN if which == "run" else QRELS).decode().splitlines()
    lines = good + [line]
    convert = {"tab": lambda x: x.replace(" ", "\t") + "\n",
               "crlf": lambda x: x + "\r\n",
               "multi-space": lambda x: x.replace(" ", "  ") + "\n",
               "leading blank": lambda x: " " + x + "\n"}[layout]
    bad = write(tmp_path / "bad.txt", "".join(convert(x) for x in lines).encode())
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    argv = eval_argv(qrels, [bad]) if which == "run" else eval_argv(bad, [run])
    assert_bad(run_cli, argv, f"{bad}:7:", problem)


def test_duplicate_names_first_line(tmp_path, run_cli, write):
    run = write(tmp_path / "run.txt", RUN + b"1 Q0 d3 9 0.1 tag\n")
    qrels = write(tmp_path / "qrels.txt", QRELS)
    assert_bad(run_cli, eval_argv(qrels, [run]), f"{run}:7:", "d3", "first at line 3")


@pytest.mark.parametrize("layout", ["space", "tab", "crlf", "multi-space", "blank lines", "gzip"])
@pytest.mark.parametrize("bad_line", [3, 7, 12])
def test_line_number_is_exact(tmp_path, capsys, layout, bad_line, run_cli, write):
    """The reported line is the physical line of the file, whatever the white space."""
    lines = [f"1 Q0 d{i} {i} {20 - i}.5 tag" for i in range(1, 15)]
    if layout == "blank lines":  # blank lines are skipped but still counted
        lines[1] = lines[bad_line - 2] = ""
    lines[bad_line - 1] = f"1 Q0 dX {bad_line} not-a-number tag"
    sep = {"tab": "\t", "multi-space": "   "}.get(layout, " ")
    text = "".join(line.replace(" ", sep) + ("\r\n" if layout == "crlf" else "\n") for line in lines)
    data = text.encode()
    name = "run.txt"
    if layout == "gzip":
        data, name = gzip.compress(data), "run.txt.gz"
    run = write(tmp_path / name, data)
    qrels = write(tmp_path / "qrels.txt", QRELS)
    assert_bad(run_cli, eval_argv(qrels, [run]), f"{run}:{bad_line}:", "'not-a-number'")
    assert f":{bad_line + 1}:" not in capsys.readouterr().err


def test_bad_second_run_writes_nothing(tmp_path, run_cli, write):
    qrels = write(tmp_path / "qrels.txt", QRELS)
    good = write(tmp_path / "good.txt", RUN)
    bad = write(tmp_path / "bad.txt", RUN + b"2 Q0 d7 3 nan tag\n")
    assert_bad(run_cli, eval_argv(qrels, [good, bad], MEASURES), f"{bad}:7:")


@pytest.mark.parametrize("first", ["duplicate", "short line"])
def test_first_bad_run_in_the_order_given_is_reported(tmp_path, first, run_cli, write):
    """Runs are read together (a duplicate docno is found only after the files' docnos are
    encoded together); still the first bad file named is the one reported."""
    qrels = write(tmp_path / "qrels.txt", QRELS)
    bad = {"duplicate": (write(tmp_path / "dup.txt", RUN + b"1 Q0 d2 5 0.1 tag\n"), "appears twice"),
           "short line": (write(tmp_path / "short.txt", RUN + b"1 Q0 d9 5 0.1\n"), "expected at least 6 fields")}
    second = next(name for name in bad if name != first)
    good = write(tmp_path / "good.txt", RUN)
    argv = eval_argv(qrels, [good, bad[first][0], bad[second][0]], MEASURES)
    assert_bad(run_cli, argv, f"{bad[first][0]}:7:", bad[first][1])


# ------------------------------------------------------------------------------- bad measures

@pytest.mark.parametrize("measure, fragment", [
    ("FOO@10", "unknown measure"),
    ("Prec@10", "unknown measure"),
    ("P@", "cannot parse"),
    ("P@ten", "cutoff 'ten'"),
    ("P@0", "cutoff 0"),
    ("P@-3", "cutoff -3"),
    ("P@1.5", "cutoff '1.5'"),
    ("R", "needs a cutoff"),
    ("AP11pt@10", "takes no cutoff"),
    ("RBP(p=)", "p=''"),
    ("RBP(p=0.8", "cannot parse"),
    ("RBP(p=abc)", "p='abc'"),
    ("RBP(p=nan)", "p='nan'"),
    ("RBP(p=1)", "p=1 out of range"),
    ("RBP(p=-0.1)", "p=-0.1 out of range"),
    ("RBP(p=1.5)", "p=1.5 out of range"),
    ("RBP(q=0.5)", "no parameter 'q'"),
    ("RBP(0.5)", "not of the form name=value"),
    ("RBP2(p1=1,p2=0.5)", "p1=1 out of range"),
    ("nDCG(dcg='foo')@10", "dcg=foo out of range"),
    ("P(rel=0)@5", "rel=0 out of range"),
    ("ERR(max_rel=0)@5", "max_rel=0 out of range"),
    ("CautiousRR(c=-1)", "c=-1 out of range"),
    ("IPrec@1.5", "recall level 1.5"),
    ("", "cannot parse"),
])
def test_bad_measure(tmp_path, measure, fragment, run_cli, write):
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    assert_bad(run_cli, eval_argv(qrels, [run], ["P@2", measure]), f"measure {measure!r}", fragment)


@pytest.mark.parametrize("measure", ["P@100000000000", "RBP(p=0.5)@99999999999999999999",
                                     "CautiousRR(c=99999999999999999999999)"])
def test_huge_cutoff_or_parameter(tmp_path, measure, run_cli, write):
    """Too large to compute: still status 2 and one line naming the measure, no traceback."""
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    assert_bad(run_cli, eval_argv(qrels, [run], ["P@2", measure]), f"measure {measure!r}")


def test_between_runs_measure_with_one_run(tmp_path, run_cli, write):
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    assert_bad(run_cli, eval_argv(qrels, [run], ["RBO(p=0.9)"]), "measure 'RBO(p=0.9)'", "two or more runs")


def test_bad_option(tmp_path, run_cli, write):
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    assert_bad(run_cli, eval_argv(qrels, [run]) + ["--format", "xml"], "--format", "xml")


# ------------------------------------------------------------------------------- bad files

@pytest.mark.parametrize("which", ["qrels", "run"])
def test_missing_file(tmp_path, which, run_cli, write):
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    missing = str(tmp_path / "nope.txt")
    argv = eval_argv(missing, [run]) if which == "qrels" else eval_argv(qrels, [missing])
    assert_bad(run_cli, argv, missing, "no such file")


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_directory_as_file(tmp_path, which, run_cli, write):
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    directory = tmp_path / "adir"
    directory.mkdir()
    argv = eval_argv(str(directory), [run]) if which == "qrels" else eval_argv(qrels, [str(directory)])
    assert_bad(run_cli, argv, str(directory), "directory")


@pytest.mark.parametrize("which", ["qrels", "run"])
@pytest.mark.parametrize("data, fragment", [
    (b"\x7fELF\x02\x01\x01\x00\x00\x00\x00garbage", ":1: binary"),
    (b"1 0 d1 1\n1 0 d2 0\n\x00\x01\x02\x03", ":3: binary"),
    (b"1 0 d1 1\n1 0 d\xff\xfe2 0\n", ":2: not UTF-8"),
    (b"\xc3\x28 0 d1 1\n", ":1: not UTF-8"),
])
def test_binary_and_invalid_utf8(tmp_path, which, data, fragment, run_cli, write):
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    bad = write(tmp_path / "bad.bin", data)
    argv = eval_argv(bad, [run]) if which == "qrels" else eval_argv(qrels, [bad])
    assert_bad(run_cli, argv, bad + fragment)


@pytest.mark.parametrize("which", ["qrels", "run"])
@pytest.mark.parametrize("data", [b"", b"\n\n", b"  \n\t\n", b"\r\n"])
def test_empty_file(tmp_path, which, data, run_cli, write):
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    empty = write(tmp_path / "empty.txt", data)
    argv = eval_argv(empty, [run]) if which == "qrels" else eval_argv(qrels, [empty])
    assert_bad(run_cli, argv, empty, "empty")


def _corruptions() -> dict[str, bytes]:
    good = gzip.compress(RUN * 20)
    flipped = bytearray(good)
    for i in range(12, 20):
        flipped[i] ^= 0xFF
    return {
        "truncated": good[: len(good) // 2],
        "header only": good[:10],
        "flipped deflate bytes": bytes(flipped),
        "bad crc": good[:-8] + b"\x00\x00\x00\x00" + good[-4:],
        "trailing garbage": good + b"garbage!",
    }


@pytest.mark.parametrize("case", sorted(_corruptions()))
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_corrupted_gzip(tmp_path, case, which, run_cli, write):
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    bad = write(tmp_path / "bad.txt.gz", _corruptions()[case])
    argv = eval_argv(bad, [run]) if which == "qrels" else eval_argv(qrels, [bad])
    assert_bad(run_cli, argv, bad)


# ------------------------------------------------------------------ variants that must parse

def _values(run_cli, qrels, runs, measures=MEASURES):
    status, out, err = run_cli(eval_argv(qrels, runs, measures) + ["--per-topic", "--format", "json"])
    assert (status, err) == (0, "")
    return [(r["topic"], r["measure"], r["value"], r["residual"]) for r in json.loads(out)]


def _variants(data: bytes) -> dict[str, bytes]:
    lines = data.decode().splitlines()
    return {
        "tab": "".join(line.replace(" ", "\t") + "\n" for line in lines).encode(),
        "doubled tab": "".join(line.replace(" ", "\t\t") + "\n" for line in lines).encode(),
        "leading tab": "".join("\t" + line.replace(" ", "\t") + "\n" for line in lines).encode(),
        "multi-space": "".join(line.replace(" ", "   ") + "\n" for line in lines).encode(),
        "mixed blanks": "".join(" " + line.replace(" ", " \t ") + " \n" for line in lines).encode(),
        "crlf": "".join(line + "\r\n" for line in lines).encode(),
        "tab crlf": "".join(line.replace(" ", "\t") + "\r\n" for line in lines).encode(),
        "trailing blanks": "".join(line + " \n" for line in lines).encode(),
        "no final newline": data.rstrip(b"\n"),
        "blank lines": b"\n" + data.replace(b"\n", b"\n\n"),
        "gzip": gzip.compress(data),
    }


@pytest.mark.parametrize("layout", sorted(_variants(RUN)))
def test_white_space_variants_parse(tmp_path, layout, run_cli, write):
    """Tab-separated, multi-space and CRLF files give the same values as single-space ones."""
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    expected = _values(run_cli, qrels, [run])
    assert len(expected) == len(MEASURES) * 3  # two topics and the mean
    suffix = ".gz" if layout == "gzip" else ""
    vq = write(tmp_path / f"vq.txt{suffix}", _variants(QRELS)[layout])
    vr = write(tmp_path / f"vr.txt{suffix}", _variants(RUN)[layout])
    assert _values(run_cli, vq, [vr]) == expected


RUN_WITH_EXTRA_FIELDS = {  # trec_eval ignores what follows the tag
    "every line": lambda i, line: line + " x 7",
    "every line, tab": lambda i, line: (line + " x 7").replace(" ", "\t"),
    "first line only": lambda i, line: line + " x" if i == 0 else line,
    "later lines only": lambda i, line: line + " x y z" if i else line,
}


@pytest.mark.parametrize("extra", sorted(RUN_WITH_EXTRA_FIELDS))
def test_fields_after_the_tag_parse(tmp_path, extra, run_cli, write):
    """Runs whose lines carry fields after the tag, on every line (read as extra columns) or on
    some (read by the general parser), give the values of the plain run."""
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    expected = _values(run_cli, qrels, [run])
    lines = RUN.decode().splitlines()
    changed = "".join(RUN_WITH_EXTRA_FIELDS[extra](i, line) + "\n" for i, line in enumerate(lines))
    assert _values(run_cli, qrels, [write(tmp_path / "extra.txt", changed.encode())]) == expected


def test_expected_values_are_right(tmp_path, run_cli, write):
    """The reference values themselves (so the variant tests compare against something right):
    topic 1 ranks d1 (1), d2 (0), d3 (2), d6 (unjudged); R = 3."""
    qrels, run = write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)
    got = {(t, m): v for t, m, v, _ in _values(run_cli, qrels, [run])}
    assert got[("1", "P@2")] == pytest.approx(0.5)
    assert got[("1", "AP")] == pytest.approx((1 + 2 / 3) / 3)
    assert got[("1", "RR")] == 1.0
    assert got[("2", "RR")] == pytest.approx(0.5)
    # graded gains grade / 2 (the largest grade): d1 0.5 at rank 1, d3 1.0 at rank 3
    assert got[("1", "RBP(p=0.8)")] == pytest.approx(0.2 * (0.5 + 0.64))


# ------------------------------------------------------------------------- as a subprocess

def test_the_command_ends_at_once_with_main_s_status(monkeypatch, tmp_path, capsys, write):
    """``rpdi`` (entry) ends the process with os._exit and main's status, argparse's included:
    pyarrow's thread pool can abort the interpreter's teardown just after a threaded read (status
    134 where a missing run file after the qrels must give 2; seen in CI)."""
    from rpdi.experiments import cli

    qrels = write(tmp_path / "qrels.txt", QRELS)
    ended = []
    monkeypatch.setattr(cli.os, "_exit", ended.append)
    for argv in (["--version"], ["--no-such-option"], ["eval", qrels, str(tmp_path / "nope.txt"), "-m", "P@2"]):
        monkeypatch.setattr(sys, "argv", ["rpdi", *argv])
        cli.entry()
    assert ended == [0, 2, 2]
    assert "nope.txt: no such file" in capsys.readouterr().err


def _command() -> list[str]:
    beside = os.path.join(os.path.dirname(sys.executable), "rpdi")
    if os.access(beside, os.X_OK):
        return [beside]
    found = shutil.which("rpdi")
    return [found] if found else [sys.executable, "-m", "rpdi.experiments.cli"]


@pytest.mark.parametrize("case", ["nan score", "bad measure", "corrupted gzip", "huge cutoff",
                                  "missing file", "binary"])
def test_subprocess(tmp_path, case, write):
    qrels = write(tmp_path / "qrels.txt", QRELS)
    run = write(tmp_path / "run.txt", RUN)
    measures = ["P@2"]
    expected = run
    if case == "nan score":
        run = expected = write(tmp_path / "bad.txt", RUN + b"1 Q0 d9 9 nan tag\n")
        expected += ":7:"
    elif case == "bad measure":
        measures, expected = ["RBP(p=1.5)"], "measure 'RBP(p=1.5)'"
    elif case == "corrupted gzip":
        run = expected = write(tmp_path / "bad.txt.gz", _corruptions()["flipped deflate bytes"])
    elif case == "huge cutoff":
        measures, expected = ["P@100000000000"], "measure 'P@100000000000'"
    elif case == "missing file":
        run = expected = str(tmp_path / "nope.txt")
    elif case == "binary":
        qrels = expected = write(tmp_path / "bin.txt", b"\x00\x01\x02")
    proc = subprocess.run(_command() + eval_argv(qrels, [run], measures), capture_output=True,
                          text=True, timeout=120, env={**os.environ, "RPDI_DEBUG": ""})
    assert_one_line_error(proc.returncode, proc.stdout, proc.stderr, expected)


def test_subprocess_good_input(tmp_path, write):
    qrels = write(tmp_path / "qrels.txt", QRELS)
    run = write(tmp_path / "run.txt", _variants(RUN)["tab crlf"])
    proc = subprocess.run(_command() + eval_argv(qrels, [run], ["P@2"]) + ["--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    [record] = json.loads(proc.stdout)
    assert record["value"] == pytest.approx((0.5 + 0.5) / 2)


# ------------------------------------------------------------------------- a run read alone

@pytest.mark.parametrize("hashes_meet", [False, True])
def test_a_run_read_alone_refuses_exactly_its_repeated_pairs(tmp_path, monkeypatch, hashes_meet):
    """A run read alone keeps a docno per line and finds a (topic, docno) read twice by hashing
    the pairs: random runs whose docnos recur across topics (not a duplicate), some with one pair
    repeated (a duplicate, named at its line), against Python's set of pairs; with every hash
    made equal, the pairs are all compared as strings."""
    import numpy as np

    from rpdi.metrics import docnos
    from rpdi.metrics.errors import InputError
    from rpdi.metrics.trec import read_run

    if hashes_meet:
        monkeypatch.setattr(docnos, "hashes", lambda strings, *a: np.zeros(len(strings), np.uint64))
    rng = np.random.default_rng(11)
    for case in range(40):
        pairs = {(str(t), f"d{d}") for t, d in rng.integers(0, 5, size=(30, 2))}
        lines = [f"{t} Q0 {d} 1 {rng.random():.3f} tag" for t, d in sorted(pairs)]
        repeated = case % 2 == 1
        if repeated:
            lines.append(lines[int(rng.integers(0, len(lines)))].replace(" 1 ", " 2 ", 1))
        path = tmp_path / f"run{case}.txt"
        path.write_text("\n".join(lines) + "\n")
        if repeated:
            with pytest.raises(InputError, match=f":{len(lines)}: document .* appears twice"):
                read_run(path)
        else:
            run = read_run(path)
            assert list(zip(run.topic.to_pylist(), run.docno.to_pylist())) == sorted(pairs)

# ------------------------------------------------------------------------- pyarrow's threads

@pytest.mark.parametrize("threads_from", [0, 1 << 30])
def test_a_file_is_parsed_on_every_core_only_if_it_holds_parse_threads_bytes(tmp_path, monkeypatch, threads_from,
                                                                             write):
    """pyarrow's threads parse a qrels or run file (from the file, or from its bytes: one with a
    comment line) only if it holds PARSE_THREADS_BYTES or more; the columns are the same."""
    import pyarrow.csv as pcsv

    from rpdi.metrics import trec

    read_csv, used = pcsv.read_csv, []

    def reading(source, read_options=None, **kwargs):
        used.append(read_options.use_threads)
        return read_csv(source, read_options=read_options, **kwargs)

    monkeypatch.setattr(pcsv, "read_csv", reading)
    monkeypatch.setattr(trec, "PARSE_THREADS_BYTES", threads_from)
    qrels = trec.read_qrels(write(tmp_path / "q.txt", QRELS))
    run = trec.read_run(write(tmp_path / "r.run", RUN))
    commented = trec.read_run(write(tmp_path / "c.run", b"# a comment\n" + RUN))
    assert used == [threads_from == 0] * 3
    assert qrels.grade.tolist() == [1, 0, 2, 1, 1, 0]
    assert run.score.tolist() == commented.score.tolist() == [3.5, 2.5, 1.5, 0.5, 2.0, 1.0]
