"""Ctrl-C during a long command ends it the same way on both routes (the quick route of
``threads list``, typer's of ``transcript show``): exit 130, one line ``symfonic: error:
interrupted`` on a line of its own, no traceback, the terminal's modes and style given back.
Typer made it a silent exit 130 (and end of input "aborted", exit 1); the held output's write to
the terminal (``--no-pager``) ended in a traceback on both routes."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import subprocess
import termios
import time

import pytest

from symfonic_cli import errors
from tests.cli.test_terminal_defects import LONG, SYMFONIC, big_store  # noqa: F401  (a module-scoped fixture)
from tests.support.terminal import Session, read_chunk

LINE = "symfonic: error: interrupted"
QUICK = ("threads", "list")
TYPER = ("transcript", "show", "--thread", LONG)


def _blocked(pid: int, timeout: float = 20) -> None:
    """Until the process sleeps in a write the reader does not take (the terminal or pipe is full)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state == "S":
            time.sleep(0.3)  # still asleep a moment later: blocked, not between two reads
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "S":
                    return
        time.sleep(0.05)
    raise AssertionError("the command never blocked in a write")


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("no_color", [False, True])
@pytest.mark.parametrize("command", [QUICK, TYPER], ids=["quick", "typer"])
def test_ctrl_c_while_writing_to_the_terminal(big_store, command, cols, no_color):  # noqa: F811
    env: dict[str, str | None] = {"NO_COLOR": "1"} if no_color else {}
    argv = [*SYMFONIC, *command[:2], "--store", str(big_store), *command[2:], "--no-pager"]
    with Session(argv, cols=cols, rows=24, env=env) as s:
        s.read_until("acme:" if command == QUICK else "long question 0")
        _blocked(s.proc.pid)  # the screen is not read on: its writes wait for the terminal
        assert s.running(), s.screen[-500:]
        s.send(b"\x03")
        code = s.wait()
        screen = s.screen
        assert code == errors.EXIT_INTERRUPTED, screen[-2000:]
        assert "Traceback" not in screen and screen.count(LINE) == 1, screen[-2000:]
        after = screen.rsplit("^C", 1)[1]  # what follows the terminal's echo of Ctrl-C
        assert after == ("\n" if no_color else "\x1b[0m\n") + LINE + "\n", repr(after)
        assert s.modes_restored() and s.left_running() == []


def _into_a_full_pipe(argv: list[str]) -> tuple[int, str]:
    """``argv`` with stdout into a pipe no one reads and stderr, stdin on a terminal that is its
    controlling terminal; Ctrl-C typed there once it blocks, the pipe never read again: (exit code,
    the terminal's text). It ended only once its reader read on (a flush after the interruption)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(2, termios.TIOCSCTTY, 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # as a person's shell gives it

    r, w = os.pipe()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "SYMFONIC_PAGER", "PAGER")}
    environ["TERM"] = "xterm-256color"
    proc = subprocess.Popen(argv, stdin=slave, stdout=w, stderr=slave, env=environ, preexec_fn=controlling_terminal)
    os.close(slave)
    os.close(w)
    try:
        assert os.read(r, 100)  # it began writing
        _blocked(proc.pid)
        assert proc.poll() is None
        os.write(master, b"\x03")
        # The pipe is never read again: the command ends without waiting for its reader.
        code = proc.wait(timeout=30)
        seen = b""
        while chunk := read_chunk(master, 0.2):
            seen += chunk
        return code, seen.decode("utf-8", "replace").replace("\r\n", "\n")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(r)


@pytest.mark.parametrize("command", [(*QUICK, "-f", "json"), TYPER], ids=["quick", "typer"])
def test_ctrl_c_while_writing_to_a_pipe(big_store, command):  # noqa: F811
    code, terminal = _into_a_full_pipe([*SYMFONIC, *command[:2], "--store", str(big_store), *command[2:]])
    assert code == errors.EXIT_INTERRUPTED, terminal
    assert "Traceback" not in terminal and terminal.count(LINE) == 1, terminal
    assert terminal.rsplit("^C", 1)[1] == "\x1b[0m\n" + LINE + "\n", repr(terminal)
