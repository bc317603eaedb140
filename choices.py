"""The named values rpdi's options take, written once: the command line's ``choices``, the
experiment configs' ``Literal`` types and the functions' own checks all come from here.

It imports nothing, so that every layer can use it and the ``rpdi`` command's start-up (``rpdi
--help``) stays short.
"""

TOPICS = ("qrels", "intersection")  # a run's mean over all qrels topics, or those it retrieved for
COMPAT = ("trec_eval", "pytrec_eval")  # trec_eval 10.0's numbers, or pytrec_eval's (9.x)
UNDEFINED = ("zero", "null")  # a value undefined for a topic (R = 0) reported as 0 or as null
AVERAGES = ("macro", "micro")  # mean of per-topic values, or the pooled ratio
CONVENTIONS = ("unknown", "nonrelevant", "stop")  # what a user meets beyond the ranking
TIES = ("trec_eval", "expected", "range")  # tied scores: docno order, expectation or range over orders
ENGINES = ("vector", "agent")  # the simulation engines: vectorised lockstep numpy, simpy agents
TESTS = ("t", "wilcoxon", "randomization", "bootstrap")  # paired significance tests
CORRECTIONS = ("holm", "bonferroni", "tukey", "none")  # multiple comparisons over a measure's pairs
INTERVALS = ("t", "percentile", "bca")  # interval of a difference between two runs' means
FORMATS = ("table", "csv", "json")  # what the commands print
# the RBP paper's example ranking ($ relevant, - not): Moffat & Zobel (2008), Table II; the
# default ranking of rpdi explain and the ranking of the rbp_paper experiment's worked example
TABLE_II_RANKING = "$$---$----$-----$---"
