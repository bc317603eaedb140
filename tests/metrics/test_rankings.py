"""The docno join of metrics.rankings: each run's docnos looked up among the qrels' by hash,
checked against a join of Python dicts and against the unified dictionaries it replaces; and the
threads the runs are ranked on, in a forked child."""

import os
import signal
import time

import numpy as np
import pytest

from rpdi.metrics import docnos, rankings as rk
from rpdi.metrics.trec import qrels_from_dict, run_from_dict

ALPHABET = ["a", "b", "z", "0", "-", "é", "\u20ac", "\U0001f600", "\x7f", "\x01"]


def _docnos(rng, n, nul: bool):
    """n random docnos of 0 to 12 characters (one or more bytes each), some prefixes of others;
    with a NUL byte somewhere (trailing too) if ``nul``."""
    alphabet = ALPHABET + ["\x00"] * nul
    out = {"".join(rng.choice(alphabet, size=rng.integers(1 - nul, 13))) for _ in range(n)}
    out |= {d[:len(d) // 2] for d in list(out)[: n // 4] if d[:len(d) // 2]}
    out |= {d + "\x00" for d in list(out)[: n // 8]} if nul else set()
    return sorted(out)


def _case(seed: int, qrels_nul: bool, runs_nul: bool):
    rng = np.random.default_rng(seed)
    qrels_docnos, run_docnos = _docnos(rng, 300, qrels_nul), _docnos(rng, 300, runs_nul)
    shared = qrels_docnos[:100]  # in both; the rest of each in one only (the qrels' also unretrieved)
    topics = ["1", "2", "10", "q"]
    qrels = {t: {d: int(rng.integers(-1, 4)) for d in rng.choice(qrels_docnos, size=60, replace=False)}
             for t in topics[:3]}
    qrels["1"][shared[0]] = 2
    if qrels_nul:
        qrels["1"][next(d for d in qrels_docnos if "\x00" in d)] = 1
    pool = shared + run_docnos
    runs = [run_from_dict(f"r{s}", {t: {d: float(rng.integers(0, 8)) for d in rng.choice(pool, size=80, replace=False)}
                                    | ({shared[0] + "\x00": 1.0, shared[0]: 1.0} if runs_nul else {})
                                    for t in topics}) for s in range(2)]
    return qrels, runs


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("qrels_nul, runs_nul, collide", [(False, False, False), (False, True, False),
                                                           (True, True, False), (False, False, True)])
def test_join_equals_a_dict_join_and_the_unified_dictionaries(seed, qrels_nul, runs_nul, collide, monkeypatch):
    qrels_dict, runs = _case(seed, qrels_nul, runs_nul)
    qrels = qrels_from_dict(qrels_dict)
    if collide:  # every hash the same: the unified dictionaries' join
        monkeypatch.setattr(docnos, "hashes",
                            lambda strings, codes=None: np.zeros(len(strings if codes is None else codes), np.uint64))
    assert (rk.judgments(qrels).docnos is None) == (qrels_nul or collide)
    for each in ([runs[0]], runs):  # one run; two with a dictionary each
        got = rk.build_rankings(qrels, each)
        q_codes = {d: i for i, d in enumerate(qrels.docno.dictionary.to_pylist())}
        for s, run in enumerate(each):
            scores = {}
            for t, d, x in zip(run.topic.to_pylist(), run.docno.to_pylist(), run.score):
                scores.setdefault(t, []).append((x, d.encode(), d))
            for i, t in enumerate(got.topics):
                ranked = [d for *_, d in sorted(scores.get(t, []), reverse=True)]  # score, then docno, descending
                assert got.length[s, i] == len(ranked)
                grades = [qrels_dict.get(t, {}).get(d) for d in ranked]
                n = len(ranked)
                assert got.pooled[s, i, :n].tolist() == [g is not None for g in grades]
                assert got.judged[s, i, :n].tolist() == [g is not None and g >= 0 for g in grades]
                assert got.grade[s, i, :n].tolist() == [max(g or 0, 0) for g in grades]
                codes = got.doc[s, i, :n].tolist()
                assert [c for c, d in zip(codes, ranked) if d in q_codes] == [q_codes[d] for d in ranked if d in q_codes]
                assert all(c >= len(q_codes) for c, d in zip(codes, ranked) if d not in q_codes)
        # one code per distinct docno retrieved
        flat = got.doc[got.doc >= 0]
        assert len(set(flat.tolist())) == len({d for run in each for t, d in zip(run.topic.to_pylist(),
                                                                                run.docno.to_pylist())
                                               if t in qrels_dict})
        # the same arrays as the unified dictionaries' join (sorted docnos not kept)
        monkeypatch.setattr(rk, "_JUDGMENTS", {})
        monkeypatch.setattr(rk.DocnoTable, "of", lambda strings, keys=None: None)
        unified = rk.build_rankings(qrels, each)
        monkeypatch.undo()
        for name in ("grade", "judged", "pooled", "length", "tie"):
            assert np.array_equal(getattr(got, name), getattr(unified, name)), name
        qrels_side = (got.doc >= 0) & (got.doc < len(q_codes))
        assert np.array_equal(qrels_side, (unified.doc >= 0) & (unified.doc < len(q_codes)))
        assert np.array_equal(got.doc[qrels_side], unified.doc[qrels_side])
        pairs = {(int(a), int(b)) for a, b in zip(got.doc.ravel(), unified.doc.ravel())}
        assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})  # the same partition


@pytest.mark.parametrize("seed", range(2))
def test_a_run_read_alone_is_hashed_once_and_joins_as_without_its_hashes(seed, tmp_path, monkeypatch):
    """Reading a run file alone hashes its docnos (its check for duplicates); the join with the
    qrels looks those hashes up rather than hashing the docnos again, and finds what it finds
    when it must hash them itself."""
    from dataclasses import replace

    from rpdi.metrics.trec import read_run

    qrels_dict, runs = _case(seed, False, False)
    qrels = qrels_from_dict(qrels_dict)
    rk.judgments(qrels)  # the qrels' side, hashed before what is counted
    path = tmp_path / "r.run"
    path.write_text("".join(f"{t} Q0 {d} 0 {x} tag\n" for t, d, x in
                            zip(runs[0].topic.to_pylist(), runs[0].docno.to_pylist(), runs[0].score)))
    hashed, hashes = [], docnos.hashes
    monkeypatch.setattr(docnos, "hashes", lambda strings, codes=None: hashed.append(len(strings) if codes is None
                                                                                  else len(codes))
                        or hashes(strings, codes))
    run = read_run(path)
    got = rk.build_rankings(qrels, [run])
    assert run.docno_hashes is not None and hashed == [len(run.score)], hashed
    again = rk.build_rankings(qrels, [replace(run, docno_hashes=None)])
    assert len(hashed) == 2
    for name in ("grade", "judged", "pooled", "doc", "length", "tie"):
        assert np.array_equal(getattr(got, name), getattr(again, name)), name


def test_a_qrels_file_read_is_hashed_once_and_its_table_is_as_without_the_hashes(tmp_path, monkeypatch):
    """Reading a qrels file hashes its docnos (to encode them, docnos.encoded); its table for the
    join (and its integer grades' table) takes those hashes rather than hashing the docnos
    again, and is the table made of the docnos alone."""
    from rpdi.metrics.evaluate import integer_grades
    from rpdi.metrics.trec import read_qrels

    rng = np.random.default_rng(4)
    path = tmp_path / "q.txt"
    path.write_text("".join(f"{t} 0 D{d} {rng.integers(0, 3)}.5\n" for t in range(3)
                            for d in rng.choice(10 ** 6, 400, replace=False)))
    qrels = read_qrels(path)
    hashed, hashes = [], docnos.hashes
    monkeypatch.setattr(docnos, "hashes",
                        lambda strings, codes=None: hashed.append(len(strings)) or hashes(strings, codes))
    tables = [rk.judgments(q).docnos for q in (qrels, integer_grades(qrels))]
    assert hashed == []
    alone = docnos.DocnoTable.of(qrels.docno.dictionary)
    assert hashed == [len(qrels.docno.dictionary)]
    for table in tables:
        assert np.array_equal(table.hashes, alone.hashes) and table.order is alone.order is None
        assert np.array_equal(table.filter, alone.filter)


def test_the_join_a_block_at_a_time_finds_what_it_finds_at_once(monkeypatch):
    """DocnoTable.codes looks its entries up JOIN_BLOCK at a time: blocks of 7 entries (one
    longer than every qrels docno among them) give the codes of one block."""
    qrels_dict, runs = _case(5, False, False)
    table = docnos.DocnoTable.of(qrels_from_dict(qrels_dict).docno.dictionary)
    strings = runs[0].docno.dictionary
    whole = table.codes(strings)
    monkeypatch.setattr(docnos, "JOIN_BLOCK", 7)
    assert np.array_equal(table.codes(strings), whole)
    assert np.array_equal(table.codes(strings, docnos.hashes(strings)), whole)
    assert (whole < len(table.hashes)).sum() >= 20  # (docnos of the qrels are found)


@pytest.mark.parametrize("grades, small", [([-1, 0, 3, 127, -128, 2], True), ([0, 1, 128], False),
                                           ([0, 2.5, 1], False), ([-129, 1], False), ([0, 1e300, 2], False)])
def test_grades_that_are_small_integers_are_kept_a_byte_each_and_rank_as_given(grades, small):
    """The qrels' grades, kept a byte each where all are integers from -128 to 127, give each
    ranked document its grade as given (0 unless positive) and judged where it is not negative."""
    n = len(grades)
    qrels = qrels_from_dict({"1": {f"d{i}": g for i, g in enumerate(grades)}, "2": {"d0": 1}})
    side = rk.judgments(qrels)
    assert (side.only_grade.dtype == np.int8) == small
    assert side.max_grade == max(grades + [1])
    run = run_from_dict("r", {"1": {f"d{i}": float(n - i) for i in range(n)}, "2": {"d0": 1.0}})
    got = rk.build_rankings(qrels, [run])
    assert got.grade[0, 0, :n].tolist() == [max(float(g), 0.0) for g in grades]
    assert got.judged[0, 0, :n].tolist() == [g >= 0 for g in grades]


def test_a_run_built_with_a_nan_score_is_refused():
    """The readers refuse a score that is not a number; a Run built from arrays is refused when
    ranked (a NaN would sort as the padding of a topic's row)."""
    from rpdi.metrics.errors import InputError
    from rpdi.metrics.trec import Run

    qrels = qrels_from_dict({"1": {"a": 1}})
    run = Run("r", ["1", "1", "1"], ["a", "b", "c"], np.array([1.0, np.nan, 0.5]), source="<built>")
    with pytest.raises(InputError, match=r"run 'r' \(<built>\): a score is not a number"):
        rk.build_rankings(qrels, [run])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this system")
def test_a_child_forked_after_ranking_ranks_on_threads_of_its_own():
    """build_rankings' threads are started once for the process (rankings._workers); a child
    forked once the parent has ranked (rpdi run's worker processes) starts threads of its own and
    ranks as the parent does: handed the parent's pool, whose threads the fork does not copy, it
    would wait for them for ever."""
    qrels_dict, runs = _case(6, False, False)
    qrels = qrels_from_dict(qrels_dict)
    before = rk.build_rankings(qrels, runs)  # (two runs: sorted on the pool's threads)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if np.array_equal(rk.build_rankings(qrels, runs).doc, before.doc) else 3
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the forked child did not rank within 60 s")
