"""Every worked number in the seed documents (../shared/seeds), reproduced with rpdi.

Each test names the seed file and section it reproduces. Numbers are asserted to the precision
the seed prints them with (``printed``); where a seed is rounded oddly or internally
inconsistent, the test asserts what is correct and a comment says what the seed prints.
"""

from __future__ import annotations

import itertools
import math

import pytest

from rpdi.metrics import evaluate, score

RBP_RANKING = "$$---$----$-----$---"  # relevant at 1, 2, 6, 11, 17 (003, Sections 3.1 and 4)


def truncated(value: float, text: str) -> None:
    """``value`` truncates to ``text`` (the seed cut digits off instead of rounding)."""
    decimals = len(text.split(".")[1])
    assert float(text) - 1e-9 <= value < float(text) + 10.0 ** -decimals, (value, text)


def _binary(ranking: str) -> list[int]:
    return [int(c) for c in ranking]


def _collection(rankings: dict[str, str]):
    """qrels and one run from ``{topic: '$-?' string}``: '?' documents are left out of the qrels."""
    qrels, run = {}, {}
    for topic, ranking in rankings.items():
        docs = {f"{topic}-d{i}": c for i, c in enumerate(ranking, 1)}
        qrels[topic] = {d: (1 if c == "$" else 0) for d, c in docs.items() if c != "?"}
        run[topic] = {d: float(len(ranking) - i) for i, d in enumerate(docs)}
    return qrels, {"run": run}


def rbp_bounds(ranking: str, p: float) -> tuple[float, float]:
    """(lower bound, residual) of RBP(p) on one '$-?' ranking, through ``evaluate``."""
    qrels, runs = _collection({"t": ranking})
    [rec] = evaluate(qrels, runs, [f"RBP(p={p})"])
    return rec["value"], rec["residual"]


def tail_residuals(p: float, depths) -> dict[int, float]:
    """Residual of RBP(p) on all-judged non-relevant rankings of each length d (one topic each)."""
    qrels, runs = _collection({f"d{d:04d}": "-" * d for d in depths})
    records = evaluate(qrels, runs, [f"RBP(p={p})"], per_topic=True)
    return {int(r["topic"][1:]): r["residual"] for r in records if r["topic"] != "all"}


def min_depth_for_four_digits(p: float, limit: int = 400) -> int:
    """The smallest evaluation depth d whose RBP(p) residual is below 0.0001."""
    residuals = tail_residuals(p, range(1, limit + 1))
    return min(d for d, res in residuals.items() if res < 1e-4)


# ---------------------------------------------------------------------------------------------
# 003: Moffat & Zobel (2008), Rank-Biased Precision


@pytest.mark.parametrize("R, text", [(5, "0.6315"), (6, "0.5263"), (7, "0.4511")])
def test_003_ap_with_R_5_6_7(R, text, printed):
    """003 Section 3.1: AP of "$$---$----$-----$---" is 0.6315 / 0.5263 / 0.4511 for R = 5, 6, 7.
    (0.631551 is truncated to 0.6315 here; Table I rounds it to 0.6316.)"""
    value = score("AP", RBP_RANKING, R=R)
    (truncated if R == 5 else printed)(value, text)
    # the explicit sum printed for R = 5
    assert value == pytest.approx((1 / 1 + 2 / 2 + 3 / 6 + 4 / 11 + 5 / 17) / R)


def test_003_ap_0_6316_table_I_caption(printed):
    """003 Section 4, Table I: the same AP is quoted as 0.6316 (0.631551 rounds to 0.6316; the
    0.6315 of Section 3.1 is truncated)."""
    printed(score("AP", RBP_RANKING, R=5), "0.6316")


def test_003_table_I_contributions(printed):
    """003 Section 4, Table I: per-document contributions to AP (totals, x 1/5, percentages)."""
    ranks = [1, 2, 6, 11, 17]
    ap = score("AP", RBP_RANKING, R=5)
    # Prec@r_m = m / r_m is shared equally by the m relevant documents at or above rank r_m
    prec = [score(f"P@{r}", RBP_RANKING) for r in ranks]
    totals = [sum(prec[m] / (m + 1) for m in range(j, 5)) for j in range(5)]
    for value, text in zip(totals, ["1.8164", "0.8164", "0.3164", "0.1497", "0.0588"]):
        printed(value, text)
    shares = [t / 5 for t in totals]
    for value, text in zip(shares, ["0.3633", "0.1633", "0.0633", "0.0299", "0.0118"]):
        printed(value, text)
    assert sum(shares) == pytest.approx(ap)
    for value, text in zip(shares, ["58", "26", "10", "5", "2"]):
        printed(100 * value / ap, text)


