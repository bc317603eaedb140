"""The ``rpdi`` command line: it parses the arguments and runs the command's module in
:mod:`rpdi.experiments.commands` (``rpdi eval`` runs ``commands/eval.py``).

Bad input of any kind exits with status 2 and one line on stderr naming the file, line, key or
measure at fault; nothing is written to stdout then. Heavy modules are imported lazily so that
start-up stays short.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from importlib import import_module

from rpdi.choices import (AVERAGES, COMPAT, CONVENTIONS, CORRECTIONS, ENGINES, FORMATS, INTERVALS,
                          TABLE_II_RANKING, TESTS, TIES, TOPICS, UNDEFINED)


PLUGIN_HELP = ("a model of one's own, path/to/model.py:Class(param=value,...)@k or package.module:Class(...)@k "
               "(valued by its exact expectation where a closed form is asked for): its file is imported "
               "and EXECUTES PYTHON CODE, so name only files you trust")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2
        self.exit(2, f"{self.prog}: {message}\n")


def _collection_arguments() -> argparse.ArgumentParser:
    """The arguments ``eval``, ``simulate`` (and later commands on qrels and runs) share."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("qrels", help="TREC qrels file (topic iter docno grade), plain or .gz")
    p.add_argument("runs", nargs="+", metavar="run",
                   help="TREC run files (topic Q0 docno rank score tag), each named by its file name "
                        "without extension, or given as NAME=PATH (e.g. a=a/run.txt b=b/run.txt)")
    p.add_argument("-m", "--measure", action="append", dest="measures",
                   help="measure name as in ir_measures (P@10, nDCG@10, RBP(p=0.8)) or trec_eval "
                        "(P_10, map, ndcg_cut.10,20, all_trec); repeatable; or "
                        + PLUGIN_HELP)
    p.add_argument("--measures-from", action="append", metavar="FIT.json",
                   help="also the measures fitted to click logs: the users in the output of rpdi fit "
                        "--format json (best fit first; repeatable)")
    p.add_argument("-q", "--per-topic", action="store_true", help="also report every topic (trec_eval -q)")
    p.add_argument("--topics", choices=TOPICS, default=None,
                   help="mean over all qrels topics (trec_eval -c; the default, except with --format trec) "
                        "or over those each run retrieved for (plain trec_eval)")
    p.add_argument("--doc-lengths", metavar="FILE",
                   help="document lengths in words ('docno words' lines) for time-based users (TBG)")
    _digits_argument(p)
    return p


def _digits_argument(p) -> None:
    p.add_argument("--digits", type=int, default=4, choices=range(1, 18), metavar="N",
                   help="decimals of the values in tables (default 4); standard errors are shown "
                        "with N significant digits, z with 2 decimals; csv and json are exact")


def _eval_parser(sub, common) -> None:
    p = sub.add_parser("eval", parents=[common],
                       help="evaluate runs with measures (closed forms, or a model's exact expectation)",
                       description="Evaluate TREC runs against qrels: closed forms, and a browsing model "
                                   "with none by its exact expectation.")
    p.add_argument("--format", choices=FORMATS + ("trec",), default="table")
    p.add_argument("--undefined", choices=UNDEFINED, default="zero",
                   help="report undefined values (R = 0) as 0 (trec_eval, default) or null")
    p.add_argument("--average", choices=AVERAGES, default="macro",
                   help="mean of per-topic values (default) or pooled ratio (P, R, SetP, SetR, Fallout)")
    p.add_argument("--compat", choices=COMPAT, default="trec_eval",
                   help="trec_eval 10.0's numbers (default), or pytrec_eval's: trec_eval 9.x's "
                        "interpolation rule and scores stored as float32")
    p.add_argument("-c", dest="all_topics", action="store_true",
                   help="trec_eval -c: average over every qrels topic (same as --topics qrels)")
    p.add_argument("-M", dest="max_docs", type=int, metavar="N",
                   help="trec_eval -M: evaluate only the first N documents of each topic")
    p.add_argument("-J", dest="judged_only", action="store_true",
                   help="trec_eval -J: remove unjudged documents from the rankings first")
    p.add_argument("-l", dest="relevance_level", type=float, default=1, metavar="LEVEL",
                   help="trec_eval -l: the grade from which a document counts as relevant in "
                        "trec_eval-named measures (default 1)")
    p.add_argument("-N", dest="num_docs", type=float, default=0.0, metavar="N",
                   help="trec_eval -N: documents in the collection (for utility's d parameter)")
    _intents_option(p)
    _sessions_option(p)
    _ties_option(p, TIES, "expected: each measure's expectation over uniformly random orders of the tied "
                          "documents, with how it was found; range: trec_eval's value and the lowest and "
                          "highest over those orders (not with --format trec)")
    _worlds_options(p, seed=True)


