"""Paths of the real data shipped with rpdi (see ``experiments/data/README.md`` for sources and
licences): TREC CAsT 2021 qrels and five runs, and a sample of Yandex click logs."""

from __future__ import annotations

from importlib import resources

DATA = resources.files("rpdi.experiments") / "data"
CAST2021_QRELS = str(DATA / "cast2021" / "qrels.txt.gz")
# SYNTHETIC grade distributions made from CAST2021_QRELS (tests/checks/cast2021_uncertain.py, q = 0.2)
CAST2021_UNCERTAIN_QRELS = str(DATA / "cast2021" / "qrels_uncertain.txt.gz")
YANDEX_SESSIONS = str(DATA / "yandex-clicks" / "sessions.txt.gz")


def cast2021_runs() -> list[str]:
    """The five CAsT 2021 baseline runs, sorted by name."""
    return sorted(str(p) for p in (DATA / "cast2021" / "runs").iterdir() if p.name.endswith(".run.gz"))
