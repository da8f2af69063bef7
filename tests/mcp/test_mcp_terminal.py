"""``symfonic mcp`` where a person sees it: its help and its refusals on a pseudo-terminal at 80
and 120 columns, with and without colour; run by hand on a terminal it says it waits for a client,
and Ctrl-C stops it (exit 130) with nothing half-written."""

from __future__ import annotations

import json
import sys

import pytest

from tests.support.terminal import Session, on_terminal


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("no_color", [False, True])
def test_help_check_and_refusals_fit_the_terminal(cols, no_color, sqlite_store, tmp_path):
    env = {"NO_COLOR": "1"} if no_color else {}
    log = tmp_path / "a folder with spaces" / "access.jsonl"
    code, screen = on_terminal("mcp", "-s", str(sqlite_store), "--tenant", "acme", "--check", "--access-log", str(log),
                               cols=cols, rows=60, env=env)
    assert code == 0 and "Traceback" not in screen
    assert all(len(line) <= cols for line in screen.splitlines()), screen
    words = " ".join(screen.split())
    assert "scope: acme (" in words and "transport: stdio" in words and "(0600, one line per tool call)" in words
    assert str(log) in screen.replace("\n", "")  # whole: broken only where wider than the line
    assert "tools: list_threads, search_messages, get_transcript, get_thread_state, get_history, diff_checkpoints, " \
           "compat_report, store_usage (read-only)" in words
    code, screen = on_terminal("mcp", "--help", cols=cols, rows=200, env=env)
    assert code == 0 and "--all-tenants" in screen and "--access-log" in screen
    assert all(len(line) <= cols for line in screen.splitlines()), screen
    if no_color:
        assert "\x1b" not in screen
    for args, words in ((("mcp", "-s", str(sqlite_store)), "no tenant granted"),
                        (("mcp", "-s", str(sqlite_store), "--tenant", "acme", "--http", "10.0.0.1:80"), "only a loopback address")):
        code, screen = on_terminal(*args, cols=cols, env=env)
        assert code == 2 and words in screen and "Traceback" not in screen
        assert screen.strip().startswith("symfonic: error:")
        if no_color:
            assert "\x1b" not in screen


@pytest.mark.parametrize("cols", [80, 120])
def test_by_hand_on_a_terminal_it_waits_and_ctrl_c_stops_it(cols, sqlite_store, tmp_path):
    log = tmp_path / "access.jsonl"
    argv = [sys.executable, "-m", "symfonic_cli", "mcp", "-s", str(sqlite_store), "--tenant", "acme", "--access-log", str(log)]
    with Session(argv, cols=cols) as term:
        term.read_until("Ctrl-C stops", timeout=30)
        assert "waiting for an MCP client" in term.screen
        term.send(b"\x03")  # Ctrl-C typed on its terminal: SIGINT to the foreground process group
        assert term.wait(timeout=20) == 130
        # Its last line may reach the terminal after the exit (the tty layer delivers it later
        # under load): read until nothing more comes for half a second.
        text = term.settle(quiet=0.5, timeout=10)
        assert term.left_running() == [] and term.modes_restored()
    assert "stopped (interrupted)" in text and "Traceback" not in text
    assert log.exists() and all(json.loads(line) for line in log.read_text().splitlines())