def test_003_ap_star_is_sn_ap(printed):
    """003 Section 3.1: AP* of "$$---$----$-----$$$$" (eight relevant) is 0.5324, below the
    0.6315 of "$$---$----$-----$---". (The seed prints the first ranking without its second '$',
    "$---$----$-----$---"; 0.6315 only holds for the ranking of the AP example.)"""
    printed(score("SN-AP@20", "$$---$----$-----$$$$"), "0.5324")
    truncated(score("SN-AP@20", RBP_RANKING), "0.6315")


def test_003_ap_unjudged_and_bound(printed):
    """003 Section 3.1: AP of "$--$-----???????????" with R = 2 is 0.75; if any of the unjudged
    documents were relevant, AP could not exceed 0.5909.

    The printed string has 9 judged documents and 11 '?', but the text speaks of "10 unjudged
    documents", and 0.5909 = (1 + 1/2 + 3/11)/3 needs the first unjudged one at rank 11: the
    bound holds for "$--$------??????????" (10 + 10). With the string as printed the first
    unjudged document is at rank 10 and the bound is (1 + 1/2 + 3/10)/3 = 0.6."""
    printed(score("AP", "$--$-----???????????", R=2), "0.75")

    def bound(ranking: str) -> float:
        unjudged = [i for i, c in enumerate(ranking) if c == "?"]
        best = 0.0
        for n in range(1, len(unjudged) + 1):
            for chosen in itertools.combinations(unjudged, n):
                grades = [1 if c == "$" or i in chosen else 0 for i, c in enumerate(ranking)]
                best = max(best, score("AP", grades, R=2 + n))
        return best

    consistent = "$--$------??????????"
    printed(score("AP", consistent, R=2), "0.75")
    printed(bound(consistent), "0.5909")
    assert bound("$--$-----???????????") == pytest.approx(0.6)


def test_003_ap_can_rise_with_more_judgments():
    """003 Section 3.1: on "-----$--???????????" finding relevant unjudged documents can raise AP
    (here AP = 1/6 with R = 1, and (1/6 + 2/9)/2 if the document at rank 9 is relevant)."""
    before = score("AP", "-----$--???????????", R=1)
    after = score("AP", "-----$--$??????????", R=2)
    assert before == pytest.approx(1 / 6)
    assert after == pytest.approx((1 / 6 + 2 / 9) / 2)
    assert after > before


@pytest.mark.parametrize("p, rows, total, rbp", [
    (0.5, ["1.0000", "0.5000", "0.0313", "0.0010", "0.0000"], "1.5322", "0.7661"),
    (0.8, ["1.0000", "0.8000", "0.3277", "0.1074", "0.0281"], "2.2632", "0.4526"),
    (0.95, ["1.0000", "0.9500", "0.7738", "0.5987", "0.4401"], "3.7626", "0.1881"),
])
def test_003_table_II(p, rows, total, rbp, printed):
    """003 Section 4.1, Table II: per-document RBP weights p^(i-1), their totals, and RBP."""
    for rank, text in zip([1, 2, 6, 11, 17], rows):
        alone = "-" * (rank - 1) + "$" + "-" * (20 - rank)
        printed(score(f"RBP(p={p})", alone) / (1 - p), text)
    value = score(f"RBP(p={p})", RBP_RANKING)
    printed(value / (1 - p), total)
    printed(value, rbp)


@pytest.mark.parametrize("p, low, high", [(0.5, "0.7661", "0.7663"), (0.8, "0.447", "0.489"),
                                          (0.95, "0.17", "0.60")])
