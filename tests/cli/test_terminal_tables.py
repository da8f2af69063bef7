"""At the terminal (issue #15): identifiers whole at 80 and 120 columns, a record layout when a row
cannot fit, no escape sequence under NO_COLOR or --color never, and a pager only for tall output
on a terminal. Every test runs the real binary on a pseudo-terminal and reads the screen."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run, run_process
from tests.support.terminal import on_terminal

ESC = "\x1b"
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _screen_lines(screen: str) -> list[str]:
    return re.sub(r"\x1b\[[0-9;]*m", "", screen).splitlines()


def _whole_on_a_line(screen: str, values) -> None:
    lines = _screen_lines(screen)
    for value in values:
        assert any(value in line for line in lines), (value, screen)


@pytest.mark.parametrize("cols", [80, 120])
def test_threads_list_keeps_keys_and_times_whole(any_kind, cols):
    url = any_kind.new_store()
    listed = json.loads(run("threads", "list", "-s", url, "-f", "json").out)
    # Tables show ages unless --absolute-time (issue #37); with it, the instants are whole.
    code, screen = on_terminal("threads", "list", "-s", url, "--no-pager", "--absolute-time", cols=cols, rows=500)
    assert code == 0, screen
    _whole_on_a_line(screen, [r["key"] for r in listed])
    _whole_on_a_line(screen, [r["last_activity"] for r in listed])
    assert all(ISO_Z.match(r["last_activity"]) for r in listed)
    # No folded header: every header word is whole on the screen; the default table fits (issue #25).
    _whole_on_a_line(screen, ["checkpoints", "last activity"])
    assert max(len(line) for line in _screen_lines(screen)) <= cols and "RECORD" not in screen
    # Every column asked for: a table when it fits, records when not, never a folded id or time.
    every = "key,tenant,sub_tenant,session,checkpoints,first_activity,last_activity"
    code, screen = on_terminal("threads", "list", "-s", url, "--no-pager", "--absolute-time", "--columns", every, cols=cols, rows=500)
    assert code == 0, screen
    _whole_on_a_line(screen, [r["key"] for r in listed] + [r["first_activity"] for r in listed])
    _whole_on_a_line(screen, ["sub-tenant", "first activity", "last activity"])
    assert max(len(line) for line in _screen_lines(screen)) <= cols or "RECORD" in screen


@pytest.mark.parametrize("cols", [80, 120])
def test_compat_and_transcript_keep_ids_whole(sqlite_master, cols):
    key = "acme:_:s-001"
    verdicts = json.loads(run("compat", "show", "-s", str(sqlite_master), "--thread", key, "-f", "json").out)
    code, screen = on_terminal("compat", "show", "-s", str(sqlite_master), "--thread", key, "--no-pager", "--absolute-time", cols=cols, rows=900)
    assert code == 0, screen
    _whole_on_a_line(screen, [v["checkpoint_id"] for v in verdicts] + [v["ts"] for v in verdicts if v["ts"]])
    rows = json.loads(run("transcript", "show", "-s", str(sqlite_master), "--thread", key, "-f", "json").out)
    code, screen = on_terminal("transcript", "show", "-s", str(sqlite_master), "--thread", key, "--no-pager", "--absolute-time", cols=cols, rows=900)
    assert code == 0, screen
    stamps = [r["timestamp"] for r in rows if r["timestamp"]]
    assert stamps and all(ISO_Z.match(s) for s in stamps)
    _whole_on_a_line(screen, stamps)


def test_erase_dry_run_keeps_key_whole(sqlite_store):
    for cols in (80, 120):
        code, screen = on_terminal("thread", "erase", "-s", str(sqlite_store), "--thread", "acme:eu:s-002", "--dry-run", cols=cols)
        assert code == 0, screen
        _whole_on_a_line(screen, ["acme:eu:s-002"])


def test_narrow_terminal_gets_records_not_folded_ids(sqlite_master):
    code, screen = on_terminal("threads", "list", "-s", str(sqlite_master), "--no-pager", cols=40, rows=500)
    assert code == 0
    lines = _screen_lines(screen)
    assert any(line.startswith("-[ RECORD 1 ]") for line in lines)
    keys = [r["key"] for r in json.loads(run("threads", "list", "-s", str(sqlite_master), "-f", "json").out)]
    for k in keys:
        assert f"key:           {k}" in lines  # labels as wide as "last activity" and "checkpoints"


def test_no_color_means_no_escape_at_all(sqlite_master):
    args = ("threads", "list", "-s", str(sqlite_master), "--no-pager")
    code, coloured = on_terminal(*args, cols=200)
    assert code == 0 and ESC in coloured  # the header is bold on a terminal
    for env, extra in (({"NO_COLOR": "1"}, ()), ({"NO_COLOR": ""}, ()), ({}, ("--color", "never"))):
        code, screen = on_terminal(*extra, *args, cols=200, env=env)
        assert code == 0 and ESC not in screen and "acme:eu:s-002" in screen
    code, dumb = on_terminal(*args, cols=200, env={"TERM": "dumb"})
    assert code == 0 and ESC not in dumb
    # Off a terminal: never styles unless asked; --color always wins over a pipe, NO_COLOR over it.
    assert ESC not in run_process(*args, "-f", "table").out
    assert ESC in run_process("--color", "always", *args, "-f", "table").out
    assert ESC not in run_process("--color", "always", *args, "-f", "table", env={"NO_COLOR": "1"}).out
    assert run_process("--color", "sometimes", *args).code == 2


def _fake_pager(tmp_path):
    record = tmp_path / "paged.txt"
    script = tmp_path / "pager.sh"
    script.write_text(f"#!/bin/sh\ncat > '{record}'\n")
    script.chmod(0o755)
    return str(script), record


def test_pager_only_for_tall_output_on_a_terminal(sqlite_master, tmp_path):
    pager, record = _fake_pager(tmp_path)
    args = ("transcript", "show", "-s", str(sqlite_master), "--thread", "acme:_:s-001")
    # Taller than the screen: the pager gets it all, the screen none of it.
    code, screen = on_terminal(*args, cols=120, rows=10, env={"PAGER": pager})
    assert code == 0, screen
    paged = record.read_text()
    assert "acme:_:s-001" in paged and "order 1042" in paged
    assert "order 1042" not in screen
    record.unlink()
    # SYMFONIC_PAGER wins over PAGER.
    other, other_record = _fake_pager(tmp_path / "x") if (tmp_path / "x").mkdir() is None else None
    code, screen = on_terminal(*args, cols=120, rows=10, env={"PAGER": pager, "SYMFONIC_PAGER": other})
    assert code == 0 and other_record.exists() and not record.exists()
    # Fits the screen: no pager.
    code, screen = on_terminal(*args, cols=120, rows=500, env={"PAGER": pager})
    assert code == 0 and not record.exists() and "order 1042" in screen
    # --no-pager, before or after the command.
    for argv in (("--no-pager", *args), (*args, "--no-pager")):
        code, screen = on_terminal(*argv, cols=120, rows=10, env={"PAGER": pager})
        assert code == 0 and not record.exists() and "order 1042" in screen, screen
    # Not a terminal: never.
    res = run_process(*args, "-f", "table", env={"PAGER": pager, "LINES": "5"})
    assert res.code == 0 and not record.exists() and "order 1042" in res.out


def test_pager_missing_falls_back_to_the_screen(sqlite_master):
    code, screen = on_terminal("transcript", "show", "-s", str(sqlite_master), "--thread", "acme:_:s-001",
                               cols=120, rows=10, env={"PAGER": "/nonexistent/pager"})
    assert code == 0 and "order 1042" in screen
