"""metrics/uncertain_eval.py: which qrels files hold grade:probability pairs."""

import gzip

import pytest

from rpdi.metrics import uncertain_eval
from rpdi.metrics.uncertain_eval import has_pairs


@pytest.mark.parametrize("gz", [False, True])
def test_a_pair_is_found_a_block_at_a_time_even_across_two(tmp_path, monkeypatch, gz):
    """Read in blocks of 7 bytes: a pair whose line crosses blocks is found; a colon in a docno
    (a URL), not in the grade, is no pair."""
    monkeypatch.setattr(uncertain_eval, "PAIRS_BLOCK", 7)
    lines = "".join(f"{t} 0 http://d{t}/{i} {i % 3}\n" for t in range(3) for i in range(20))

    def written(text: str) -> str:
        path = tmp_path / f"q{len(list(tmp_path.iterdir()))}.txt"
        path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
        return str(path)

    assert not has_pairs(written(lines))
    for at in range(len(lines) // 3, len(lines) // 3 + 8):  # the pair's line starting at 8 places
        start = lines.index("\n", at) + 1
        assert has_pairs(written(lines[:start] + "7 0 d9 0:0.25,2:0.75\n" + lines[start:]))


@pytest.mark.parametrize("gz", [False, True])
def test_a_line_is_searched_from_its_start_and_to_its_end(tmp_path, monkeypatch, gz):
    """Blocks of 12 bytes: the end of a line begun in the block before, alone, looks like a line
    with a pair (its fourth word "y:z"), the whole line does not; a pair on a last line without a
    line end is found."""
    monkeypatch.setattr(uncertain_eval, "PAIRS_BLOCK", 12)
    for i, (text, pair) in enumerate([("5 0 a 1\n1 0 d1 2 x y:z\n", False), ("5 0 a 1\n7 0 d9 0:0.25", True)]):
        path = tmp_path / f"q{i}.txt"
        path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
        assert has_pairs(str(path)) == pair, text