def _worlds_options(p, seed: bool, worlds: bool = True) -> None:
    """The options of uncertain grades (eval, compare, simulate): several assessors, judgment worlds."""
    p.add_argument("--assessor", action="append", dest="assessors", metavar="FILE[:WEIGHT]",
                   help="another assessor's qrels (repeatable): grades become distributions, each "
                        "document's grade that of an assessor drawn by weight (QRELS weighs 1; default 1)")
    p.add_argument("--missing", choices=("renormalise", "zero"), default="renormalise",
                   help="a document some assessors did not judge: judged by the others (default) or "
                        "grade 0 from the silent ones")
    if not worlds:
        return
    p.add_argument("--worlds", type=int, default=1000, metavar="N",
                   help="with uncertain grades (qrels 'topic iter docno g:p,g:p' or --assessor): judgment "
                        "worlds drawn where they are not enumerated (default 1000)")
    if seed:
        p.add_argument("--seed", type=int, default=0, help="seed of the drawn judgment worlds (>= 0)")


def _intents_option(p) -> None:
    """``--intents FILE``, for the commands that read diversity measures (eval, simulate, compare)."""
    p.add_argument("--intents", metavar="FILE",
                   help="intent probabilities P(i|q), 'topic subtopic probability' lines, for the diversity "
                        "measures (alpha-nDCG@20, ERR-IA@20, ..., any X-IA), whose qrels are read as "
                        "'topic subtopic docno judgment' (default: a topic's subtopics with a relevant "
                        "document equally likely, as ndeval)")


def _sessions_option(p) -> None:
    """``--sessions FILE``, for the commands that read session measures (eval, simulate, compare)."""
    p.add_argument("--sessions", metavar="FILE",
                   help="the sessions the session measures read, 'session position topic' lines "
                        "(default: the CAsT ids SESSION_TURN of the qrels' topics, e.g. 106_3)")


def _ties_option(p, choices, what: str) -> None:
    """``--ties``: documents with equal scores read in trec_eval's order, or in random order."""
    p.add_argument("--ties", choices=choices, default="trec_eval",
                   help="documents with equal scores: trec_eval's order (docno descending; default) or "
                        "in random order; " + what)


def _simulate_parser(sub, common) -> None:
    p = sub.add_parser("simulate", parents=[common],
                       help="closed form vs exact browsing model vs simulated users",
                       description="For every measure: its closed form, the exact expectation of its "
                                   "browsing model, and simulated users with a standard error and z-score.")
    p.add_argument("--users", type=int, default=10_000,
                   help="simulated users per (run, topic, measure); 0: closed form and exact only")
    p.add_argument("--target-stderr", type=float, default=None,
                   help="simulate until the standard error is this small (instead of --users)")
    p.add_argument("--max-users", type=int, default=10_000_000, help="cap for --target-stderr")
    p.add_argument("--seed", type=int, default=0, help="root of the random streams (>= 0)")
    p.add_argument("--force", action="store_true",
                   help="simulate even when the estimated work exceeds the limit (docs/verdict.md)")
    p.add_argument("--engine", choices=ENGINES, default="vector")
    p.add_argument("--convention", choices=CONVENTIONS, default="unknown",
                   help="what a user meets beyond the ranking (default: unknown, valued as non-relevant)")
    p.add_argument("--alpha", type=float, default=0.01,
                   help="family-wise error rate of the verdict (exit 0 agree, 1 disagree, 2 bad input)")
    p.add_argument("--format", choices=FORMATS, default="table")
    _intents_option(p)
    _sessions_option(p)
    _ties_option(p, TIES[:2], "expected: every simulated user draws an order of each tie group, compared "
                              "with the exact expectation over orders (and the closed forms' expectation)")
    _worlds_options(p, seed=False, worlds=False)


