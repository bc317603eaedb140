"""``rpdi run``: experiment configs, reproducibly, on one machine or on a Dask cluster.

What is checked:

- the same config and seed give a byte-identical ``results.csv`` with 1 worker, 2 worker
  processes, a Dask ``LocalCluster`` (2 worker processes), and after an interrupted run is
  resumed (the interruption is a ``KeyboardInterrupt`` raised by the task function after k
  tasks: exactly those k are stored, no results are written, and the rerun computes only the
  rest);
- every documented config mistake exits with status 2, one line on stderr naming the key path
  (e.g. ``experiment.sed``), nothing on stdout and no output directory;
- the shipped configs run (``validate_core``, ``metric_agreement``, ``rbp_paper``; ``template``
  copied next to a tiny qrels/runs pair), their plots are PNG images, and ``rbp_paper``'s
  summary reproduces the numbers Moffat & Zobel (2008) print: Table II, the residual example of
  Section 4.4 and the depths needed for four-digit accuracy (seed 003).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import re
import shutil
from importlib import resources

import numpy as np
import pytest

import rpdi.experiments.tasks as executor
import rpdi.simulate.api
from rpdi.experiments.config import load_config
from rpdi.experiments.experiment import run_experiment
from rpdi.metrics.names import parse_measure
from rpdi.usermodels import MODELS

FIELDS = ["run", "topic", "measure", "aggregation", "closed_form", "exact", "estimate", "stderr", "z",
          "users"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

SMALL = """\
[experiment]
name = "small"
seed = 42
users = 500

[data.synthetic]
topics = 6
runs = 3
depth = 30
seed = 4

[[measures]]
name = "RBP(p={p})"
grid = { p = [0.5, 0.8] }

[[measures]]
name = "AP"