def test_003_residual_example(p, low, high, printed):
    """003 Section 4.4: "$$---$----$-??--?---" has RBP bounds 0.7661..0.7663 (p=0.5),
    0.447..0.489 (p=0.8), 0.17..0.60 (p=0.95); residual p^20 + (1-p)(p^12 + p^13 + p^16); each
    range holds the Table II value of the fully judged ranking."""
    ranking = "$$---$----$-??--?---"
    value, residual = rbp_bounds(ranking, p)
    printed(value, low)
    printed(value + residual, high)
    assert residual == pytest.approx(p ** 20 + (1 - p) * (p ** 12 + p ** 13 + p ** 16))
    full = score(f"RBP(p={p})", RBP_RANKING)
    assert value <= full <= value + residual


def test_003_tail_residual_p08_depth20(printed):
    """003 Section 4.4: with p = 0.8 and depth 20 the residual is 0.8^20 = 0.012."""
    _, residual = rbp_bounds("-" * 20, 0.8)
    printed(residual, "0.012")
    _, residual = rbp_bounds(RBP_RANKING, 0.8)
    printed(residual, "0.012")


@pytest.mark.parametrize("p, depth", [(0.5, 14), (0.8, 42), (0.95, 180)])
def test_003_depth_for_four_digits(p, depth):
    """003 Section 4.4: four-digit accuracy (residual < 0.0001) needs depth 14 / 42 / 180 for
    p = 0.5 / 0.8 / 0.95. These are the exact ceil(ln 0.0001 / ln p); the seed's approximation
    9.21 / (1 - p) would give 19, 47 and 185."""
    assert min_depth_for_four_digits(p) == depth


def test_003_depth_100_suffices_only_when_p_at_most_091(printed):
    """003 Section 4.4: exhaustive judgments to depth 100 support four digits only when p <= 0.91."""
    def residual_100(p):
        return tail_residuals(p, [100])[100]

    assert residual_100(0.91) < 1e-4
    assert residual_100(0.92) >= 1e-4
    lo, hi = 0.5, 0.99  # the largest p with residual below 0.0001, by bisection
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if residual_100(mid) < 1e-4 else (lo, mid)
    printed(lo, "0.91")


def test_003_five_relevant_p095_below_023(printed):
    """003 Section 4.2: with only five relevant documents and p = 0.95, RBP < 0.23 (the best
    ranking, all five on top, scores 1 - 0.95^5 = 0.2262)."""
    best = score("RBP(p=0.95)", "$$$$$" + "-" * 95)
    printed(best, "0.23")
    assert best < 0.23
    for ranks in itertools.combinations(range(8), 5):
        grades = [1 if i in ranks else 0 for i in range(8)]
        assert score("RBP(p=0.95)", grades) <= best + 1e-12


def test_003_page_probabilities(printed):
    """003 Section 4.2: at p = 0.95 "roughly 60%" of users reach page two (rank 11) and "35%"
    page three (rank 21); at p = 0.5 "one in a thousand" reach page two; at p = 0.95 rank 100
    weighs "0.6%" of rank 1. (0.95^20 = 0.3585 rounds to 36%; the seed truncates.)"""
    printed(100 * rbp_bounds("-" * 10, 0.95)[1], "60")
    assert 0.35 <= rbp_bounds("-" * 20, 0.95)[1] < 0.36
    printed(1000 * rbp_bounds("-" * 10, 0.5)[1], "1")
    at100 = score("RBP(p=0.95)", "-" * 99 + "$")
    at1 = score("RBP(p=0.95)", "$" + "-" * 99)
    printed(100 * at100 / at1, "0.6")


def test_003_p_and_rr_remarks():
    """003 Section 3.2: "$$$$-----" and "-----$$$$" are equal in P@10 (both 0.4)."""
    assert score("P@10", "$$$$-----") == score("P@10", "-----$$$$") == pytest.approx(0.4)


def test_003_dcg_scaling_constants(printed):
    """003 Section 4.6: DCG with b = 2 of an all-relevant ranking is 21.79 at depth 100 and
    123.99 at depth 1000. (The seed calls the ratio, 5.69, "a factor of almost 5".)"""
    d100 = score("DCG(b=2)@100", [1] * 100)
    d1000 = score("DCG(b=2)@1000", [1] * 1000)
    printed(d100, "21.79")
    printed(d1000, "123.99")
    assert 5.6 < d1000 / d100 < 5.8


# ---------------------------------------------------------------------------------------------
# 000: Moffat (2013), Seven Numeric Properties of Effectiveness Metrics


