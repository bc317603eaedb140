"""The documentation site: it builds offline with warnings as errors (``mkdocs build --strict``),
and every example in ``docs/`` and the README runs, as a reader would run it: a page's blocks in
page order, shell and python interleaved, in one fresh folder.

- ```python blocks run in one interpreter per page (one namespace), started at the page's first
  python block; ```pycon blocks are doctests in the same namespace, their printed output checked;
- ```console blocks: each ``$ `` line (with its ``\\`` continuation lines) runs in bash and must
  exit 0; the lines shown after it, if any, are its standard output (trailing spaces aside; a line
  ``...`` stands for any number of lines);
- ```sh blocks run whole in bash and must exit 0;
- ```text, ```toml, ```json and ```yaml blocks are shown, not run: a command in a text block is a
  synopsis, with its options in brackets.

They run in a fresh folder that sees the repository's ``tests``, ``usermodels`` and
``experiments`` folders (the docs' paths are the repository root's), with ``$QRELS``, ``$RUNS``
and ``$UNCERTAIN`` set as the docs' home page says.
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rpdi.experiments.bundled import CAST2021_QRELS, CAST2021_UNCERTAIN_QRELS, cast2021_runs

ROOT = Path(__file__).parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
SHOWN = {"text", "toml", "json", "yaml"}
ENV = {"QRELS": CAST2021_QRELS, "RUNS": os.path.dirname(cast2021_runs()[0]), "UNCERTAIN": CAST2021_UNCERTAIN_QRELS,
       "COLUMNS": "200"}


def _blocks(page: Path) -> list[tuple[str, str, int]]:
    text = page.read_text()
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def _commands(body: str) -> list[tuple[str, list[str]]]:
    """A console block's ``$`` commands, each with the output lines shown after it."""
    commands: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    while lines:
        line = lines.pop(0)
        assert line.startswith("$ "), f"a console block's line before any '$ ' command: {line!r}"
        command = line[2:]
        while command.endswith("\\"):
            command = command[:-1] + " " + lines.pop(0).strip()
        shown = []
        while lines and not lines[0].startswith("$ "):
            shown.append(lines.pop(0).rstrip())
        while shown and not shown[-1]:
            shown.pop()
        commands.append((command, shown))
    return commands


def _items():
    """One item per page: its blocks that run, in page order."""
    for page in PAGES:
        name = page.relative_to(ROOT).as_posix()
        blocks = [block for block in _blocks(page) if block[0] in ("console", "sh", "python", "pycon")]
        if blocks:
            yield pytest.param(name, blocks, id=name)


def test_every_block_says_what_it_is():
    unknown = [f"{page.name}:{line}: {lang!r}" for page in PAGES for lang, _, line in _blocks(page)
               if lang not in SHOWN | {"python", "pycon", "console", "sh"}]
    assert not unknown, "blocks neither run nor shown: " + ", ".join(unknown)
    commands = [f"{page.name}:{line}: {command}" for page in PAGES for lang, body, line in _blocks(page) if lang == "text"
                for command in body.splitlines() if re.match(r"(\$ )?rpdi ", command) and "[" not in command]
    assert not commands, "commands shown but not run (a synopsis shows its options in brackets): " + ", ".join(commands)


@pytest.fixture
def place(tmp_path):
    for folder in ("tests", "usermodels", "experiments"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    return tmp_path


def _matches(shown: list[str], actual: list[str]) -> bool:
    """``shown`` equals ``actual``, a line ``...`` matching any number of lines."""
    if not shown:
        return not actual
    if shown[0] == "...":
        return any(_matches(shown[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and shown[0] == actual[0] and _matches(shown[1:], actual[1:])


def _bash(script: str, cwd: Path) -> subprocess.CompletedProcess:
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **ENV, "PATH": path})


@pytest.mark.parametrize("page, blocks", list(_items()))
def test_every_example_in_the_docs_runs(page, blocks, place, tmp_path_factory):
    python = _Python(place, tmp_path_factory.mktemp("stderr") / "python.err")
    try:
        for lang, body, line in blocks:
            if lang == "sh":
                _check(f"{page}:{line}", body, [], place)
            elif lang == "console":
                for command, shown in _commands(body):
                    _check(f"{page}:{line}: {command}", command, shown, place)
            else:
                python.run(lang, body, f"{page}:{line}", line)
    finally:
        python.close()


def _check(where: str, script: str, shown: list[str], place: Path) -> None:
    done = _bash(script, place)
    assert done.returncode == 0, f"{where}: exit {done.returncode}\n{done.stderr}"
    if shown:
        actual = [line.rstrip() for line in done.stdout.rstrip("\n").splitlines()]
        assert _matches(shown, actual), f"{where}: the docs show:\n" + "\n".join(shown) \
            + "\n\nthe command printed:\n" + "\n".join(actual)


DONE = "\0block done: "  # the driver's answer after each block: the failure (JSON), "" if none
# a page's python and pycon blocks, run in a process of their own (a block may register a measure),
# one block per line of its standard input
DRIVER = """
import contextlib, doctest, io, json, sys, traceback
namespace = {"__name__": "__main__"}
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
for message in sys.stdin:
    lang, body, where, line = json.loads(message)
    failure = ""
    try:
        if lang == "python":
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(body, where, "exec"), namespace)
        else:
            report = io.StringIO()
            test = doctest.DocTestParser().get_doctest(body, namespace, where, where, line)
            if runner.run(test, out=report.write, clear_globs=False).failed:
                failure = report.getvalue()
    except (Exception, SystemExit):
        failure = traceback.format_exc()
    print(%r + json.dumps(failure), flush=True)
""" % DONE


BLOCK_SECONDS = 300  # a python block that takes longer fails the page


class _Python:
    """The interpreter of a page's python blocks, started at the first one."""

    def __init__(self, place: Path, errors: Path):
        self.place, self.errors, self.process = place, errors, None

    def run(self, lang: str, body: str, where: str, line: int) -> None:
        if self.process is None:
            self.process = subprocess.Popen([sys.executable, "-c", DRIVER], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=self.errors.open("w"), text=True,
                                            cwd=self.place, env={**os.environ, **ENV})
        self.process.stdin.write(json.dumps([lang, body, where, line]) + "\n")
        self.process.stdin.flush()
        watchdog = threading.Timer(BLOCK_SECONDS, self.process.kill)  # a hung block ends the interpreter
        watchdog.start()
        try:
            for answer in self.process.stdout:  # lines a block's subprocesses print, then the answer
                if answer.startswith(DONE):
                    failure = json.loads(answer[len(DONE):])
                    assert not failure, f"{where}:\n{failure}"
                    return
        finally:
            watchdog.cancel()
        raise AssertionError(f"{where}: python ended (or ran over {BLOCK_SECONDS} s)\n{self.errors.read_text()}")

    def close(self) -> None:
        if self.process is not None:
            self.process.stdin.close()
            if self.process.wait(timeout=60):
                raise AssertionError(f"python ended with status {self.process.returncode}\n{self.errors.read_text()}")


def test_the_reference_fences_the_docstrings_doctests():
    """docs/_ext/docstrings.py, the griffe extension of the API reference, by its own doctest."""
    spec = importlib.util.spec_from_file_location("docstrings", ROOT / "docs" / "_ext" / "docstrings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert doctest.testmod(module).failed == 0


def test_the_site_builds_offline_with_warnings_as_errors(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr
    assert (tmp_path / "site" / "reference" / "rpdi" / "index.html").exists()