[[measures]]
name = "RR"
"""


def read(path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def stored(out) -> set[str]:
    """Ids of the task results stored under OUT/tasks (no temporary files may be left)."""
    names = os.listdir(os.path.join(out, "tasks"))
    assert all(n.endswith(".json") and not n.startswith(".tmp-") for n in names), names
    return {n[:-len(".json")] for n in names}


def assert_png(path) -> None:
    data = read(path)
    assert data[:8] == PNG_SIGNATURE, path
    assert len(data) > 5000, (path, len(data))
    import matplotlib.image

    image = matplotlib.image.imread(path)  # decodes: a real image, not just a header
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100, image.shape
    assert np.ptp(image[..., :3]) > 0  # not a blank canvas


# --------------------------------------------------------------------------- reproducibility


@pytest.fixture(scope="module")
def small(tmp_path_factory, write):
    """The small config and the results.csv of a plain run with one worker."""
    base = tmp_path_factory.mktemp("small")
    config = write(base / "small.toml", SMALL)
    out = str(base / "one")
    summary = run_experiment(config, out=out, workers=1)
    assert "results in" in summary.text
    return config, read(os.path.join(out, "results.csv"))


def test_results_csv_has_the_documented_columns_and_rows(small):
    config, data = small
    rows = list(csv.reader(data.decode().splitlines()))
    assert rows[0] == FIELDS
    # 4 measures x 3 runs x (6 topics + the mean)
    assert len(rows) - 1 == 4 * 3 * 7
    assert {r[0] for r in rows[1:]} == {"sys01", "sys02", "sys03"}
    # 500 users per (run, topic, measure); none where the measure is undefined (AP with R = 0)
    assert all(r[9] == ("500" if r[6] else "0") for r in rows[1:] if r[1] != "all")
    assert any(r[9] == "500" for r in rows[1:])


def test_two_workers_give_identical_results(small, tmp_path):
    config, expected = small
    run_experiment(config, out=str(tmp_path / "two"), workers=2)
    assert read(tmp_path / "two" / "results.csv") == expected


def test_dask_local_cluster_gives_identical_results(small, tmp_path):
    from dask.distributed import LocalCluster

    config, expected = small
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        run_experiment(config, out=str(tmp_path / "dask"), scheduler=cluster.scheduler_address)
    assert read(tmp_path / "dask" / "results.csv") == expected
    assert read(tmp_path / "dask" / "manifest.json")  # the report is complete


def test_unreachable_scheduler_is_a_one_line_error(small, tmp_path, monkeypatch, run_cli):
    import dask.distributed

    # the same failure, met after 1 s instead of the runner's 10 s connection timeout
    client = dask.distributed.Client
    monkeypatch.setattr(dask.distributed, "Client", lambda address, timeout: client(address, timeout="1s"))
    config, _ = small
    status, out, err = run_cli(["run", config, "--out", str(tmp_path / "x"),
                                    "--scheduler", "tcp://127.0.0.1:9"])
    assert status == 2 and out == "" and err.count("\n") == 1 and "--scheduler" in err, err
    assert not os.path.exists(tmp_path / "x" / "results.csv")


def test_interrupted_run_resumes_to_identical_results(small, tmp_path, monkeypatch, run_cli):
    config, expected = small
    out = str(tmp_path / "resumed")
    tasks = executor.plan(load_config(config)[0])
    real = executor.run_task
    calls = []
    k = 5

    def interrupted(spec):
        if len(calls) == k:
            raise KeyboardInterrupt
        calls.append(spec["id"])
        return real(spec)

    monkeypatch.setattr(executor, "run_task", interrupted)
    status, stdout, err = run_cli(["run", config, "--out", out])
    assert status == 130 and stdout == "" and "interrupted" in err, (status, err)
    assert stored(out) == set(calls) and len(calls) == k and set(calls) <= {t["id"] for t in tasks}
    assert sorted(os.listdir(out)) == ["tasks"]  # no results.csv, no partial report

    def counted(spec):
        calls.append(spec["id"])
        return real(spec)

    stored_first = set(calls)
    calls.clear()
    monkeypatch.setattr(executor, "run_task", counted)
    status, stdout, err = run_cli(["run", config, "--out", out])
    assert status == 0, err
    assert sorted(calls) == sorted({t["id"] for t in tasks} - stored_first)  # nothing finished is computed again
    assert read(os.path.join(out, "results.csv")) == expected

    calls.clear()  # a finished experiment reruns without computing anything
    run_experiment(config, out=out)
    assert calls == [] and read(os.path.join(out, "results.csv")) == expected

    run_experiment(config, out=out, fresh=True)  # --fresh starts over
    assert sorted(calls) == sorted(t["id"] for t in tasks) and read(os.path.join(out, "results.csv")) == expected


def test_each_runs_reading_is_checked_once_and_can_fail(small, monkeypatch):
    """The exact check that a run's rankings are trec_eval's order is made once per run, by the
    task of its first measure, and fails on a planted reading bug (the top two swapped)."""
    config, _ = small
    verdict = json.loads(read(os.path.join(os.path.dirname(config), "one", "verdict.json")))
    assert verdict["counts"]["reading"] == 3  # one per run
    tasks = [t for t in executor.plan(load_config(config)[0]) if t.get("reading")]
    assert [(t["measure"], t["run"]) for t in tasks] == [("RBP(p=0.5)", r) for r in ("sys01", "sys02", "sys03")]

    def readings():
        return [c for c in executor.run_task(tasks[0])["cells"] if c["kind"] == "reading"]

    assert [c["ok"] for c in readings()] == [True]
    build = rpdi.simulate.api.build_rankings  # what a task's rankings are built with

    def swapped(*args, **kwargs):
        rankings = build(*args, **kwargs)
        grade = rankings.grade.copy()
        grade[..., [0, 1]] = grade[..., [1, 0]]
        return dataclasses.replace(rankings, grade=grade)

    monkeypatch.setattr(rpdi.simulate.api, "build_rankings", swapped)
    [cell] = readings()
    assert not cell["ok"] and cell["wrong_topics"] > 0, cell


def test_another_seed_changes_the_simulation_only(small, tmp_path, write):
    config, expected = small
    other = write(tmp_path / "other.toml", SMALL.replace("seed = 42", "seed = 43"))
    run_experiment(other, out=str(tmp_path / "other"))
    a = list(csv.DictReader(expected.decode().splitlines()))
    b = list(csv.DictReader(read(tmp_path / "other" / "results.csv").decode().splitlines()))
    assert [(r["closed_form"], r["exact"]) for r in a] == [(r["closed_form"], r["exact"]) for r in b]
    assert [r["estimate"] for r in a] != [r["estimate"] for r in b]


# --------------------------------------------------------------------------- config mistakes

FILES = """\
[experiment]
name = "files"

