"""The package's layering, as its owner asked: imports point down only,
experiments -> simulate -> usermodels -> metrics (``rpdi.choices``, option values, is below all)."""

from __future__ import annotations

import ast
from pathlib import Path

import rpdi

LAYERS = ["choices", "metrics", "usermodels", "simulate", "experiments"]  # bottom first


def _modules(tree: ast.AST) -> set[str]:
    """Every module a module imports (absolute imports), at its top or inside a function."""
    found = set()
    for node in ast.walk(tree):
        found.update([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
    return found


def _imported(tree: ast.AST) -> set[str]:
    """Every ``rpdi.<name>`` a module imports, at its top or inside a function."""
    parts = [name.split(".") for name in _modules(tree)]
    return {p[1] for p in parts if p[0] == "rpdi" and len(p) > 1}


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


def test_measure_declarations_do_not_import_trec_eval_names():
    """Within metrics, the declarations and rpdi's own parser (metrics/measures/) import neither
    trec_eval's name translation nor the resolver built on both: the translator calls the parser,
    never the reverse."""
    root = Path(rpdi.__file__).parent / "metrics" / "measures"
    paths = sorted(root.rglob("*.py"))
    assert len(paths) > 10, paths  # the registry, the kernels and the families were found
    above = {"rpdi.metrics.trec_names", "rpdi.metrics.names", "rpdi.metrics.evaluate"}
    found = [f"{p.name} imports {m}" for p in paths for m in _modules(ast.parse(p.read_text())) if m in above]
    assert not found, found


def test_an_upward_import_is_seen():
    """The check itself can fail: a metrics module importing the simulator is caught."""
    tree = ast.parse("def f():\n    from rpdi.simulate import check\nimport rpdi.metrics.trec\n")
    assert _imported(tree) == {"simulate", "metrics"}
    assert "rpdi.metrics.trec" in _modules(tree)


def test_the_command_line_only_parses_and_dispatches():
    """experiments/cli.py imports no computing or formatting module: only the option values, the
    one error, the allocator's settings for the process (experiments/allocator.py) and, by name,
    each command's module in experiments/commands/."""
    path = Path(rpdi.__file__).parent / "experiments" / "cli.py"
    imported = {m for m in _modules(ast.parse(path.read_text())) if m.startswith("rpdi")}
    assert imported <= {"rpdi", "rpdi.choices", "rpdi.metrics.errors", "rpdi.experiments.allocator"}, imported
    assert 'import_module(f"rpdi.experiments.commands.{args.command}")' in path.read_text()
