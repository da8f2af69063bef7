"""Running the real ``symfonic`` binary on a pseudo-terminal and reading what reaches the screen."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time


def on_terminal(*args: str, cols: int = 80, rows: int = 24, env: dict[str, str] | None = None, timeout: float = 60):
    """(exit code, screen bytes as text with \\r\\n made \\n): stdout and stderr on a terminal of
    ``cols`` x ``rows``."""
    return screen_of([sys.executable, "-m", "symfonic_cli", *args], cols=cols, rows=rows, env=env, timeout=timeout)


def screen_of(argv: list[str], *, cols: int = 80, rows: int = 24, env: dict[str, str] | None = None,
              timeout: float = 60, cwd: str | None = None):
    """(exit code, screen text) of ``argv`` with its standard streams on a new pseudo-terminal of
    ``cols`` x ``rows`` (its own session); COLUMNS, LINES, NO_COLOR and the pagers unset, a colour TERM."""
    from tests.support.markers import require

    require("pty")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "PAGER", "SYMFONIC_PAGER")}
    environ.setdefault("TERM", "xterm-256color")
    if environ["TERM"] == "dumb":
        environ["TERM"] = "xterm-256color"
    environ.update(env or {})
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=environ, cwd=cwd, start_new_session=True)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    code = proc.wait(timeout=timeout)
    return code, seen.decode("utf-8", "replace").replace("\r\n", "\n")
