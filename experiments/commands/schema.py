"""``rpdi schema``: the JSON Schema of experiment configs, for editors (see
:mod:`rpdi.experiments.schema`)."""

from __future__ import annotations

from rpdi.experiments.schema import schema_text


def run(args) -> str:
    return schema_text()
