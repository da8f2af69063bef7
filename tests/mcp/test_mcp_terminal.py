"""``symfonic mcp`` where a person sees it: its help and its refusals on a pseudo-terminal at 80
and 120 columns, with and without colour; run by hand on a terminal it says it waits for a client,
and Ctrl-C stops it (exit 130) with nothing half-written."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time

import pytest

from tests.support.terminal import on_terminal


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("no_color", [False, True])
def test_help_and_refusals_fit_the_terminal(cols, no_color, sqlite_store):
    env = {"NO_COLOR": "1"} if no_color else {}
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


def test_by_hand_on_a_terminal_it_waits_and_ctrl_c_stops_it(sqlite_store, tmp_path):
    log = tmp_path / "access.jsonl"
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", "mcp", "-s", str(sqlite_store), "--tenant", "acme",
                             "--access-log", str(log)], stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 30
        while b"Ctrl-C stops" not in seen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.2)[0]:
                seen += os.read(master, 65536)
        assert b"waiting for an MCP client" in seen, seen
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
        while select.select([master], [], [], 0.5)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    text = seen.decode("utf-8", "replace")
    assert "stopped (interrupted)" in text and "Traceback" not in text
    assert log.exists() and all(json.loads(line) for line in log.read_text().splitlines())
