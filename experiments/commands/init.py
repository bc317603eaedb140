"""``rpdi init [PATH]``: the template config, copied out of the installed package to PATH
(default ``experiment.toml``), never over an existing file, and beside it the JSON Schema its
first line names (``#:schema ./config.schema.json``) unless that file exists."""

from __future__ import annotations

import os
from importlib import resources

from rpdi.experiments.commands.outputs import check_writable
from rpdi.experiments.schema import SCHEMA_FILE
from rpdi.metrics.errors import InputError

TEMPLATE = resources.files("rpdi.experiments") / "configs" / "template.toml"


def run(args) -> str:
    if os.path.lexists(args.path):
        raise InputError(f"{args.path}: exists; not overwritten (name another path, or remove it first)")
    check_writable(args.path, "PATH")
    folder = os.path.dirname(args.path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(args.path, "x", encoding="utf-8") as out:  # "x": a file made meanwhile is not overwritten
        out.write(TEMPLATE.read_text(encoding="utf-8"))
    schema = os.path.join(folder, "config.schema.json")
    try:
        with open(schema, "x", encoding="utf-8") as out:
            out.write(SCHEMA_FILE.read_text(encoding="utf-8"))
        wrote = f"wrote {schema}: the configs' JSON Schema, which the config's first line names for editors\n"
    except FileExistsError:
        wrote = f"kept {schema} (exists), which the config's first line names for editors\n"
    return (f"wrote {args.path}: the template config, every key with its default; as written it runs on a "
            f"small synthetic collection (rpdi run {args.path}).\n{wrote}")
