"""A griffe extension for the API reference (mkdocs.yml loads it by path): rpdi's docstrings are
written for ``help()`` and doctest, in reST's inline style; in the site, each doctest example
becomes a code block and reST's roles (``:func:`x```) code spans."""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):`~?([^`]+)`")


def markdown(text: str) -> str:
    r"""``text`` with each run of doctest lines (``>>>`` up to a blank line) fenced as pycon.

    >>> markdown("Use :func:`f`:\n\n>>> f()\n1\n\nDone.").split("\n")
    ['Use `f`:', '', '```pycon', '>>> f()', '1', '```', '', 'Done.']
    """
    out: list[str] = []
    inside = False
    for line in ROLE.sub(r"`\1`", text).split("\n"):
        if not inside and line.lstrip().startswith(">>>"):
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class Docstrings(griffe.Extension):
    def on_object(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