def test_000_sdcg_11000(printed):
    """000 Section 2 (Scaled DCG): SDCG@5 of "11000" is (1.00 + 0.63)/(1.00 + 0.63 + 0.50 +
    0.43 + 0.39) ~ 0.55."""
    printed(score("SDCG@5", _binary("11000")), "0.55")
    for k, text in zip(range(1, 6), ["1.00", "0.63", "0.50", "0.43", "0.39"]):
        printed(score(f"DCG@{k}", [0] * (k - 1) + [1]), text)
    printed(score("DCG@5", _binary("11111")), "2.95")


def test_000_dcg_unbounded(printed):
    """000 Section 2 (Scaled DCG): DCG@5 of "11000" is 1.63 and is exceeded by DCG@11 of
    "00000111111"; DCG reaches 123.0 only with 1,000 relevant documents at the head (1,000 give
    123.09, 999 give 122.99)."""
    low = score("DCG@5", _binary("11000"))
    printed(low, "1.63")
    assert score("DCG@11", _binary("00000111111")) > low
    assert score("DCG@11", _binary("00000111110")) < low  # "sufficiently many": five do not do it
    assert score("DCG@1000", [1] * 999) < 123.0 <= score("DCG@1000", [1] * 1000)
    printed(score("DCG@1000", [1] * 1000), "123.1")  # the seed prints the round 123.0


def test_000_sn_dcg(printed):
    """000 Section 3 (Self Normalization): SN-DCG@5 of "10100" is (1.0 + 0.50)/(1.0 + 0.63) ~
    0.92; of "10101" it is 1.89/2.13 = 0.88, lower.

    1.887/2.131 = 0.8855, which rounds to 0.89: the seed's 0.88 is truncated, so the value is
    asserted to be in [0.88, 0.89)."""
    printed(score("SN-DCG@5", _binary("10100")), "0.92")
    value = score("SN-DCG@5", _binary("10101"))
    assert 0.88 <= value < 0.89
    printed(score("DCG@5", _binary("10101")), "1.89")
    printed(score("DCG@5", _binary("11100")), "2.13")
    assert value < score("SN-DCG@5", _binary("10100"))


def test_000_sn_ap_not_convergent(printed):
    """000 Section 4 (Convergence): SN-AP@5 of "10000" is 1.0, of "10001" 0.7."""
    printed(score("SN-AP@5", _binary("10000")), "1.0")
    printed(score("SN-AP@5", _binary("10001")), "0.7")


@pytest.mark.parametrize("R", [6, 7, 10])
def test_000_monotonicity_111110(R, printed):
    """000 Section 4 (Monotonicity): "11111" scores 1.0 in P@5, SDCG@5, NDCG@5; "111110" scores
    0.83, 0.89, 0.89 in P@6, SDCG@6, NDCG@6, assuming R > 5."""
    five, six = _binary("11111"), _binary("111110")
    for measure in ("P@5", "SDCG@5"):
        printed(score(measure, five), "1.0")
    printed(score("nDCG@5", five, R=R), "1.0")
    printed(score("P@6", six), "0.83")
    printed(score("SDCG@6", six), "0.89")
    printed(score("nDCG@6", six, R=R), "0.89")


def test_000_rr_examples():
    """000 Section 4 (Convergence, Top-weightedness, Monotonicity): RR@5 of "01000" equals that
    of "01100" (0.5); RR@5 of "10001" equals that of "11000" (1.0); RR@6 >= RR@5."""
    assert score("RR@5", _binary("01000")) == score("RR@5", _binary("01100")) == 0.5
    assert score("RR@5", _binary("10001")) == score("RR@5", _binary("11000")) == 1.0
    for ranking in ("000001", "000000", "010000"):
        assert score("RR@6", _binary(ranking)) >= score("RR@5", _binary(ranking))


# ---------------------------------------------------------------------------------------------
# 001: lecture slides "Common information retrieval evaluation metrics"

SLIDES_RANKING = [1, 0, 1, 0, 1]  # relevant at 1, 3, 5: fits P@3 = 2/3, P@4 = 2/4, P@5 = 3/5
SLIDES_GRADES = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]