[data]
qrels = "{qrels}"
runs = [{runs}]

[[measures]]
name = "AP"
"""

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 d1 0\n2 0 d4 1\n"
RUN_A = "1 Q0 d1 1 3.0 a\n1 Q0 d2 2 2.0 a\n1 Q0 d3 3 1.0 a\n2 Q0 d4 1 2.0 a\n2 Q0 d1 2 1.0 a\n"
RUN_B = "1 Q0 d3 1 3.0 b\n1 Q0 d9 2 2.0 b\n1 Q0 d1 3 1.0 b\n2 Q0 d1 1 2.0 b\n2 Q0 d4 2 1.0 b\n"
RUN_C = "1 Q0 d2 1 3.0 c\n1 Q0 d1 2 2.0 c\n2 Q0 d5 1 2.0 c\n2 Q0 d4 2 1.0 c\n"


def _files(qrels="qrels.txt", runs='"runs/*.run"') -> str:
    return FILES.format(qrels=qrels, runs=runs)


MISTAKES = {  # name: (config text, key path the message must name)
    "misspelt key": (SMALL.replace("seed = 42", "sed = 42"), "experiment.sed: unknown key; did you mean 'seed'?"),
    "misspelt table": (SMALL.replace("[data.synthetic]", "[data.synthetic]\ntopix = 3"),
                       "data.synthetic.topix: unknown key; did you mean 'topics'?"),
    "misspelt key of a measure": (SMALL.replace('name = "AP"', 'name = "AP"\ngrd = 3'),
                                  "[[measures]] 'AP': grd: unknown key; did you mean 'grid'?"),
    "misplaced key": (SMALL.replace("[data.synthetic]", "[data]\nusers = 10\n\n[data.synthetic]"), "data.users"),
    "key in the wrong table": (SMALL.replace("depth = 30", "depth = 30\nengine = \"agent\""),
                               "data.synthetic.engine"),
    "wrong type": (SMALL.replace("users = 500", 'users = "many"'), "experiment.users"),
    "negative users": (SMALL.replace("users = 500", "users = -5"), "experiment.users"),
    "wrong type in the data": (SMALL.replace("topics = 6", "topics = 6.5"), "data.synthetic.topics"),
    "bad engine": (SMALL.replace("users = 500", 'users = 500\nengine = "warp"'), "experiment.engine"),
    "bad measure": (SMALL + '\n[[measures]]\nname = "NoSuchMeasure@10"\n', "[[measures]] 'NoSuchMeasure@10': "),
    "bad parameter": (SMALL.replace("p = [0.5, 0.8]", "p = [0.5, 1.5]"),
                      "[[measures]] 'RBP(p={p})': measure 'RBP(p=1.5)': p=1.5 out of range"),
    "measure of the wrong type": (SMALL.replace('name = "AP"', "name = 5"), "[[measures]] entry 2: name: "),
    "measure without a browsing model": (SMALL + '\n[[measures]]\nname = "RBO(p=0.9)"\n',
                                         "[[measures]] 'RBO(p=0.9)': RBO has no browsing model"),
    "grid placeholder missing": (SMALL.replace('name = "RBP(p={p})"', 'name = "RBP(p={q})"'),
                                 "[[measures]] 'RBP(p={q})': placeholder 'q' not in the grid"),
    "measure listed twice": (SMALL + '\n[[measures]]\nname = "AP"\n', "measures"),
    "empty measures": (SMALL.split("[[measures]]")[0] + "measures = []\n", "measures"),
    "no measures": (SMALL.split("[[measures]]")[0], "measures"),
    "no experiment name": (SMALL.replace('name = "small"\n', ""), "experiment.name"),
    "missing qrels file": (_files(qrels="nonesuch.txt"), "data.qrels"),
    "run glob matching nothing": (_files(runs='"runs/*.run", "other/*.trec"'),
                                  "data.runs: no file matches 'other/*.trec'"),
    "both synthetic and files": (_files() + "\n[data.synthetic]\ntopics = 6\n", "data"),
    "neither synthetic nor files": ('[experiment]\nname = "x"\n\n[data]\n\n[[measures]]\nname = "AP"\n', "data"),
    "qrels without runs": (_files().replace('runs = ["runs/*.run"]\n', ""), "data"),
    "malformed qrels file": (_files(qrels="bad.qrels"), "bad.qrels:2"),
    "qrels with grade distributions": (_files(qrels="uncertain.qrels"), "has grade distributions"),
    "intents without a diversity measure": (_files().replace('runs = ["runs/*.run"]', 'runs = ["runs/*.run"]\nintents = "qrels.txt"'),
                                            "data.intents: given, but no diversity"),
    "missing intents file": (_files().replace('runs = ["runs/*.run"]', 'runs = ["runs/*.run"]\nintents = "none.txt"'),
                             "data.intents: no such file"),
    "diversity measure on synthetic data": (SMALL.replace('name = "AP"', 'name = "ERR-IA@5"'),
                                            "measures: the diversity and intent-aware measures read diversity qrels"),
    "invalid TOML": (SMALL.replace("[experiment]", "[experiment"), "not valid TOML"),
}


@pytest.fixture
def data_dir(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "bad.qrels").write_text("1 0 d1 1\n1 0 d2\n")
    (tmp_path / "uncertain.qrels").write_text("1 0 d1 1\n1 0 d2 0:0.5,1:0.5\n")
    (tmp_path / "runs").mkdir()
    for name, text in (("a", RUN_A), ("b", RUN_B), ("c", RUN_C)):
        (tmp_path / "runs" / f"{name}.run").write_text(text)
    return tmp_path


def assert_config_error(run_cli, argv, out_dir, fragment) -> str:
    status, out, err = run_cli(argv)
    assert status == 2, (status, err)
    assert out == "", out
    assert err.endswith("\n") and err.count("\n") == 1, err  # one line
    assert "Traceback" not in err and fragment in err, err
    assert not os.path.exists(out_dir) or not os.listdir(out_dir), os.listdir(out_dir)
    return err


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_config_mistake_exits_2_naming_the_key(mistake, data_dir, run_cli, write):
    text, key = MISTAKES[mistake]
    config = write(data_dir / "exp.toml", text)
    out = data_dir / "out"
    err = assert_config_error(run_cli, ["run", config, "--out", str(out)], out, key)
    assert err.startswith("rpdi run: ")
    if "." in key and " " not in key and not key.endswith(":2"):  # a key path: named as such
        assert re.search(rf"(^|\s){re.escape(key)}:", err), err


def test_unknown_config_name_exits_2(tmp_path, run_cli):
    out = tmp_path / "out"
    err = assert_config_error(run_cli, ["run", "no_such_experiment", "--out", str(out)], out,
                              "no_such_experiment")
    assert "validate_core" in err  # names the shipped ones
    assert_config_error(run_cli, ["run", str(tmp_path / "missing.toml"), "--out", str(out)], out,
                        "missing.toml: no such file")


def test_a_directory_does_not_shadow_a_shipped_config(tmp_path, monkeypatch, run_cli):
    """A results directory named like a shipped config (``--out validate_core``) is not a config."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "template").mkdir()
    # the shipped template is found, not the directory
    from rpdi.experiments.experiment import config_path

    shipped = resources.files("rpdi.experiments") / "configs" / "template.toml"
    assert os.path.samefile(config_path("template"), str(shipped))
    (tmp_path / "d.toml").mkdir()
    assert_config_error(run_cli, ["run", "d.toml", "--out", "o"], tmp_path / "o", "d.toml")


