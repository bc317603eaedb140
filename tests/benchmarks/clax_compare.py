"""rpdi's click models next to CLAX's (Hager, Zoeter & de Rijke 2025: gradient-based click models
in JAX, PyPI ``clax-models``) on the bundled Yandex sample: PBM, UBM, DBN, DCM and CCM fitted to
the same 75% of the sessions, scored on the same held-out 25% by the same definitions (held-out
log-likelihood per session with P(C_r | C_<r); perplexity, the mean over ranks of
2^-(mean log2 of the probability of what happened) with P(C_r)), with the seconds of each fit.

JAX is never a dependency of rpdi: CLAX runs in a benchmark-only environment of its own, in a
child process of this script, which hands it the sessions as arrays. Set it up once:

    python -m venv /work/venv-clax
    /work/venv-clax/bin/pip install "jax==0.7.2" "jaxlib==0.7.2" clax-models

(clax-models 0.1.1 needs flax < 0.12, which does not import with jax 0.10: hence the pin.) Then,
from rpdi's environment:

    python tests/benchmarks/clax_compare.py [--clax-python /work/venv-clax/bin/python] [--seed 0]

Without that environment the script says so and prints rpdi's figures alone. CLAX is trained as
its README does (AdamW, learning rate 0.003, up to 50 epochs, early stopping on the loss of a
tenth of the training sessions held aside); rpdi fits without standard errors.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

MODELS = ("PBM", "UBM", "DBN", "DCM", "CCM")


def score(cond, marg, clicks):
    """Held-out log-likelihood (mean per session) and perplexity, from P(C_r = 1 | C_<r) and P(C_r = 1)."""
    cond, marg = np.clip(cond, 1e-300, 1 - 1e-16), np.clip(marg, 1e-300, 1 - 1e-16)
    ll = np.where(clicks, np.log(cond), np.log1p(-cond)).sum(1).mean()
    ppl = 2.0 ** (-np.where(clicks, np.log2(marg), np.log2(1 - marg)).mean(0))
    return float(ll), float(ppl.mean())


# -- the child process, in the CLAX environment ------------------------------------------------

def clax_worker(data_path, out_path, seed, epochs):
    import jax
    import optax
    from flax import nnx

    import clax

    d = np.load(data_path)
    N, P = d["train_ids"].shape[1], int(d["pairs"])
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(d["train_ids"]))
    cut = len(order) // 10
    parts = {"val": order[:cut], "fit": order[cut:]}

    def batches(ids, clicks, size=512):
        for i in range(0, len(ids), size):
            n = len(ids[i:i + size])
            yield {"query_doc_ids": ids[i:i + size].astype(np.int32),
                   "positions": np.broadcast_to(np.arange(1, N + 1, dtype=np.int32), (n, N)).copy(),
                   "mask": np.ones((n, N), bool), "clicks": clicks[i:i + size].astype(np.float32)}

    build = {"PBM": lambda r: clax.PositionBasedModel(positions=N, query_doc_pairs=P, rngs=r),
             "UBM": lambda r: clax.UserBrowsingModel(positions=N, query_doc_pairs=P, rngs=r),
             "DBN": lambda r: clax.DynamicBayesianNetwork(query_doc_pairs=P, rngs=r),
             "DCM": lambda r: clax.DependentClickModel(positions=N, query_doc_pairs=P, rngs=r),
             "CCM": lambda r: clax.ClickChainModel(query_doc_pairs=P, rngs=r)}

    @nnx.jit
    def train_step(model, optimizer, batch):
        loss, grads = nnx.value_and_grad(lambda m: m.compute_loss(batch).mean())(model)
        optimizer.update(grads)
        return loss

    @nnx.jit
    def predict(model, batch):
        return (model.compute_loss(batch).sum(), model.predict_conditional_clicks(batch),
                model.predict_clicks(batch))

    out = {}
    for name in MODELS:
        t0 = time.perf_counter()
        model = build[name](nnx.Rngs(seed))
        optimizer = nnx.ModelAndOptimizer(model, optax.adamw(0.003))
        best, best_state, epoch = np.inf, nnx.state(model), 0
        for epoch in range(1, epochs + 1):
            shuffled = rng.permutation(parts["fit"])
            for b in batches(d["train_ids"][shuffled], d["train_clicks"][shuffled]):
                train_step(model, optimizer, b)
            val = parts["val"]
            loss = sum(float(predict(model, b)[0]) for b in batches(d["train_ids"][val], d["train_clicks"][val]))
            if loss < best - 1e-5 * len(val):
                best, best_state = loss, nnx.state(model)
            else:
                break
        nnx.update(model, best_state)
        jax.block_until_ready(nnx.state(model))
        seconds = time.perf_counter() - t0
        cond, marg = [], []
        for b in batches(d["test_ids"], d["test_clicks"]):
            _, c, m = predict(model, b)
            cond.append(np.exp(np.asarray(c, float)))
            marg.append(np.exp(np.asarray(m, float)))
        ll, ppl = score(np.concatenate(cond), np.concatenate(marg), d["test_clicks"])
        out[name] = {"loglik": ll, "perplexity": ppl, "seconds": seconds, "epochs": epoch}
        print(f"  clax {name}: {seconds:.1f} s, {epoch} epochs", file=sys.stderr, flush=True)
    with open(out_path, "w") as f:
        json.dump(out, f)


# -- the main process, in rpdi's environment ---------------------------------------------------

def pair_ids(train, test):
    """Each shown document's (query, document) id, 1.. (0 is CLAX's padding), shared by train and test."""
    import pandas as pd

    from rpdi.usermodels.clickmodels import attractiveness_keys

    (ctr, ntr), (cte, nte) = (attractiveness_keys(log, "pair", False) for log in (train, test))
    names = pd.Index(np.concatenate([ntr, nte])).unique()
    return names.get_indexer(ntr)[ctr] + 1, names.get_indexer(nte)[cte] + 1, len(names)


def run_clax(python, train, test, seed, epochs):
    """CLAX's figures per model from the child process, or None (with the reason printed)."""
    probe = subprocess.run([python, "-c", "import clax"], capture_output=True, text=True) if os.path.exists(python) else None
    if probe is None or probe.returncode != 0:
        why = "not found" if probe is None else (probe.stderr.strip().splitlines() or ["?"])[-1]
        print(f"CLAX skipped: {python}: {why} (see this script's docstring to set it up)")
        return None
    tr, te, pairs = pair_ids(train, test)
    with tempfile.TemporaryDirectory() as tmp:
        data, out = os.path.join(tmp, "data.npz"), os.path.join(tmp, "out.json")
        np.savez(data, train_ids=tr, train_clicks=train.clicks, test_ids=te, test_clicks=test.clicks, pairs=pairs)
        subprocess.run([python, __file__, "--worker", data, out, "--seed", str(seed), "--epochs", str(epochs)], check=True)
        with open(out) as f:
            return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clax-python", default="/work/venv-clax/bin/python")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return clax_worker(*args.worker, args.seed, args.epochs)

    from rpdi.experiments.bundled import YANDEX_SESSIONS
    from rpdi.metrics.clicklogs import read_clicklog
    from rpdi.usermodels.clickeval import evaluate
    from rpdi.usermodels.clickfit import fit

    train, test = read_clicklog(YANDEX_SESSIONS).split(0.25, args.seed)
    print(f"{len(train)} sessions to fit, {len(test)} held out (seed {args.seed})", flush=True)
    theirs = run_clax(args.clax_python, train, test, args.seed, args.epochs) or {}
    print(f"{'model':6s} {'rpdi ppl':>9s} {'clax ppl':>9s} {'rpdi LL':>9s} {'clax LL':>9s} {'rpdi s':>7s} {'clax s':>7s}")
    for name in MODELS:
        t0 = time.perf_counter()
        m = fit(name, train, stderr=False)
        seconds = time.perf_counter() - t0
        e = evaluate(m, test)
        c = theirs.get(name)
        other = (f"{c['perplexity']:9.4f}", f"{c['loglik']:9.4f}", f"{c['seconds']:7.1f}") if c else ("-",) * 3
        print(f"{name:6s} {e['perplexity']:9.4f} {other[0]:>9s} {e['loglik']:9.4f} {other[1]:>9s} {seconds:7.1f} {other[2]:>7s}",
              flush=True)


if __name__ == "__main__":
    main()
