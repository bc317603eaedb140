"""``rpdi eval`` over many runs: one run at a time, the same bytes as all at once; and its start-up."""

import subprocess
import sys

HEAVY = ("pandas", "scipy", "matplotlib", "pydantic")


def test_eval_starts_without_heavy_libraries(tmp_path):
    """A plain ``rpdi eval`` (each format) imports none of pandas, scipy, matplotlib, pydantic:
    each costs every call of a researcher's loop over files a tenth of a second or more."""
    (tmp_path / "q").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "a.run").write_text("1 Q0 d1 1 2.0 A\n1 Q0 d2 2 1.0 A\n")
    (tmp_path / "b.run").write_text("1 Q0 d2 1 2.0 B\n")
    code = ("import sys\nfrom rpdi.experiments.cli import main\n"
            "for fmt in ('table', 'trec', 'json', 'csv'):\n"
            f"    assert main(['eval', {str(tmp_path / 'q')!r}, {str(tmp_path / 'a.run')!r}, "
            f"{str(tmp_path / 'b.run')!r}, '-m', 'P@10', '-m', 'AP', '-m', 'RR', '-m', 'nDCG@10', '-m', 'nDCG', "
            "'--format', fmt]) == 0\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]"
