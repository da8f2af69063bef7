"""Every byte through the Environment (issue #22 item 1), httpie's model.

``main(argv, environment=...)`` writes every command's output and errors to the Environment's
streams: here the process's own sys.stdout/sys.stderr refuse every write, so a byte sent there
fails the test. The pager wraps the Environment's stdout (``compat show`` pages), and outside the
boundary (cli/app.py) and the completion protocol no module names sys.stdout, sys.stderr or print.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from unittest import mock

import pytest

from tests.support.environment import MockEnvironment, run_in
from tests.support.terminal import on_terminal

KEY = "acme:_:s-001"
PACKAGE = Path(__file__).resolve().parents[2] / "symfonic_cli"


class Refusing:
    """sys.stdout/sys.stderr for the test: any write is a byte that missed the Environment."""

    def __init__(self, name: str) -> None:
        self.name = name

    def write(self, text: str) -> int:
        raise AssertionError(f"wrote to sys.{self.name}: {text[:200]!r}")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError("no file")


def _commands(store: str) -> list[tuple[list[str], str]]:
    """(argv, a text the output must hold) for every command that prints."""
    s = ["--store", store]
    return [
        (["threads", "list", *s], KEY),
        (["threads", "list", *s, "--status", "done", "--with-size"], KEY),
        (["threads", "list", *s, "--tenant", "nobody"], ""),  # an empty listing: its header, or []
        (["store", "info", *s], "checkpoints"),
        (["store", "list"], "name"),
        (["transcript", "show", *s, "-t", KEY], "Thanks!"),
        (["thread", "show", *s, "-t", KEY], "status"),
        (["thread", "history", *s, "-t", KEY], "checkpoint"),
        (["thread", "diff", *s, "-t", KEY, "--", "-2", "-1"], "from"),
        (["compat", "report", *s], "checkpoints"),
        (["compat", "report", *s, "--by-thread"], KEY),
        (["compat", "show", *s, "-t", KEY], "checkpoint"),
        (["thread", "erase", *s, "-t", KEY, "--dry-run"], "erase plan"),
        (["completion", "show", "bash"], "complete"),
        (["--help"], "Usage"),
        (["thread"], "Usage"),  # a bare group: its help
    ]


def _run_guarded(*args: str, env: MockEnvironment, environ=None):
    with mock.patch.object(sys, "stdout", Refusing("stdout")), mock.patch.object(sys, "stderr", Refusing("stderr")):
        return run_in(*args, env=env, environ=environ)


@pytest.mark.parametrize("fmt", [None, "text", "json"])
def test_every_command_writes_to_the_environment(sqlite_master, tmp_path, fmt):
    config = tmp_path / "config.toml"
    config.write_text(f"[stores.demo]\nurl = {json.dumps(str(sqlite_master))}\n")
    for args, expected in _commands(str(sqlite_master)):
        if fmt is not None and args[0] not in ("completion", "--help") and args != ["thread"]:
            if args[:2] == ["thread", "erase"] and fmt == "json":
                continue  # erase's JSON plan: tests/erase/test_erase.py
            args = [*args[:2], "--format", fmt, *args[2:]]
        r = _run_guarded(*args, env=MockEnvironment(), environ={"SYMFONIC_CONFIG": str(config)})
        assert r.code == 0, (args, r.err)
        assert r.out and expected in r.out, (args, r.out[:500])
        if fmt == "json" and args[0] not in ("completion", "--help") and args != ["thread"]:
            json.loads(r.out)  # one whole document, in the Environment's stdout


def test_errors_and_warnings_go_to_the_environments_stderr(sqlite_master):
    for args in (["thread", "show", "--store", str(sqlite_master), "-t", "acme:_:nope"],
                 ["threads", "list", "--store", str(sqlite_master), "--format", "nope"],
                 ["threads", "frobnicate"],
                 ["--tz", "+25:00", "threads", "list", "--store", str(sqlite_master)]):
        r = _run_guarded(*args, env=MockEnvironment())
        assert r.code in (2, 3), (args, r.err)
        assert r.err.startswith("symfonic: error: ") and r.out == "", (args, r.err)


def test_the_environments_terminal_decides_the_format(sqlite_master):
    """A stdout that is a terminal gets a table, one that is not gets text: the Environment's, not
    the process's (which here is neither)."""
    piped = _run_guarded("threads", "list", "--store", str(sqlite_master), env=MockEnvironment())
    assert piped.out.startswith("key\tstatus\tcheckpoints\tlast_activity\n")  # the table's columns, tab-separated
    screen = _run_guarded("threads", "list", "--store", str(sqlite_master), "--no-pager",
                          env=MockEnvironment(stdout_isatty=True), environ={"NO_COLOR": "1"})
    assert "key" in screen.out and "\t" not in screen.out and screen.code == 0


def test_an_empty_listing_is_said_on_the_environments_terminal(sqlite_master):
    r = _run_guarded("threads", "list", "--store", str(sqlite_master), "--tenant", "nobody",
                     env=MockEnvironment(stderr_isatty=True))
    assert r.code == 0 and "no threads match (--tenant 'nobody')" in r.err


@pytest.mark.parametrize("args", [
    ("compat", "show", "-t", KEY),
    ("compat", "report", "--by-thread"),
    ("thread", "history", "-t", KEY),
])
def test_reports_taller_than_the_screen_are_paged(sqlite_master, tmp_path, args):
    """compat show and compat report --by-thread wrote to the stdout captured before the pager
    held it, and scrolled past the terminal."""
    log = tmp_path / "paged.log"
    fake = tmp_path / "pager.sh"
    fake.write_text(f"#!/bin/sh\ncat > {log}\n")
    fake.chmod(0o755)
    code, screen = on_terminal(args[0], args[1], "--store", str(sqlite_master), *args[2:], cols=120, rows=5, env={"PAGER": str(fake)})
    assert code == 0, screen
    assert log.exists() and log.read_text().count("\n") >= 5, screen
    assert log.read_text().strip() and log.read_text().strip()[:40] not in screen


# Where the process's streams may be named: the boundary, the Environment's defaults, and the
# completion protocol (a TAB's answer, and the script writer run as python -m).
_ALLOWED = {"cli/app.py", "environment.py", "complete.py", "completions.py"}


def test_nothing_else_names_sys_stdout_sys_stderr_or_print():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in _ALLOWED:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sys" \
                    and node.attr in ("stdout", "stderr", "__stdout__", "__stderr__"):
                found.append(f"{rel}:{node.lineno} sys.{node.attr}")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                found.append(f"{rel}:{node.lineno} print()")
            elif isinstance(node, ast.ImportFrom) and node.module == "sys" and any(a.name in ("stdout", "stderr") for a in node.names):
                found.append(f"{rel}:{node.lineno} from sys import")
    assert found == []


def test_no_global_environment():
    import symfonic_cli.environment as environment

    assert not hasattr(environment, "current") and not hasattr(environment, "activate")
    for path in PACKAGE.rglob("*.py"):
        assert "environment import current" not in path.read_text(encoding="utf-8"), path
