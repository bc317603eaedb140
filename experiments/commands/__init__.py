"""The work of each ``rpdi`` command, one module per command (``rpdi eval`` is :mod:`.eval`), each
with ``run(args)``: the command line's parsed arguments in, the text for standard output back
(a :class:`rpdi.experiments.report.Summary` where the exit status depends on a verdict)."""
