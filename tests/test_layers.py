"""The package's layering, as its owner asked: imports point down only,
experiments -> simulate -> usermodels -> metrics (``rpdi.choices``, option values, is below all)."""

from __future__ import annotations

import ast
from pathlib import Path

import rpdi

LAYERS = ["choices", "metrics", "usermodels", "simulate", "experiments"]  # bottom first


def _imported(tree: ast.AST) -> set[str]:
    """Every ``rpdi.<name>`` a module imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(tree):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        for name in names:
            parts = name.split(".")
            if parts[0] == "rpdi" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_imports_point_down_only():
    root = Path(rpdi.__file__).parent
    checked, upward = 0, []
    for layer in LAYERS[1:]:
        for path in sorted((root / layer).rglob("*.py")):
            checked += 1
            for target in _imported(ast.parse(path.read_text(), str(path))):
                if target not in LAYERS or LAYERS.index(target) > LAYERS.index(layer):
                    upward.append(f"{path.relative_to(root)} imports rpdi.{target}")
    assert checked > 40, checked  # the package's modules were found
    assert not upward, upward


def test_an_upward_import_is_seen():
    """The check itself can fail: a metrics module importing the simulator is caught."""
    tree = ast.parse("def f():\n    from rpdi.simulate import check\nimport rpdi.metrics.trec\n")
    assert _imported(tree) == {"simulate", "metrics"}