def _compare_parser(sub, common) -> None:
    p = sub.add_parser("compare", parents=[common], help="paired significance tests between runs",
                       description="Compare runs pairwise (or against a baseline) on each measure: means, "
                                   "difference with an interval, test statistic, p and adjusted p, effect "
                                   "size; optionally the discriminative power of the measures and what "
                                   "their users experience.")
    p.add_argument("--baseline", help="compare every other run against this one (a run name)")
    p.add_argument("--test", choices=TESTS, default="randomization",
                   help="paired test (default: randomization, Fisher's sign flips)")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="multiple comparisons over each measure's pairs (tukey: randomised Tukey HSD)")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--resamples", "--permutations", type=int, default=10_000, dest="resamples",
                   help="sign flips / bootstrap resamples / Tukey permutations (default 10000)")
    p.add_argument("--interval", choices=INTERVALS, default=None,
                   help="interval of the difference (default: t for the t-test, else bootstrap BCa)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--discriminative-power", action="store_true",
                   help="report each measure's discriminative power (Sakai 2006) over all run pairs (also "
                        "with --baseline, which only chooses the pairs shown)")
    p.add_argument("--users", type=int, default=None,
                   help="add P(a user of B fares better than a user of A); N simulated users per "
                        "ranking where the exact outcome distribution is not finite")
    p.add_argument("--force", action="store_true",
                   help="simulate even when the estimated work exceeds the limit (see rpdi simulate --force)")
    p.add_argument("--convention", choices=CONVENTIONS, default="unknown",
                   help="what a user meets beyond the ranking (for --users)")
    p.add_argument("--plots", metavar="DIR",
                   help="write forest.png (and asl.png; intents.png with --users and an intent-aware measure) into DIR")
    p.add_argument("--format", choices=FORMATS, default="table")
    _intents_option(p)
    _sessions_option(p)
    _ties_option(p, TIES, "expected: the runs compared on each topic's expectation over the orders; range: "
                          "also the lowest and highest mean difference over the orders of both runs")
    _worlds_options(p, seed=False)


def _run_parser(sub) -> None:
    p = sub.add_parser("run", help="run an experiment described in a TOML config",
                       description="Run an experiment config (a path, or the name of a shipped one: "
                                   "validate_core (default), rbp_paper, metric_agreement, template). "
                                   "A config naming a model of one's own (path/to/model.py:Class) "
                                   "EXECUTES PYTHON CODE from that file: run only configs you trust.")
    p.add_argument("config", nargs="?", default="validate_core")
    p.add_argument("--out", help="output directory (default: the config's output.dir, else results/NAME)")
    p.add_argument("--workers", type=int, default=1, help="local worker processes")
    p.add_argument("--scheduler", help="address of a Dask distributed scheduler (rpdi[distributed])")
    p.add_argument("--fresh", action="store_true", help="discard stored task results and start over")
    p.add_argument("--force", action="store_true",
                   help="simulate even when a task's estimated work exceeds the limit (config: force)")


def _properties_parser(sub) -> None:
    p = sub.add_parser("properties", help="decide the seven numeric properties of measures",
                       description="Decide boundedness, monotonicity, convergence, top-weightedness, "
                                   "localization, completeness and realizability (Moffat 2013) by "
                                   "search, with a counterexample for every 'no'.")
    p.add_argument("-m", "--measure", action="append", required=True, dest="measures",
                   help="measure name (its cutoff is the depth studied, default 10), or " + PLUGIN_HELP)
    p.add_argument("--model", action="store_true",
                   help="analyse the browsing model's exact expectation instead of the closed form")
    p.add_argument("--format", choices=["table", "json"], default="table")
    _digits_argument(p)