def test_bad_workers_exits_2(small, tmp_path, run_cli):
    config, _ = small
    assert_config_error(run_cli, ["run", config, "--out", str(tmp_path / "o"), "--workers", "0"],
                        tmp_path / "o", "--workers")


# --------------------------------------------------------------------------- shipped configs


def test_shipped_validate_core(tmp_path, run_cli):
    out = tmp_path / "validate_core"
    status, stdout, err = run_cli(["run", "validate_core", "--out", str(out)])
    assert status == 0, err
    assert "verdict: AGREE (exit 0)" in stdout and "alpha = 0.01" in stdout
    assert "FAIL" not in stdout
    rows = list(csv.DictReader(read(out / "results.csv").decode().splitlines()))
    assert list(rows[0]) == FIELDS
    measures = {r["measure"] for r in rows}
    assert {"RBP(p=0.5)", "RBP(p=0.8)", "RBP(p=0.95)"} <= measures
    assert {parse_measure(m).spec.name for m in measures} == set(MODELS)  # every built-in browsing model
    for r in rows:  # closed form equals the exact expectation of the browsing model
        assert (r["closed_form"] == "") == (r["exact"] == ""), r  # both undefined (AP with R = 0) or neither
        # declared differences: TBG's Jensen gap (exact >= closed form), U's start-vs-end offset
        if r["exact"] and r["measure"] not in ("TBG", "U(L=50)"):
            assert abs(float(r["closed_form"]) - float(r["exact"])) < 1e-9, r
        if r["topic"] != "all":
            assert r["users"] == ("5000" if r["exact"] else "0"), r
    assert sum(r["users"] == "5000" for r in rows) > 0.9 * sum(r["topic"] != "all" for r in rows)
    for name in ("agreement", "zscores", "stopping", "parameter_3_RBP_p_p"):
        assert_png(out / "plots" / f"{name}.png")
    summary = read(out / "summary.md").decode()
    assert summary.startswith("# validate_core") and "## Verdict" in summary and "failing cells" in summary
    agents = list(csv.DictReader(read(out / "agent_check.csv").decode().splitlines()))
    assert {r["measure"] for r in agents} == {"P@10", "RR", "TBG"} and {r["run"] for r in agents} == {"sys01"}


