"""Every command and subcommand (found by walking the click tree, so a new one is covered without an
edit), in every ``--format`` it accepts, on the demo store: on a real pseudo-terminal (the real
entry point in this process, stdout and stdin on one terminal, stderr on another) and on a pipe
(the real entry point, not a terminal). Each ends
with an exit code the exit-code table documents, never 1 (here: 0, every line being valid), and
JSON/JSONL output parses, on the terminal too. Changing commands run with ``--dry-run`` where they
have it, else on a copy of the demo store; a full-screen command (one still running after a quiet
while on the terminal) is sent ``q``. Every documented line runs as the real binary on a terminal
in ``test_terminal_docs.py``."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import click
import pytest

from symfonic_cli.vocabulary import RECORD_FORMATS, option_words
from tests.support.cli import run
from tests.support.terminal import run_on_pty

KEY = "acme:_:s-001"
ROOT = Path(__file__).resolve().parents[2]
ESC = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
# What each command needs besides its format to do its work on the demo store (``{n}``: a name
# unique to the run). A command not named here gets ``--store``, ``--thread`` and ``--dry-run``
# when it has them; one with a required argument not named here fails, asking for its line.
ARGS: dict[tuple[str, ...], list[str]] = {
    ("compat", "report"): ["--store", "demo.db"],
    ("compat", "show"): ["--store", "demo.db", "--thread", KEY],
    ("completion", "install"): ["bash"],
    ("completion", "show"): ["bash"],
    ("demo",): ["new-demo-{n}.db"],
    ("mcp",): ["--store", "demo.db", "--tenant", "acme", "--access-log", "access-{n}.jsonl", "--check"],
    ("migrate",): ["--from", "demo.db", "--to", "moved-{n}.db", "--init-target", "--all", "--dry-run"],
    ("store", "list"): [],
    ("thread", "diff"): ["--store", "demo.db", "--thread", KEY, "-2", "-1"],
    ("thread", "erase"): ["--store", "demo.db", "--thread", KEY, "--dry-run"],
    ("thread", "export"): ["--store", "demo.db", "--thread", KEY, "--output", "export-{n}.zip"],
    ("thread", "prune"): ["--store", "demo.db", "--all", "--keep", "1", "--dry-run"],
    ("thread", "rewind"): ["--store", "demo.db", "--thread", "acme:eu:s-003", "--to", "-2", "--idle-for", "0", "--dry-run"],
    ("threads", "search"): ["--store", "demo.db", "order 1042"],
}


# A full-screen command that needs a terminal: Textual cannot run in this process on the test's
# terminal, so the real binary is driven on a pty by its own test; on a pipe it must refuse (exit 2).
NEEDS_TERMINAL = {("browse",): "tests/browse/test_browse_cli.py::test_the_real_binary_on_a_terminal"}


def commands() -> list[tuple[tuple[str, ...], click.Command]]:
    from symfonic_cli.cli.app import _command_tree

    found = []

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(command, click.Group):
            for name, sub in sorted(command.commands.items()):
                walk(sub, (*path, name))
        else:
            found.append((path, command))

    walk(_command_tree(None, False), ())
    return found


def formats(path: tuple[str, ...], command: click.Command) -> list[str | None]:
    has_format = any("--format" in getattr(p, "opts", ()) for p in command.params)
    return list(option_words(path, "--format")) if has_format else [None]  # csv on the record commands


def arguments(path: tuple[str, ...], command: click.Command) -> list[str]:
    if path in ARGS:
        return list(ARGS[path])
    options = {o for p in command.params for o in getattr(p, "opts", ())}
    required = [p.name for p in command.params if isinstance(p, click.Argument) and p.required]
    assert not required, f"{' '.join(path)}: add the arguments it needs on the demo store to ARGS ({required})"
    found = [o for o in ("--store", "--thread") if o in options]
    return [w for o in found for w in (o, "demo.db" if o == "--store" else KEY)] + (["--dry-run"] if "--dry-run" in options else [])


def matrix() -> list[list[str]]:
    lines = []
    for path, command in commands():
        for fmt in formats(path, command):
            words = [*path, *arguments(path, command)] + (["--format", fmt] if fmt else [])
            lines.append([w.replace("{n}", f"{'-'.join(path)}-{fmt}") for w in words])
    return lines


def documented_codes() -> set[int]:
    table = (ROOT / "docs" / "reference" / "exit-codes.md").read_text(encoding="utf-8")
    return {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)}


def _parses(fmt: str | None, out: str) -> str | None:
    """Why ``out`` is not the format's output, or None."""
    try:
        if fmt == "json":
            json.loads(out)
        elif fmt == "jsonl":  # no line at all is no record (store list without a configuration)
            for line in out.splitlines():
                if line.strip():
                    json.loads(line)
        elif fmt == "csv" and out:  # RFC 4180: a header row, every record as wide
            rows = list(csv.reader(io.StringIO(out, newline=""), strict=True))
            if not rows or any(len(r) != len(rows[0]) for r in rows):
                return f"ragged CSV: {out[:400]!r}"
    except (ValueError, csv.Error) as exc:
        return f"{exc}: {out[:400]!r}"
    return None