def test_001_precision_at_k():
    """001 "Precision@K": Prec@3 = 2/3, Prec@4 = 2/4, Prec@5 = 3/5."""
    assert score("P@3", SLIDES_RANKING) == pytest.approx(2 / 3)
    assert score("P@4", SLIDES_RANKING) == pytest.approx(2 / 4)
    assert score("P@5", SLIDES_RANKING) == pytest.approx(3 / 5)


def test_001_average_precision(printed):
    """001 "Mean Average Precision": (1/3)(1/1 + 2/3 + 3/5) ~ 0.76."""
    value = score("AP", SLIDES_RANKING, R=3)
    printed(value, "0.76")
    assert value == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)


def test_001_dcg_example(printed):
    """001 "DCG Examples": grades 3,2,3,0,0,1,2,2,3,0 (rel_1 + sum rel_i / log2 i, i.e. Jarvelin-
    Kekalainen DCG with b = 2): discounted gains 3, 2, 1.89, 0, 0, 0.39, 0.71, 0.67, 0.95, 0 and
    DCG 3, 5, 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61."""
    dcg = [score(f"DCG(b=2)@{k}", SLIDES_GRADES) for k in range(1, 11)]
    for value, text in zip(dcg, "3 5 6.89 6.89 6.89 7.28 7.99 8.66 9.61 9.61".split()):
        printed(value, text if "." in text else text + ".00")
    gains = [dcg[0]] + [b - a for a, b in zip(dcg, dcg[1:])]
    for value, text in zip(gains, "3 2 1.89 0 0 0.39 0.71 0.67 0.95 0".split()):
        printed(value, text if "." in text else text + ".00")


# ---------------------------------------------------------------------------------------------
# 004: lecture chapter "IR:VIII Evaluation"

# The printed precision / recall rows of rankings A, B (topic 1) and C, D (topic 2).
CHAPTER_ROWS = {
    "A": ("1.00 0.50 0.67 0.75 0.80 0.83 0.71 0.63 0.56 0.60",
          "0.17 0.17 0.33 0.50 0.67 0.83 0.83 0.83 0.83 1.00"),
    "B": ("0.00 0.50 0.33 0.25 0.40 0.50 0.57 0.50 0.56 0.60",
          "0.00 0.17 0.17 0.17 0.33 0.50 0.67 0.67 0.83 1.00"),
    "C": ("1.00 0.50 0.33 0.25 0.20 0.33 0.29 0.25 0.22 0.30",
          "0.33 0.33 0.33 0.33 0.33 0.66 0.66 0.66 0.66 1.00"),
    "D": ("0.00 0.50 0.33 0.25 0.40 0.33 0.43 0.38 0.33 0.30",
          "0.00 0.33 0.33 0.33 0.67 0.67 1.00 1.00 1.00 1.00"),
}


def _reconstruct(name: str) -> tuple[list[int], int]:
    """The 0/1 ranking and R behind a printed precision / recall row: a document is relevant
    where recall rises; R = relevant retrieved / final recall (all rankings end at recall 1)."""
    recall = [float(x) for x in CHAPTER_ROWS[name][1].split()]
    b = [int(r > prev) for prev, r in zip([0.0] + recall, recall)]
    return b, round(sum(b) / recall[-1])


def test_004_reconstructed_rankings():
    """004 "Precision@k and Recall@k", "Averaging Precision-Recall Curves", MAP slides: the
    reconstruction of A, B, C, D (pins it against an error in _reconstruct)."""
    assert _reconstruct("A") == ([1, 0, 1, 1, 1, 1, 0, 0, 0, 1], 6)
    assert _reconstruct("B") == ([0, 1, 0, 0, 1, 1, 1, 0, 1, 1], 6)
    assert _reconstruct("C") == ([1, 0, 0, 0, 0, 1, 0, 0, 0, 1], 3)
    assert _reconstruct("D") == ([0, 1, 0, 0, 1, 0, 1, 0, 0, 0], 3)


@pytest.mark.parametrize("name", "ABCD")
def test_004_precision_recall_rows(name, printed):
    """004 "Precision@k and Recall@k" etc.: P@k and R@k, k = 1..10, of rankings A, B, C, D.
    Ranking C's recall 2/3 is printed 0.66 (truncated); it is asserted within 0.01."""
    b, R = _reconstruct(name)
    precision, recall = (row.split() for row in CHAPTER_ROWS[name])
    for k in range(1, 11):
        printed(score(f"P@{k}", b, R=R), precision[k - 1])
        value = score(f"R@{k}", b, R=R)
        if recall[k - 1] == "0.66":
            assert value == pytest.approx(2 / 3) and abs(value - 0.66) < 0.01
        else:
            printed(value, recall[k - 1])


