"""``irds:DATASET_ID`` qrels through ir_datasets (metrics/irds.py), on datasets registered from
local files: no network. Not installed, unknown, or not available offline: one-line InputErrors."""

from __future__ import annotations

import sys
import uuid

import pytest

from rpdi.metrics.errors import InputError
from rpdi.metrics.frames import qrels_from
from rpdi.metrics.trec import read_qrels

ir_datasets = pytest.importorskip("ir_datasets")


def register(path) -> str:
    """A dataset of the qrels file ``path``, registered under a new name (ir_datasets' registry
    refuses a name twice)."""
    name = f"rpdi-test/{uuid.uuid4().hex}"
    ir_datasets.registry.register(name, ir_datasets.create_dataset(qrels_trec=str(path)))
    return name


def test_a_local_dataset_is_read_as_its_file(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n10 0 d1 3\n")
    qrels = qrels_from(f"irds:{register(path)}")
    expected = read_qrels(path)
    assert qrels.topic.to_pylist() == expected.topic.to_pylist()
    assert qrels.docno.to_pylist() == expected.docno.to_pylist()
    assert qrels.grade.tolist() == expected.grade.tolist()


def test_unavailable_unknown_and_not_installed(tmp_path, monkeypatch):
    name = register(tmp_path / "never_written.txt")  # as a dataset neither downloaded nor downloadable
    with pytest.raises(InputError, match=rf"^irds:{name}: qrels file missing: .*never_written.txt$"):
        qrels_from(f"irds:{name}")
    with pytest.raises(InputError, match=r"^irds:no-such/dataset: ir_datasets has no dataset 'no-such/dataset'$"):
        qrels_from("irds:no-such/dataset")
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # as if not installed
    with pytest.raises(InputError, match=r"^irds:x: ir_datasets is not installed \(pip install 'rpdi\[irds\]'\)$"):
        qrels_from("irds:x")


def test_a_failed_download_is_one_plain_line_on_stderr(tmp_path, capsys):
    """A dataset whose qrels are downloaded from a host that never resolves (``.invalid``):
    ir_datasets' own log of each retry is silenced, the error is one plain line."""
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import RequestsDownload

    from rpdi.experiments.cli import main

    name = f"rpdi-test/{uuid.uuid4().hex}"
    url = "http://rpdi-test.invalid/qrels.txt"
    ir_datasets.registry.register(name, ir_datasets.datasets.base.Dataset(TrecQrels(RequestsDownload(url), {})))
    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 1.0 a\n")
    assert main(["eval", f"irds:{name}", str(run), "-m", "P@1"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"rpdi eval: irds:{name}: qrels not available offline and the download failed"]
