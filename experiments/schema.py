"""The JSON Schema of experiment configs, generated from the pydantic models of
:mod:`rpdi.experiments.config`, so that an editor completes and checks a config's keys.

The package ships it as ``experiments/configs/config.schema.json`` (a test checks that the file
is what :func:`config_schema` generates); ``rpdi schema`` prints it. A TOML editor that reads
JSON Schemas (taplo, and VS Code's Even Better TOML, which uses taplo) finds it through the
directive on a config's first line, ``#:schema ./config.schema.json`` (the shipped template's),
a path relative to the config.

>>> schema = config_schema()
>>> schema["title"], sorted(schema["properties"])[:3]
('rpdi experiment config', ['agent_check', 'analysis', 'compare'])
>>> schema["properties"]["experiment"]["$ref"]
'#/$defs/Experiment'
"""

from __future__ import annotations

import json
from importlib import resources

from rpdi.experiments.config import Config

SCHEMA_FILE = resources.files("rpdi.experiments") / "configs" / "config.schema.json"


def config_schema() -> dict:
    """The JSON Schema (draft 2020-12, pydantic's) of a config: keys, types, defaults, bounds."""
    schema = Config.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema,
            "title": "rpdi experiment config"}


def schema_text() -> str:
    """:func:`config_schema` as the shipped file holds it: indented JSON ending in a newline."""
    return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"
