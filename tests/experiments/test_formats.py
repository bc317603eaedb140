"""experiments/formats.py: the one formatter of numbers, tables, CSV and JSON."""

from __future__ import annotations

from rpdi.experiments.formats import align, field_cell, format_eval, format_records, md_table, number, to_csv


def test_number_styles():
    assert number(None) == "–" and number(None, none="null") == "null"
    assert number(3) == "3" and number("x") == "x"  # only floats are formatted
    assert number(0.123456) == "0.1235" and number(0.5, 2) == "0.50"
    assert number(0.000123456, 4, "significant") == "0.0001235"  # a standard error keeps its digits
    assert number(0.00001234, 4, "compact") == "1.2e-05" and number(0.0, 4, "compact") == "0.0000"
    assert number(0.0001234, 4, "fixed") == "0.0001"


def test_record_cells_by_field():
    assert field_cell(0.000123456, 4, "stderr") == "0.0001235"
    assert field_cell(1.23456, 4, "z") == "1.23"
    # undefined is – in every table (rpdi run's, simulate's, eval's), null only in JSON
    assert field_cell(None, 4, "estimate") == "–" and field_cell(None, 4, "z") == "–"
    assert field_cell(None, 4, "stderr") == "–"


def test_undefined_values_print_alike_in_simulate_and_eval_tables(tmp_path, run_cli):
    """Issue 24: ``rpdi simulate`` printed ``null`` where ``rpdi run`` prints ``–``. Topic 2 has
    no relevant document: AP is undefined there; P@1's users all get 1 on topic 1 (z undefined)."""
    (tmp_path / "q.txt").write_text("1 0 d1 1\n2 0 d1 0\n")
    (tmp_path / "r.txt").write_text("1 Q0 d1 1 2.0 t\n2 Q0 d1 1 1.0 t\n")
    for argv in (["simulate", tmp_path / "q.txt", tmp_path / "r.txt", "-m", "AP", "-m", "P@1", "--users", "10",
                  "--per-topic"],
                 ["eval", tmp_path / "q.txt", tmp_path / "r.txt", "-m", "AP", "--per-topic", "--undefined", "null"]):
        status, out, err = run_cli(argv)
        assert status == 0, err
        assert "null" not in out and "–" in out, out


def test_tables_csv_and_markdown():
    rows = [{"run": "a", "value": 0.5, "residual": None}, {"run": "bb", "value": 1 / 3, "residual": 0.25}]
    assert format_records(rows, "table", ("run", "value")) == "run  value\na    0.5000\nbb   0.3333\n"
    assert to_csv(rows, ("run", "residual")) == "run,residual\na,\nbb,0.25\n"
    assert format_records(rows, "json", ("run",)).startswith('[\n {\n  "run": "a"')
    assert md_table(["m", "x"], [["P", 0.5], ["R", None]]) == "| m | x |\n|---|---|\n| P | 0.5000 |\n| R | – |\n"
    assert align([["a", "bb"], ["ccc", "d"]]) == "a    bb\nccc  d\n"


def test_eval_table_has_a_column_per_measure_and_the_residual_after_the_value():
    rows = [{"run": "r", "topic": "all", "measure": "P@1", "value": 1.0, "residual": None, "method": "closed_form"},
            {"run": "r", "topic": "all", "measure": "RBP", "value": 0.25, "residual": 0.5, "method": "closed_form"}]
    assert format_eval(rows, "table", 2) == "run  topic  P@1   RBP\nr    all    1.00  0.25 +0.50\n"


def test_eval_table_says_which_measures_are_exact_expectations():
    rows = [{"run": "r", "topic": "all", "measure": "P@1", "value": 1.0, "residual": None, "method": "closed_form"},
            {"run": "r", "topic": "all", "measure": "Mine", "value": 0.25, "residual": 0.5, "method": "exact"}]
    table, note = format_eval(rows, "table", 2).split("\n\n")
    assert table == "run  topic  P@1   Mine\nr    all    1.00  0.25 +0.50"
    assert note.startswith("Mine: no closed form; the exact expectation of the browsing model")