def _format_of(words: list[str]) -> str | None:
    return words[words.index("--format") + 1] if "--format" in words else None


@pytest.fixture(scope="module")
def demo_store(demo_master) -> Path:  # each test copies it
    return demo_master


def _folder(tmp_path: Path, demo_store: Path) -> Path:
    folder = tmp_path / "run"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    shutil.copyfile(demo_store, folder / "demo.db")
    return folder


def test_the_walk_finds_every_group_and_format():
    found = {path: formats(path, command) for path, command in commands()}
    assert ("threads", "search") in found and ("thread", "erase") in found and ("demo",) in found
    assert found[("threads", "list")] == list(RECORD_FORMATS) and found[("demo",)] == [None]
    assert len(matrix()) >= 50
    assert {0, 1, 2, 3, 4, 5, 130, 141} <= documented_codes()


def test_every_command_and_format_on_a_terminal(tmp_path, demo_store, monkeypatch):
    folder = _folder(tmp_path, demo_store)
    monkeypatch.chdir(folder)
    codes = documented_codes()
    failures = []
    for words in matrix():
        if tuple(words[:1]) in NEEDS_TERMINAL:
            continue
        code, out, err, sent_q = run_on_pty(*words, cols=100, env={"HOME": str(tmp_path / "home"), "PAGER": "cat -"})
        if code not in codes or code != 0:
            failures.append(f"{words}: exit {code}: {err[-400:]!r}")
        if "Traceback" in err + out or "unexpected" in err:
            failures.append(f"{words}: an error: {err[-400:]!r}")
        if not sent_q:  # a full-screen view draws, it writes no document
            why = _parses(_format_of(words), ESC.sub("", out))
            if why:
                failures.append(f"{words}: {why}")
    assert failures == []


def test_every_command_and_format_on_a_pipe(tmp_path, demo_store, monkeypatch):
    folder = _folder(tmp_path, demo_store)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    codes = documented_codes()
    failures = []
    for words in matrix():
        done = run(*words)
        if tuple(words[:1]) in NEEDS_TERMINAL:
            if done.code != 2 or done.out or len(done.err.strip().splitlines()) != 1:
                failures.append(f"{words}: on a pipe: exit {done.code}, {done.out[:200]!r}, {done.err[-400:]!r}")
            continue
        if done.code not in codes or done.code != 0:
            failures.append(f"{words}: exit {done.code}: {done.err[-400:]!r}")
        why = _parses(_format_of(words), done.out)
        if why:
            failures.append(f"{words}: {why}")
        if "\x1b" in done.out:
            failures.append(f"{words}: an escape sequence on a pipe")
    assert failures == []