def _fit_parser(sub) -> None:
    p = sub.add_parser("fit", help="fit browsing models to click logs as click models",
                       description="Fit every browsing model (and the standard click models) to click "
                                   "logs by maximum likelihood and compare them on held-out sessions.")
    p.add_argument("logs", help="click log: the Yandex sample format or a TSV (session query rank docno clicked)")
    p.add_argument("-m", "--model", action="append", dest="models",
                   help="a measure with a browsing model (RBP, INST, ERR, SDCG@10, ...; parameters given "
                        "are held fixed), a click model (CM, PBM, UBM, DCM, DBN, SDBN, CCM, GCTR, RCTR, DCTR) "
                        "or path.py:Class(...); repeatable; default: all metric users and click models")
    p.add_argument("--test", help="held-out click log (default: a random --test-fraction of LOGS)")
    p.add_argument("--test-fraction", type=float, default=0.25)
    p.add_argument("--qrels", help="TREC qrels (topic = query id): one attractiveness per grade")
    p.add_argument("--seed", type=int, default=0, help="seed of the train/test split and of simulated users")
    p.add_argument("--no-stderr", action="store_true", help="skip the standard errors (faster)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="level of the tests between models (Holm over the comparisons with the best) "
                        "and of the intervals (1 - alpha; default 0.05)")
    p.add_argument("--resamples", type=int, default=2000,
                   help="bootstrap resamples of the test sessions (default 2000)")
    p.add_argument("--plot", help="write the perplexity / CTR / last-click figure here (.png or .svg), "
                                  "and beside it NAME_differences and NAME_calibration")
    p.add_argument("--format", choices=FORMATS, default="table")


def _explain_parser(sub) -> None:
    p = sub.add_parser("explain", help="a measure's user in the C/W/L view, on a ranking",
                       description="The user behind a measure in one sentence, its aggregation, and on a "
                                   "ranking: per rank i the probability of reading on C(i), the weight W(i), "
                                   "the probability of stopping L(i) and of reading V(i); the expected depth "
                                   "and the value, by probability propagation.")
    p.add_argument("measure", help="a measure with a browsing model (RBP(p=0.8), AP, ...) or " + PLUGIN_HELP)
    p.add_argument("--ranking", default=TABLE_II_RANKING,
                   help="grades (1,1,0,0,2) or $ relevant, - not relevant, ? unjudged; one that begins "
                        "with - as --ranking=-$-$ (default: the RBP paper's example, Moffat & Zobel "
                        "2008, Table II: %(default)s); for a session measure (sRBP, sDCG) its turns' "
                        "rankings separated by | (default: $-$--|-----|$$---)")
    p.add_argument("--depth", type=int, metavar="N", help="ranks shown (default: the ranking's length)")
    p.add_argument("--intents", metavar="P",
                   help="for a diversity measure (alpha-nDCG@10, ERR-IA@10, any X-IA), whose --ranking gives per "
                        "document the intents it serves (ab,a,-,c,?): P(i|q) as a=0.6,b=0.4 or a file of "
                        "'q subtopic probability' lines (default: the intents equally likely)")
    p.add_argument("--plot", metavar="FILE", help="also plot C, W and L against the rank (.png or .svg)")
    p.add_argument("--format", choices=["table", "json"], default="table")
    _digits_argument(p)


def _models_parser(sub) -> None:
    sub.add_parser("models", help="list the browsing models")


def _measures_parser(sub) -> None:
    sub.add_parser("measures", help="list the closed-form measures and their parameters")