@pytest.mark.parametrize("name, text", [("A", "0.78"), ("B", "0.52"), ("C", "0.54"), ("D", "0.44")])
def test_004_average_precision_alternative_1(name, text, printed):
    """004 "Average Precision (Alternative 1)" and MAP slides: AP of A 0.78, B 0.52, C 0.54,
    D 0.44 (AP_1@10 = AP here, since R <= 10)."""
    b, R = _reconstruct(name)
    printed(score("AP", b, R=R), text)
    printed(score("AP@10", b, R=R), text)


def _chapter_map(first: str, second: str) -> float:
    qrels, run = {}, {}
    for topic, name in (("1", first), ("2", second)):
        b, R = _reconstruct(name)
        docs = [f"{topic}-{i}" for i in range(len(b))]
        qrels[topic] = dict(zip(docs, b))
        run[topic] = {d: float(len(b) - i) for i, d in enumerate(docs)}
    assert all(sum(q.values()) == _reconstruct(n)[1] for q, n in zip(qrels.values(), (first, second)))
    [rec] = evaluate(qrels, {"system": run}, ["AP"])
    return rec["value"]


def test_004_map(printed):
    """004 "Mean Average Precision (MAP)": System 1 (A, C) 0.66; System 2 (B, D) 0.48.

    The seed writes System 1's MAP as (0.78 + 0.44)/2 = 0.66, while its own AP of C is 0.54:
    (0.78 + 0.44)/2 is 0.61, (0.78 + 0.54)/2 is 0.66. The "0.44" is a slip; 0.66 is right."""
    printed(_chapter_map("A", "C"), "0.66")
    printed(_chapter_map("B", "D"), "0.48")


@pytest.mark.parametrize("name, text, levels", [
    ("A", "0.82", ["1.00"] * 2 + ["0.83"] * 7 + ["0.60"] * 2),
    ("B", "0.6", ["0.60"] * 11),
])
def test_004_eleven_point_ap(name, text, levels, printed):
    """004 "Average Precision (Alternative 2)": A (2 x 1.0 + 7 x 0.83 + 2 x 0.6)/11 = 0.82;
    B (11 x 0.6)/11 = 0.6. The chapter interpolates at "recall >= r", trec_eval 9.x's rule
    (floor(r R + 0.9) relevant documents), which rpdi keeps under compat="pytrec_eval";
    trec_eval 10.0's lround(r R) is the default."""
    b, R = _reconstruct(name)
    printed(score("AP11pt", b, R=R, compat="pytrec_eval"), text)
    for i, level_text in enumerate(levels):
        printed(score(f"IPrec@{i / 10}", b, R=R, compat="pytrec_eval"), level_text)


def test_004_mrr(printed):
    """004 "Mean Reciprocal Rank": first relevant at ranks 1, 2, 4 gives MRR 0.58; at 2, 2, 2
    gives 0.5; and the table of RR at ranks 1..10."""
    def mrr(ranks):
        rankings = {f"t{i}": "-" * (r - 1) + "$" + "--" for i, r in enumerate(ranks)}
        qrels, runs = _collection(rankings)
        [rec] = evaluate(qrels, runs, ["RR"])
        return rec["value"]

    printed(mrr([1, 2, 4]), "0.58")
    printed(mrr([2, 2, 2]), "0.5")
    table = "1 0.50 0.33 0.25 0.20 0.17 0.14 0.13 0.11 0.10".split()
    for r, text in enumerate(table, 1):
        printed(score("RR", [0] * (r - 1) + [1]), text)


CHAPTER_GAINS = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
CHAPTER_IDEAL = [3, 3, 3, 2, 2, 2, 1, 0, 0, 0]


