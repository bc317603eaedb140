"""``rpdi models``: the browsing models, each with its user and reference."""

from __future__ import annotations

from rpdi.metrics import MEASURES
from rpdi.usermodels import MODELS


def run(args) -> str:
    lines = [f"{MEASURES[name].name_with_defaults()}  [{cls.aggregation}]\n    user: {cls.rule}\n    ref:  {cls.citation}"
             for name, cls in MODELS.items()]
    closed_only = [name for name, spec in MEASURES.items() if not spec.model]
    lines.append("no browsing model (closed form only, `rpdi eval`): " + ", ".join(closed_only))
    return "\n".join(lines) + "\n"