def _config_file_parsers(sub) -> None:
    p = sub.add_parser("init", help="copy the template experiment config out of the package",
                       description="Write the template config (every key, with its default) to PATH, "
                                   "never over an existing file; then edit it and rpdi run PATH.")
    p.add_argument("path", nargs="?", default="experiment.toml", metavar="PATH",
                   help="where to write it (default experiment.toml)")
    sub.add_parser("schema", help="print the JSON Schema of experiment configs (for editors)",
                   description="Print the JSON Schema of experiment configs, generated from their "
                               "models: rpdi schema > config.schema.json, then '#:schema "
                               "./config.schema.json' on a config's first line (taplo, Even Better TOML).")


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked for (importlib.metadata
    would cost every command's start-up)."""

    def __call__(self, parser, namespace, values, option_string=None):
        import rpdi

        print(f"rpdi {rpdi.__version__}")
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="rpdi", description="Effectiveness metrics as explicit stochastic users.")
    parser.add_argument("--version", action=_Version, nargs=0, default=argparse.SUPPRESS,
                        help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    common = _collection_arguments()
    _eval_parser(sub, common)
    _simulate_parser(sub, common)
    _compare_parser(sub, common)
    _run_parser(sub)
    _properties_parser(sub)
    _explain_parser(sub)
    _models_parser(sub)
    _measures_parser(sub)
    _fit_parser(sub)
    _config_file_parsers(sub)
    args = parser.parse_args(argv)
    if args.command == "eval" and "numpy" not in sys.modules:
        # no linear algebra in eval: OpenBLAS, loaded with numpy, would start a thread per core
        # for nothing (30 ms of wall time and 50 ms of CPU time on 2 cores, more on more)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from rpdi.metrics.errors import InputError

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            result = import_module(f"rpdi.experiments.commands.{args.command}").run(args)
        _numeric_warnings(caught)
    except InputError as exc:
        print(f"rpdi {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM during rpdi run (experiment.Terminated)
        finished = "; finished tasks are kept, rerun to resume" if args.command == "run" else ""
        print(f"rpdi {args.command}: {str(exc) or 'interrupted'}{finished}", file=sys.stderr)
        return getattr(exc, "status", 130)
    except ArithmeticError as exc:  # a numeric warning, or an overflow no closer code named
        print(f"rpdi {args.command}: numeric error: {exc}", file=sys.stderr)
        return 1
    except MemoryError as exc:  # what was too big: the message of whoever raised it, else the command
        what = (str(exc).splitlines() or [""])[0] or f"the input or settings of rpdi {args.command}"
        print(f"rpdi {args.command}: out of memory: {what}", file=sys.stderr)
        return 1
    except Exception as exc:  # never a traceback (set RPDI_DEBUG=1 to see one)
        if os.environ.get("RPDI_DEBUG"):
            raise
        if isinstance(exc, OSError) and exc.filename is not None:  # a full disk while writing results
            print(f"rpdi {args.command}: {exc.filename}: {exc.strerror}", file=sys.stderr)
            return 1
        reason = (str(exc).splitlines() or [""])[0]
        print(f"rpdi {args.command}: internal error: {type(exc).__name__}: {reason}", file=sys.stderr)
        return 1
    # rpdi run and rpdi simulate return a Summary: exit status 1 on an undeclared disagreement
    failed = _write_stdout(args.command, str(result))
    sys.stderr.write(getattr(result, "notes", ""))
    return failed or getattr(result, "status", 0)


def _numeric_warnings(caught) -> None:
    """A numeric warning (overflow, NaN, division by zero) means a result may be wrong: none is
    printed then, but one line naming where it happened (set RPDI_DEBUG=1 to see them all)."""
    numeric = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    if numeric:
        w = numeric[0]
        raise ArithmeticError(f"{w.message} ({os.path.basename(w.filename)}:{w.lineno}); no result is given, "
                              f"as it may be wrong")


def _write_stdout(command: str, text: str) -> int:
    """Write the result: a closed pipe (rpdi ... | head) ends quietly, as Unix tools do; any
    other failure (a full disk) is one line naming where the output went, and status 1."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    except BrokenPipeError:
        error = None
    except OSError as exc:
        error = exc.strerror
    where = "standard output"
    with contextlib.suppress(OSError, ValueError):
        fd = sys.stdout.fileno()
        if os.path.exists(f"/proc/self/fd/{fd}"):
            where += f" ({os.path.realpath(f'/proc/self/fd/{fd}')})"
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)  # the interpreter's flush at exit must not fail again
    if error is None:
        return 0
    print(f"rpdi {command}: cannot write the result to {where}: {error}", file=sys.stderr)
    return 1


def entry() -> None:
    """The ``rpdi`` command: :func:`main`, then the process ends at once with its status.

    The interpreter's own teardown is skipped: pyarrow's thread pool, started by a threaded read,
    can abort it ("terminate called without an active exception", status 134; apache/arrow
    #34314) when the process ends soon after the read, as on a bad input found just after the
    qrels were read (seen in about 1 run in 15 on a loaded machine). Everything rpdi writes is
    flushed and closed by then: results atomically, worker pools and Dask clients explicitly.
    ``rpdi eval`` and ``rpdi compare`` first have numpy give no huge-page advice and freed
    memory reused (:func:`experiments.allocator.no_huge_page_advice`,
    :func:`~experiments.allocator.reuse_freed_memory`): for the process, so here, not in
    :func:`main`, which Python code may call."""
    if next((a for a in sys.argv[1:] if not a.startswith("-")), None) in ("eval", "compare"):
        from rpdi.experiments.allocator import no_huge_page_advice, reuse_freed_memory

        no_huge_page_advice()
        reuse_freed_memory()
    try:
        status = main()
    except SystemExit as exc:  # argparse: --help, --version, a bad option
        status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    entry()
