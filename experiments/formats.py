"""Record tables as text: CSV and aligned columns, shared by the command line and the reports."""

from __future__ import annotations

import csv
import io

EVAL_FIELDS = ("run", "topic", "measure", "value", "residual", "method")  # method: closed_form or exact
# users: simulated users per topic, as --users counts them (in a topic "all" row: the mean over
# the topics simulated)
SIMULATE_FIELDS = ("run", "topic", "measure", "aggregation", "closed_form", "exact", "estimate",
                   "stderr", "z", "users")


def to_csv(records: list[dict], fields) -> str:
    """CSV with a header line; None becomes an empty cell."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: ("" if r[k] is None else r[k]) for k in fields} for r in records)
    return out.getvalue()


def align(table: list[list[str]]) -> str:
    """Rows of cells as left-aligned columns two spaces apart."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table) + "\n"