def test_004_dcg_ndcg_table(printed):
    """004 "Normalized Discounted Cumulative Gain (NDCG)": DCG@k, DCG*@k and NDCG@k with
    2^r - 1 gains for grades 3,2,3,0,0,1,2,2,3,0 and ideal 3,3,3,2,2,2,1,0,0,0."""
    dcg = "7.00 8.89 12.39 12.39 12.39 12.75 13.75 14.70 16.80 16.80".split()
    ideal = "7.00 11.42 14.92 16.21 17.37 18.44 18.77 18.77 18.77 18.77".split()
    ndcg = "1.00 0.78 0.83 0.76 0.71 0.69 0.73 0.78 0.90 0.90".split()
    for k in range(1, 11):
        printed(score(f"DCG(dcg='exp-log2')@{k}", CHAPTER_GAINS), dcg[k - 1])
        printed(score(f"DCG(dcg='exp-log2')@{k}", CHAPTER_IDEAL), ideal[k - 1])
        printed(score(f"nDCG(dcg='exp-log2')@{k}", CHAPTER_GAINS, judged_grades=CHAPTER_IDEAL),
                ndcg[k - 1])


def test_004_macro_micro_averaging():
    """004 "Precision and Recall Averaging": macro = mean of per-topic ratios, micro = pooled
    ratio. Hand-computed collection: topic 1 retrieves a (rel), d (non) of relevant {a, b, c};
    topic 2 retrieves x (rel), y, z of relevant {x}. Precision macro (1/2 + 1/3)/2 = 5/12,
    micro 2/5; recall macro (1/3 + 1)/2 = 2/3, micro 2/4."""
    qrels = {"1": {"a": 1, "b": 1, "c": 1, "d": 0}, "2": {"x": 1, "y": 0}}
    runs = {"s": {"1": {"a": 3, "d": 2}, "2": {"x": 5, "y": 4, "z": 3}}}
    macro = {r["measure"]: r["value"] for r in evaluate(qrels, runs, ["SetP", "SetR"])}
    micro = {r["measure"]: r["value"] for r in evaluate(qrels, runs, ["SetP", "SetR"], average="micro")}
    assert macro == pytest.approx({"SetP": 5 / 12, "SetR": 2 / 3})
    assert micro == pytest.approx({"SetP": 2 / 5, "SetR": 2 / 4})


def test_004_university_illustration(printed):
    """004 "Precision and Recall Averaging", Remarks: 10 classes, 5 of 1 student and 5 of 99;
    macro-average 50 students per class, micro-average 98.02. As precision: a class of n
    students is a topic retrieving 99 n documents of which n^2 are relevant (precision n/99,
    weight n), so SetP x 99 gives the two averages."""
    qrels, run = {}, {}
    for c in range(10):
        n = 1 if c < 5 else 99
        docs = [f"c{c}-{i}" for i in range(99 * n)]
        qrels[f"c{c}"] = {d: int(i < n * n) for i, d in enumerate(docs)}
        run[f"c{c}"] = {d: float(len(docs) - i) for i, d in enumerate(docs)}
    [macro] = evaluate(qrels, {"s": run}, ["SetP"])
    [micro] = evaluate(qrels, {"s": run}, ["SetP"], average="micro")
    printed(99 * macro["value"], "50")
    printed(99 * micro["value"], "98.02")


@pytest.mark.parametrize("a, b, c, p, r, f", [(47, 3, 137, "0.94", "0.26", "0.40"),
                                              (99, 1, 9, "0.99", "0.92", "0.95")])
def test_004_set_retrieval_illustrations(a, b, c, p, r, f, printed):
    """004 "Set Retrieval Effectiveness: Illustration": recall 0.26 / precision 0.94 / F 0.40 and
    recall 0.92 / precision 0.99 / F 0.95. The counts are not printed; a, b, c are chosen so
    that all three printed values hold (with unrounded P = 0.94, R = 0.26 F would be 0.41, so
    the seed's F comes from unrounded inputs)."""
    qrels = {"q": {**{f"r{i}": 1 for i in range(a + c)}, **{f"n{i}": 0 for i in range(b)}}}
    retrieved = [f"r{i}" for i in range(a)] + [f"n{i}" for i in range(b)]
    runs = {"s": {"q": {d: float(len(retrieved) - i) for i, d in enumerate(retrieved)}}}
    values = {x["measure"]: x["value"] for x in evaluate(qrels, runs, ["SetP", "SetR", "SetF"])}
    printed(values["SetP"], p)
    printed(values["SetR"], r)
    printed(values["SetF"], f)


