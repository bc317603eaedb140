"""The files around the package say the same thing: the version (pyproject, the installed
metadata that ``rpdi --version`` prints, CITATION.cff, the CHANGELOG's latest release), the
template config that ``rpdi init`` copies out, and the configs' JSON Schema (``rpdi schema``),
which is what the pydantic models generate and which every shipped config satisfies."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jsonschema

from rpdi.experiments.commands.init import TEMPLATE
from rpdi.experiments.schema import SCHEMA_FILE, config_schema

ROOT = Path(__file__).parents[2]


def test_the_version_is_one_in_pyproject_metadata_citation_and_changelog(run_cli):
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    status, out, _ = run_cli(["--version"])
    assert status == 0 and out == f"rpdi {version}\n"
    cited = re.search(r"^version: (\S+)$", (ROOT / "CITATION.cff").read_text(), re.M)
    assert cited and cited.group(1) == version
    released = re.search(r"^## \[(\d[^\]]*)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert released and released.group(1) == version


def test_init_copies_the_template_and_never_overwrites(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(["init"])
    assert status == 0 and err == "" and out.startswith("wrote experiment.toml")
    assert (tmp_path / "experiment.toml").read_text() == TEMPLATE.read_text()
    (tmp_path / "mine.toml").write_text("[experiment]\n")
    for path in ("experiment.toml", "mine.toml"):
        status, out, err = run_cli(["init", path])
        assert status == 2 and out == "" and err.count("\n") == 1 and "not overwritten" in err
    assert (tmp_path / "mine.toml").read_text() == "[experiment]\n"
    status, _, _ = run_cli(["init", "deeper/folder/x.toml"])
    assert status == 0 and (tmp_path / "deeper/folder/x.toml").read_text() == TEMPLATE.read_text()


def test_init_writes_the_schema_the_template_names_beside_it_unless_it_exists(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, _ = run_cli(["init", "a/x.toml"])
    assert status == 0 and "wrote a/config.schema.json" in out
    first = (tmp_path / "a/x.toml").read_text().splitlines()[0]
    assert first == "#:schema ./config.schema.json"
    assert (tmp_path / "a" / first.split("./")[1]).read_text() == SCHEMA_FILE.read_text()
    (tmp_path / "a/config.schema.json").write_text("{}")  # one's own: kept
    status, out, _ = run_cli(["init", "a/y.toml"])
    assert status == 0 and "kept a/config.schema.json" in out
    assert (tmp_path / "a/config.schema.json").read_text() == "{}"
    status, _, _ = run_cli(["init"])
    assert status == 0 and (tmp_path / "config.schema.json").read_text() == SCHEMA_FILE.read_text()


def test_the_shipped_schema_is_the_generated_one_and_rpdi_schema_prints_it(run_cli):
    shipped = SCHEMA_FILE.read_text()
    assert json.loads(shipped) == config_schema(), \
        "the config models changed: python -c 'from rpdi.experiments.schema import schema_text; " \
        "print(schema_text(), end=\"\")' > experiments/configs/config.schema.json"
    status, out, _ = run_cli(["schema"])
    assert status == 0 and out == shipped
    assert (ROOT / "experiments/configs/config.schema.json").read_text() == shipped  # the repository's copy


def test_every_shipped_config_satisfies_the_schema_and_a_misspelt_key_does_not():
    validator = jsonschema.Draft202012Validator(config_schema())
    configs = sorted((ROOT / "experiments/configs").glob("*.toml"))
    assert len(configs) >= 4
    for path in configs:
        errors = list(validator.iter_errors(tomllib.loads(path.read_text())))
        assert not errors, (path.name, errors[0].message)
    config = tomllib.loads(TEMPLATE.read_text())
    config["experiment"]["sed"] = 1
    assert [e.message for e in validator.iter_errors(config)] == \
        ["Additional properties are not allowed ('sed' was unexpected)"]
    assert (ROOT / "experiments/configs/template.toml").read_text().startswith("#:schema ./config.schema.json\n")