def test_shipped_metric_agreement(tmp_path, run_cli):
    out = tmp_path / "metric_agreement"
    status, stdout, err = run_cli(["run", "metric_agreement", "--out", str(out)])
    # no warnings either: stderr holds progress lines only (a line every few seconds off a terminal)
    progress = re.compile(r"\s*\d+%\|.*\| \d+/\d+ \[.*task.*\]")
    assert status == 0 and all(progress.fullmatch(line) for line in err.splitlines()), err
    rows = list(csv.DictReader(read(out / "results.csv").decode().splitlines()))
    measures = ["RR", "P@10", "AP", "nDCG@100", "RBP(p=0.5)", "RBP(p=0.8)", "RBP(p=0.95)"]
    summary = read(out / "summary.md").decode()
    tau = _md_rows(summary, "### Kendall's tau")
    assert [r[0] for r in tau] == measures
    # recompute Kendall's tau between system orderings from results.csv, independently
    from scipy.stats import kendalltau

    per = {}
    for r in rows:
        if r["topic"] != "all" and r["closed_form"]:  # undefined values are left out
            per.setdefault(r["measure"], {}).setdefault(r["run"], []).append(float(r["closed_form"]))
    runs = sorted(per["AP"])
    assert len(runs) == 12
    means = {m: [np.mean(per[m][run]) for run in runs] for m in measures}
    for i, m in enumerate(measures):
        for j, o in enumerate(measures):
            assert abs(float(tau[i][j + 1]) - kendalltau(means[m], means[o])[0]) < 1e-4, (m, o)
    counts = _md_rows(summary, "### Significantly different system pairs (of 66)")
    assert [r[0] for r in counts] == measures
    # the counts again, from results.csv with scipy's paired tests on each pair's common topics
    from itertools import combinations

    from scipy.stats import ttest_rel, wilcoxon

    by_topic = {}
    for r in rows:
        if r["topic"] != "all" and r["closed_form"]:
            by_topic.setdefault((r["measure"], r["run"]), {})[r["topic"]] = float(r["closed_form"])
    for r in counts:
        expected = [0, 0, 0, 0]
        for a, b in combinations(runs, 2):
            x, y = by_topic[r[0], a], by_topic[r[0], b]
            topics = sorted(set(x) & set(y))
            x, y = np.array([x[t] for t in topics]), np.array([y[t] for t in topics])
            if len(topics) < 2 or np.allclose(x, y):
                continue
            p_t, p_w = ttest_rel(x, y).pvalue, wilcoxon(x, y).pvalue
            expected = [c + int(p <= level) for c, p, level in
                        zip(expected, (p_t, p_t, p_w, p_w), (0.05, 0.01, 0.05, 0.01))]
        assert list(map(int, r[1:])) == expected, (r, expected)
        assert 0 < expected[1] <= expected[0] < 66 and 0 < expected[3] <= expected[2] < 66, r  # a test that can tell
    for name in ("agreement", "zscores", "stopping"):
        assert_png(out / "plots" / f"{name}.png")