# ---------------------------------------------------------------------------------------------
# 002: the product's metric reference page


def test_002_err_cascade():
    """002 "Expected Reciprocal Rank (ERR)": grades 2, 0, 4 with max rel 4, by hand:
    R(1) = (2^2 - 1)/2^4 = 3/16, R(2) = 0, R(3) = 15/16;
    P(stop at 1) = 3/16, P(stop at 3) = (13/16)(1)(15/16) = 195/256;
    ERR@3 = 3/16 + (1/3)(195/256) = 144/768 + 195/768 = 339/768 = 0.44140625."""
    assert score("ERR@3", [2, 0, 4]) == pytest.approx(339 / 768)
    assert score("ERR(max_rel=4)@3", [2, 0, 4]) == pytest.approx(339 / 768)
    # cut at 2 the stop at rank 3 is not counted
    assert score("ERR@2", [2, 0, 4]) == pytest.approx(3 / 16)


def test_002_rbo_and_rbo_ext():
    """002 "Rank-Biased Overlap (RBO)" and "Extrapolation": S = a b c d, T = b a c e, p = 0.5,
    k = 4, by hand: X_1..X_4 = 0, 2, 3, 3, so A_d = 0, 1, 1, 3/4;
    RBO = (1 - p) sum p^(d-1) A_d = 0.5 (0 + 0.5 + 0.25 + 0.125 x 0.75) = 0.421875;
    RBO_EXT = (X_4/4) p^4 + (1-p)/p sum (X_d/d) p^d = 0.75 x 0.0625 + 0.421875 = 0.46875.
    Against itself S scores 1 - p^4 = 0.9375 (RBO) and 1.0 (RBO_EXT)."""
    qrels = {"q": {"a": 1, "b": 0, "c": 0, "d": 0, "e": 0}}
    runs = {"S": {"q": {"a": 4, "b": 3, "c": 2, "d": 1}}, "T": {"q": {"b": 4, "a": 3, "c": 2, "e": 1}}}
    got = {(r["run"], r["measure"]): r["value"]
           for r in evaluate(qrels, runs, ["RBO(p=0.5)", "RBO_EXT(p=0.5)"])}
    assert got[("T", "RBO(p=0.5)")] == pytest.approx(0.421875)
    assert got[("T", "RBO_EXT(p=0.5)")] == pytest.approx(0.46875)
    assert got[("S", "RBO(p=0.5)")] == pytest.approx(0.9375)
    assert got[("S", "RBO_EXT(p=0.5)")] == pytest.approx(1.0)


def test_002_precision_recall_mrr_statements():
    """002 "Precision", "Recall", "MRR": Precision@10 of 0.7 means 7 of the top 10 are relevant;
    Recall@10 of 0.5 means half the relevant documents are in the top 10; MRR 1.0 means every
    query has a relevant result at rank 1."""
    ranking = [1, 1, 0, 1, 1, 0, 1, 1, 0, 1]
    assert score("P@10", ranking) == pytest.approx(0.7)
    assert score("R@10", ranking, R=14) == pytest.approx(0.5)
    qrels, runs = _collection({"t1": "$--", "t2": "$$-", "t3": "$-$"})
    assert evaluate(qrels, runs, ["RR"])[0]["value"] == 1.0
    qrels, runs = _collection({"t1": "$--", "t2": "-$-"})
    assert evaluate(qrels, runs, ["RR"])[0]["value"] < 1.0


def test_002_dcg_ndcg_exp_gains():
    """002 "DCG" / "NDCG": DCG@k = sum (2^rel - 1)/log2(i + 1); by hand for grades 2, 0, 1:
    3/1 + 0 + 1/2 = 3.5; the ideal 2, 1, 0 gives 3 + 1/log2 3 = 3.6309, NDCG@3 = 0.9639."""
    assert score("DCG(dcg='exp-log2')@3", [2, 0, 1]) == pytest.approx(3.5)
    ideal = 3 + 1 / math.log2(3)
    assert score("nDCG(dcg='exp-log2')@3", [2, 0, 1]) == pytest.approx(3.5 / ideal)
    assert score("CG@3", [2, 0, 1]) == 3.0
