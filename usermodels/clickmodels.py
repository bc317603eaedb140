"""Browsing models as click models: what a click model is, the catalogue of them, and a fitted one.

**Every rpdi browsing model is a click model.** Its automaton decides examination: the user
reads rank 1, then ranks in order until the automaton stops (examination is a prefix, as in
every cascade model). An examined document is clicked with its attractiveness alpha, one per
(query, document) pair learnt from the log (or, with qrels, one per grade). The gain the
automaton sees at rank r is the click: g_r = s * c_r, with s = 1 (a click is a relevant
document), s fitted (ERR: the probability that a click satisfies), or s = sigma_qd, a
satisfaction learnt per pair (SDBN, DBN). A user who has stopped clicks with probability NOISE
(default 1e-6), so that a click the model forbids (a second click for the cascade) costs
log(NOISE) instead of making the log-likelihood minus infinity.

Per model (the log's depth is N):

=========  ==================================================================================
P@k        reads exactly k: P(C_r) = alpha_qd for r <= k (P@N is the document-CTR model)
RBP        continues with p after every document: P(E_r) = p^(r-1); p fitted
SDCG@k     continues from r with log2(r+1)/log2(r+2): P(E_r) = 1/log2(r+1); nothing fitted
INSQ, INST continue with ((r+2T-1)/(r+2T))^2, INST with T_r = T - (clicks so far); T fitted
RR         stops at the first click (the cascade model CM)
RR2        stops at the second click
ERR        a click satisfies with probability s (fitted) and the user stops, else reads on:
           DCM with one lambda = 1 - s; with s = 1 it is CM, with s = sigma_qd it is SDBN
RBP2       continues with p1 after a click, p2 after a skip; both fitted
BetaRBP    a population of RBP users, p ~ Beta(a, b); a and b fitted
=========  ==================================================================================

and the standard click models of Chuklin, Markov & de Rijke (2015), from the same machinery:
CM (= RR's user), DCM (continue after a click at rank r with lambda_r), SDBN (ERR's user with
a learnt satisfaction sigma_qd), DBN (SDBN that also gives up with 1 - gamma after every
document), CCM (on with tau1 after a skip; a click satisfies with the document's own
attractiveness, and the user reads on with tau3 if satisfied, tau2 if not), PBM (P(C_r) = epsilon_r alpha_qd, examination independent across ranks), UBM
(epsilon indexed by rank and the rank of the previous click), and the CTR baselines GCTR (one
click probability), RCTR (one per rank) and DCTR (one per pair). Models of one's own
(``path.py:Class(...)``) are fitted the same way, with the parameters named in the class's
``fit_bounds`` free.

A click model is fitted to a log by :func:`rpdi.usermodels.clickfit.fit` and evaluated on
held-out sessions by :mod:`rpdi.usermodels.clickeval`.

>>> from rpdi.usermodels.clickmodels import click_model
>>> click_model("RBP2(p1=0.5)").measure   # p1 given, held fixed; p2 fitted
'RBP2(p1=0.5, p2={p2})'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from rpdi.metrics.clicklogs import ClickLog
from rpdi.metrics.errors import InputError
from rpdi.usermodels.base import FIT_MARGIN, OPEN_UNIT, BrowsingModel
from rpdi.usermodels.clickpasses import forward, independent_marginal, independent_q, marginal, sample_automaton
from rpdi.usermodels.ccm import CCMUser
from rpdi.usermodels.dbn import DBNUser
from rpdi.usermodels.dcm import DCMUser

NOISE = 1e-6
STANDARD = ("GCTR", "RCTR", "DCTR", "PBM", "UBM", "CM", "DCM", "SDBN", "DBN", "CCM")
METRIC_USERS = ("P@10", "RR", "RR2", "ERR", "RBP", "RBP2", "SDCG@10", "INSQ", "INST")  # and BetaRBP, slow: 64 states


@dataclass
class ClickModel:
    """A click model ready to fit: ``kind`` "automaton" (a browsing model) or "independent"
    (PBM, UBM, CTRs: ``exam`` "none", "rank" or "ubm"; ``attr`` "global", "rank" or "pair")."""

    name: str
    kind: str
    user: BrowsingModel | None = None
    free: dict[str, tuple[float, float]] = field(default_factory=dict)
    gain: str = "click"  # "click" (s = 1), "scaled" (s fitted), "satisfaction" (sigma per pair),
    # "attractiveness" (the pair's attractiveness, CCM)
    exam: str = "none"
    attr: str = "pair"
    measure: str | None = None  # the measure text, with {name} placeholders for fitted values

    def set(self, theta: dict[str, float]) -> None:
        for k, v in theta.items():
            if k == "s":
                continue
            if k.startswith("lambda_"):
                self.user.lam[int(k[7:]) - 1] = v
            else:
                setattr(self.user, k, v)


def click_model(text: str, depth: int = 10) -> ClickModel:
    """The click model named ``text``: a standard one (``STANDARD``), a measure with a browsing
    model (its parameters given in the name are held fixed, the others in the model's ``fit_bounds``
    fitted), or ``path.py:Class(...)`` likewise."""
    text = text.strip()
    independent = {"GCTR": ("none", "global"), "RCTR": ("none", "rank"), "DCTR": ("none", "pair"),
                   "PBM": ("rank", "pair"), "UBM": ("ubm", "pair")}
    if text in independent:
        return ClickModel(text, "independent", exam=independent[text][0], attr=independent[text][1])
    if text == "DCM":
        return ClickModel(text, "automaton", DCMUser(depth), {f"lambda_{r}": OPEN_UNIT for r in range(1, depth)})
    if text == "DBN":
        return ClickModel(text, "automaton", DBNUser(), {"gamma": (FIT_MARGIN, 1.0)}, gain="satisfaction")
    if text == "CCM":
        return ClickModel(text, "automaton", CCMUser(), dict.fromkeys(("tau1", "tau2", "tau3"), OPEN_UNIT),
                          gain="attractiveness")
    from rpdi.usermodels import model_for
    from rpdi.usermodels.ap import RobertsonAP
    from rpdi.usermodels.err import ERR

    if text in ("CM", "SDBN"):
        return ClickModel(text, "automaton", ERR("ERR"), gain="click" if text == "CM" else "satisfaction")
    user = model_for(text)
    if user.halflife is not None or isinstance(user, RobertsonAP):
        raise InputError(f"model {text!r}: {type(user).__name__} needs document times or the number "
                         f"of relevant documents, which a click log does not give; it cannot be fitted")
    given = set(re.findall(r"(\w+)\s*=", text.split("(", 1)[1])) if "(" in text else set()
    free = {k: v for k, v in type(user).fit_bounds.items() if k not in given}
    if isinstance(user, ERR):  # the satisfaction of a click, s, is fitted
        return ClickModel(text, "automaton", user, {"s": (FIT_MARGIN, 1.0)}, gain="scaled", measure=text)
    return ClickModel(text, "automaton", user, free, measure=_measure_text(text, list(free)))


def _measure_text(text: str, free: list[str]) -> str:
    """``text`` with placeholders for the fitted parameters, e.g. "RBP(p={p})"."""
    if not free:
        return text
    head, _, cutoff = text.partition("@")
    slots = ", ".join(f"{k}={{{k}}}" for k in free)
    if "(" in head:
        head = head.rstrip()[:-1] + ", " + slots + ")"
    else:
        head = f"{head}({slots})"
    return head + ("@" + cutoff if cutoff else "")


# -- the fitted model -------------------------------------------------------------------------

@dataclass
class Fitted:
    """A fitted click model: scalar ``params`` and their ``stderr``; attractiveness ``alpha`` (and
    satisfaction ``sigma``) per key of ``keys``, with per-rank back-offs for unseen keys;
    ``exam`` the examination probabilities of PBM/UBM."""

    model: ClickModel
    params: dict[str, float]
    stderr: dict[str, float]
    keys: object  # pandas Index of attractiveness keys
    alpha: np.ndarray
    alpha_rank: np.ndarray
    sigma: np.ndarray | None
    sigma_rank: np.ndarray | None
    exam: np.ndarray | None
    by_grade: bool
    noise: float
    loglik: float  # mean per training session
    iterations: int
    seconds: float = 0.0

    @property
    def measure(self) -> str | None:
        """The fitted browsing model as a measure name for ``rpdi eval``/``simulate``."""
        m = self.model.measure
        return None if m is None else m.format(**{k: f"{v:.4g}" for k, v in self.params.items()})

    def parameters_text(self) -> str:
        """Parameters with standard errors, e.g. "p=0.6213±0.0041"."""
        parts = []
        for k, v in self.params.items():
            se = self.stderr.get(k)
            parts.append(f"{k}={v:.4g}" + ("" if se is None or not np.isfinite(se) else f"±{se:.2g}"))
        return " ".join(parts)

    def arrays(self, log: ClickLog) -> tuple[np.ndarray, np.ndarray]:
        """Per-shown-document attractiveness and gain-of-a-click (S, N) for ``log``."""
        codes, names = attractiveness_keys(log, self.model.attr, self.by_grade)
        idx = self.keys.get_indexer(names)[codes]
        alpha = np.where(idx >= 0, self.alpha[idx], self.alpha_rank[None, :])
        if self.sigma is not None:
            gain = np.where(idx >= 0, self.sigma[idx], self.sigma_rank[None, :])
        elif self.model.gain == "attractiveness":
            gain = alpha
        else:
            gain = np.full(log.docs.shape, self.params.get("s", 1.0))
        return alpha, gain

    def conditional(self, log: ClickLog) -> tuple[np.ndarray, np.ndarray]:
        """P(C_r = 1 | C_<r) (S, N) and each session's log-likelihood (S,)."""
        alpha, gain = self.arrays(log)
        if self.model.kind == "independent":
            q = independent_q(self.exam, self.model.exam, log.clicks, alpha, self.noise)
            with np.errstate(divide="ignore"):
                ll = np.where(log.clicks, np.log(q), np.log1p(-q)).sum(1)
            return q, ll
        self.model.set(self.params)
        res = forward(self.model.user, log.clicks, alpha, gain, self.noise)
        return res.q, res.ll

    def marginal(self, log: ClickLog) -> np.ndarray:
        """P(C_r = 1) (S, N), the click probabilities with no clicks observed."""
        alpha, gain = self.arrays(log)
        if self.model.kind == "independent":
            return independent_marginal(self.exam, self.model.exam, alpha, self.noise)
        self.model.set(self.params)
        return marginal(self.model.user, alpha, gain, self.model.gain, self.noise)

    def sample(self, log: ClickLog, rng: np.random.Generator) -> np.ndarray:
        """Clicks (S, N) of simulated users on the sessions' documents."""
        alpha, gain = self.arrays(log)
        S, N = alpha.shape
        if self.model.kind == "independent":
            clicks = np.zeros((S, N), bool)
            for r in range(N):
                q = independent_q(self.exam, self.model.exam, clicks, alpha, self.noise, only=r)
                clicks[:, r] = rng.random(S) < q
            return clicks
        self.model.set(self.params)
        return sample_automaton(self.model.user, alpha, gain, self.noise, rng)


def attractiveness_keys(log: ClickLog, attr: str, by_grade: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each shown document's attractiveness key: codes (S, N) into an object array of key names
    ("query<TAB>docno", "grade 2.0"/"unjudged", "rank 3" or "all")."""
    S, N = log.docs.shape
    if attr == "global":
        return np.zeros((S, N), np.int64), np.array(["all"], object)
    if attr == "rank":
        return np.broadcast_to(np.arange(N), (S, N)), np.array([f"rank {r}" for r in range(1, N + 1)], object)
    if by_grade:
        if log.grade is None:
            raise InputError(f"{log.source}: attractiveness by grade needs qrels")
        grades, codes = np.unique(np.nan_to_num(log.grade, nan=-1.0), return_inverse=True)
        return codes.reshape(S, N), np.array(["unjudged" if g < 0 else f"grade {g:g}" for g in grades], object)
    nd = len(log.docnos)
    pairs, codes = np.unique(log.query[:, None].astype(np.int64) * nd + log.docs, return_inverse=True)
    names = np.char.add(np.char.add(log.queries[pairs // nd].astype(str), "\t"), log.docnos[pairs % nd].astype(str))
    return codes.reshape(S, N), names.astype(object)