def _md_rows(text: str, heading: str) -> list[list[str]]:
    """The body rows of the first Markdown table after ``heading``."""
    return _md_table(text, heading)[1]


def _md_table(text: str, heading: str) -> tuple[list[str], list[list[str]]]:
    """Header and body rows of the first Markdown table after ``heading``."""
    start = text.index(heading)
    table = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            table.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif table:
            break
    assert len(table) > 2 and set(table[1][0]) <= set("-"), table
    return table[0], table[2:]


# Moffat & Zobel (2008), seed 003: Table II on "$$---$----$-----$---" (rows: relevant document
# rank; columns p = 0.5, 0.8, 0.95), as printed.
TABLE_II = {"1": ("1.0000", "1.0000", "1.0000"), "2": ("0.5000", "0.8000", "0.9500"),
            "6": ("0.0313", "0.3277", "0.7738"), "11": ("0.0010", "0.1074", "0.5987"),
            "17": ("0.0000", "0.0281", "0.4401"), "Total": ("1.5322", "2.2632", "3.7626"),
            "x(1 - p)": ("0.7661", "0.4526", "0.1881")}
# Section 4.4: "$$---$----$-??--?---" is bounded by these (lower, upper)
RESIDUAL_BOUNDS = {"0.5": ("0.7661", "0.7663"), "0.8": ("0.447", "0.489"), "0.95": ("0.17", "0.60")}
# Section 4.4: the depth for a residual below 0.0001
DEPTHS = {"0.5": 14, "0.8": 42, "0.95": 180}


def test_shipped_rbp_paper_reproduces_the_seed(tmp_path, run_cli, printed):
    out = tmp_path / "rbp_paper"
    status, stdout, err = run_cli(["run", "rbp_paper", "--out", str(out)])
    assert status == 0, err
    assert "verdict: AGREE" in stdout
    verdicts = _md_rows(read(out / "summary.md").decode(), "## Agreement")
    assert len(verdicts) == 6 and all(v[5] == "0" for v in verdicts), verdicts  # zero-variance cases exact
    cfg, _ = load_config(str(resources.files("rpdi.experiments") / "configs" / "rbp_paper.toml"))
    assert cfg.analysis.worked_examples and cfg.analysis.accuracy == 1e-4
    summary = read(out / "summary.md").decode()

    header, rows = _md_table(summary, "### Table II")
    column = {h.removeprefix("p = "): i for i, h in enumerate(header)}
    table = {r[0]: r for r in rows}
    assert set(table) == set(TABLE_II)
    for label, paper in TABLE_II.items():
        for p, text in zip(("0.5", "0.8", "0.95"), paper):
            printed(float(table[label][column[p]]), text)

    header, rows = _md_table(summary, "### Residual bounds")
    bounds = {r[0]: (float(r[1]), float(r[2]), float(r[3])) for r in rows}
    for p, (lower, upper) in RESIDUAL_BOUNDS.items():
        lo, up, residual = bounds[p]
        printed(lo, lower)
        printed(up, upper)
        q = float(p)  # the paper's residual p^20 + (1 - p)(p^12 + p^13 + p^16)
        assert abs(residual - (q ** 20 + (1 - q) * (q ** 12 + q ** 13 + q ** 16))) < 1e-6
        assert abs(up - lo - residual) < 2e-6

    header, rows = _md_table(summary, "### Depth needed for a residual below 0.0001")
    depth = {r[1]: int(r[2]) for r in rows}
    for p, d in DEPTHS.items():
        assert depth[f"{float(p):.4f}"] == d, (p, depth)

    _, rows = _md_table(summary, "### Score bounds against evaluation depth")
    for r in rows:  # Figure 5: lower <= upper at every depth
        assert float(r[2]) <= float(r[3]) + 1e-12, r
    for name in ("residual_depth", "parameter_0_RBP_p_p", "agreement", "zscores", "stopping"):
        assert_png(out / "plots" / f"{name}.png")  # Figures 5 and 6 among them


