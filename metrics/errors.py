"""The one error rpdi raises for a user's mistake.

Every bad input (a malformed line, a duplicate document, an unknown measure or option, a bad
config key, a model of one's own that breaks its contract) raises :class:`InputError` with a
one-line message naming the file and line, the measure, the key or the option at fault. The
``rpdi`` command prints that line and exits with status 2; anything else is an internal error.
"""


class InputError(ValueError):
    """Bad input: the message is one line naming the file, line, key or measure at fault."""
