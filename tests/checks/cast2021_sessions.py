"""How far into a conversation users get on the bundled CAsT 2021 runs: each run's
distribution of the last turn its users read (a conversation drawn uniformly, then a user),
computed exactly from the session users (usermodels.session.turns_reached), with the mean
turn reached and each run's mean sRBP, sDCG, nsDCG and esCG over conversations.

    python tests/checks/cast2021_sessions.py [--out cast2021_turns.png] [--depth 10]

sRBP's and sDCG's users move on whatever they read, so their turn reached is the same for every
run; the Conversation user (usermodels/conversation.py) asks on only when a turn answers it.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.metrics.evaluate import load_qrels, load_runs
from rpdi.metrics.names import parse_measure
from rpdi.metrics.rankings import build_rankings
from rpdi.metrics.sessions import session_means, session_rankings, session_score, sessions_from_ids
from rpdi.usermodels import model_for
from rpdi.usermodels.conversation import Conversation
from rpdi.usermodels.session import mean_turns_reached, turns_reached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="cast2021_turns.png")
    parser.add_argument("--depth", type=int, default=10, help="ranks read per turn")
    args = parser.parse_args()
    rankings = build_rankings(load_qrels(CAST2021_QRELS), load_runs(cast2021_runs()))
    sessions = sessions_from_ids(rankings.topics)
    laid = session_rankings(rankings, sessions, args.depth)
    names = [os.path.basename(r).removesuffix(".run.gz") for r in cast2021_runs()]
    users = {"Conversation(p=0.8)": Conversation(p=0.8, cutoff=args.depth),
             f"sRBP(p=0.8,b=0.6)@{args.depth}": model_for(f"sRBP(p=0.8,b=0.6)@{args.depth}")}
    print(f"{len(sessions.ids)} conversations, {laid.turns.min()} to {laid.turns.max()} turns "
          f"(mean {laid.turns.mean():.2f}), {args.depth} ranks read per turn")
    for measure in (f"sRBP(p=0.8,b=0.6)@{args.depth}", f"sDCG@{args.depth}", f"nsDCG@{args.depth}", f"esCG@{args.depth}",
                    f"esDCG@{args.depth}", f"esnDCG@{args.depth}"):
        score = session_score(parse_measure(measure), rankings, sessions)
        print(f"{measure:24s} " + "  ".join(f"{n} {v:.4f}" for n, v in zip(names, session_means(score.value, laid.present))))
    dists = {}
    for label, model in users.items():
        dist = mean_turns_reached(turns_reached(model, laid), laid.present)
        dists[label] = dist
        turns = np.arange(1, dist.shape[1] + 1)
        print(f"\n{label}: turn reached, mean and P(turn >= 3), P(turn >= 5)")
        for n, d in zip(names, dist):
            print(f"  {n:22s} mean {(d * turns).sum():.3f}  P(>=3) {d[2:].sum():.3f}  P(>=5) {d[4:].sum():.3f}")
    plot(dists, names, args.out)
    print(f"\nplot: {args.out}")


def plot(dists: dict, names: list[str], out: str) -> None:
    from rpdi.experiments.plots import _pyplot, style

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(dists), figsize=(11, 4.2), sharey=True, layout="constrained")
    for ax, (label, dist) in zip(np.atleast_1d(axes), dists.items()):
        turns = np.arange(1, dist.shape[1] + 1)
        for k, (n, d) in enumerate(zip(names, dist)):
            ax.plot(turns, 1 - np.concatenate([[0.0], np.cumsum(d)[:-1]]), ms=4, label=n, **style(k))
        alike = np.allclose(dist, dist[0])
        ax.set_title(label + (" (every run alike)" if alike else ""), fontsize=11)
        ax.set_xlabel("turn of the conversation")
        ax.set_xticks(turns[::2])
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("share of users who reach the turn")
    fig.legend(*np.atleast_1d(axes)[0].get_legend_handles_labels(), loc="outside right upper", fontsize=9,
               title="run", title_fontsize=9)
    fig.suptitle("CAsT 2021: how far into a conversation each run's users get (exact)", fontsize=12)
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main()