def test_shipped_template_runs_as_shipped_and_next_to_user_data(data_dir, monkeypatch, run_cli, write):
    """As shipped the template runs on its synthetic collection; copied next to a tiny qrels file
    and a runs/ folder, with [data.synthetic] commented out and qrels and runs uncommented as it
    says, it runs on them (its paths are relative to the config; the output goes to its
    output.dir once uncommented)."""
    shipped = (resources.files("rpdi.experiments") / "configs" / "template.toml").read_text()
    text = shipped.replace("users = 2000", "users = 100")
    assert text != shipped
    status, _, err = run_cli(["run", write(data_dir / "as_shipped.toml", text), "--out", str(data_dir / "s")])
    assert status == 0, err
    rows = list(csv.DictReader(read(data_dir / "s" / "results.csv").decode().splitlines()))
    assert {r["run"] for r in rows} == {f"sys{i:02d}" for i in range(1, 6)}  # runs = 5 synthetic systems

    text = re.sub(r"^\[data\.synthetic\]\n(?:[^\n]+\n)*", "", text, flags=re.M)  # the block, to its blank line
    text = text.replace('# qrels = "qrels.txt"', 'qrels = "qrels.txt"').replace('# runs = [', 'runs = [')
    text = text.replace('# dir = "results/my-experiment"', 'dir = "results/my-experiment"')
    config = write(data_dir / "my_experiment.toml", text)
    monkeypatch.chdir(data_dir / "runs")  # the working directory does not matter
    status, stdout, err = run_cli(["run", config])
    assert status == 0, err
    out = data_dir / "results" / "my-experiment"
    rows = list(csv.DictReader(read(out / "results.csv").decode().splitlines()))
    assert {r["run"] for r in rows} == {"a", "b", "c"}
    assert {r["measure"] for r in rows} == {"RBP(p=0.5)", "RBP(p=0.8)", "RBP(p=0.95)", "AP", "nDCG@10"}
    assert_png(out / "plots" / "agreement.png")
    shutil.rmtree(out)


def test_template_shows_every_key():
    """Every key a config may have appears in the template, set or commented out."""
    from rpdi.experiments import config as c

    text = (resources.files("rpdi.experiments") / "configs" / "template.toml").read_text()
    sections = {"experiment": c.Experiment, "data": c.Data, "data.synthetic": c.Synthetic,
                "measures": c.MeasureGrid, "agent_check": c.AgentCheck, "output": c.Output,
                "analysis": c.Analysis, "compare": c.Compare}
    assert set(c.Config.model_fields) == {s for s in sections if "." not in s}
    for section, model in sections.items():
        assert re.search(rf"^(# )?\[\[?{re.escape(section)}\]\]?", text, re.M), section
        for key in model.model_fields:
            if key == "synthetic":
                continue  # the [data.synthetic] table itself
            assert re.search(rf"^(# *)?{key} *=", text, re.M), f"{section}.{key}"


def test_a_model_of_ones_own_in_a_config(tmp_path, monkeypatch):
    """A browsing model named as path.py:Class(...) in a config is found relative to the config
    file, whatever the working directory, and gets exact values and simulations (issue: models
    of one's own with no change to rpdi)."""
    example = resources.files("rpdi.usermodels") / "examples" / "two_strikes.py"
    (tmp_path / "exp").mkdir()
    shutil.copy(example, tmp_path / "exp" / "mine.py")
    (tmp_path / "exp" / "c.toml").write_text(
        '[experiment]\nname = "mine"\nusers = 300\n\n[data.synthetic]\ntopics = 4\nruns = 2\ndepth = 20\n\n'
        '[[measures]]\nname = "mine.py:TwoStrikes(n={n})@10"\ngrid = { n = [1, 2] }\n')
    monkeypatch.chdir(tmp_path)
    run_experiment(str(tmp_path / "exp" / "c.toml"), out=str(tmp_path / "out"))
    with open(tmp_path / "out" / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    measures = {r["measure"] for r in rows}
    # named as the config wrote them, relative to it, not by their absolute path
    assert measures == {"mine.py:TwoStrikes(n=1)@10", "mine.py:TwoStrikes(n=2)@10"}
    summary = read(tmp_path / "out" / "summary.md").decode()
    assert str(tmp_path) not in summary and "| mine.py:TwoStrikes(n=1)@10 |" in summary
    # the grid's plot, named after the name as written, as PNG and SVG, linked from summary.md
    plots = sorted(os.listdir(tmp_path / "out" / "plots"))
    assert plots == sorted(f"{name}.{ext}" for name in ("agreement", "zscores", "stopping",
                                                        "parameter_0_mine_py_TwoStrikes_n_n_10")
                           for ext in ("png", "svg"))
    for name in plots:
        assert f"(plots/{name})" in summary, name
        if name.endswith(".svg"):
            assert read(tmp_path / "out" / "plots" / name).lstrip().startswith(b"<?xml"), name
    assert all(r["closed_form"] == "" and r["exact"] != "" for r in rows)
    # the grid's parameter reaches the model: the two patiences score differently somewhere
    by = {m: {r["run"] + r["topic"]: float(r["exact"]) for r in rows if r["measure"] == m} for m in measures}
    one, two = by.values()
    assert any(abs(one[k] - two[k]) > 1e-9 for k in one)


def test_diversity_measures_in_a_config(tmp_path, run_cli):
    """Diversity qrels and intents in [data]: the experiment's closed forms are rpdi eval's with
    the same intents (not the uniform ones), and its users agree with them."""
    from rpdi.metrics.evaluate import evaluate

    data = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "diversity")
    for name in ("qrels.txt", "intents.txt", "majority.run", "diverse.run"):
        shutil.copy(os.path.join(data, name), tmp_path / name)
    measures = ["alpha-nDCG@5", "ERR-IA@5", "RBP-IA(p=0.8)"]
    config = tmp_path / "div.toml"
    config.write_text('[experiment]\nname = "div"\nusers = 300\n\n[data]\nqrels = "qrels.txt"\n'
                      'runs = ["*.run"]\nintents = "intents.txt"\n\n'
                      + "".join(f'[[measures]]\nname = "{m}"\n\n' for m in measures))
    status, _, err = run_cli(["run", str(config), "--out", str(tmp_path / "out")])
    assert status == 0, err
    with open(tmp_path / "out" / "results.csv") as f:
        got = {(r["run"], r["measure"]): float(r["closed_form"]) for r in csv.DictReader(f) if r["topic"] == "all"}
    want = {(r["run"], r["measure"]): r["value"]
            for r in evaluate(str(tmp_path / "qrels.txt"), [str(tmp_path / "majority.run"), str(tmp_path / "diverse.run")],
                              measures, intents=str(tmp_path / "intents.txt"))}
    uniform = {(r["run"], r["measure"]): r["value"]
               for r in evaluate(str(tmp_path / "qrels.txt"), [str(tmp_path / "majority.run")], measures)}
    assert set(got) == set(want)
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-9)
    assert any(abs(uniform[k] - want[k]) > 0.01 for k in uniform)  # the intents file matters here
