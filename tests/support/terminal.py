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


class Session:
    """A command on a new pseudo-terminal that is its controlling terminal, as in a shell: Ctrl-C
    typed there is SIGINT to its foreground process group (the command and its pager). The test
    reads the screen, types keys and waits for the end; the terminal's modes before and after
    and the processes left in the session tell whether the terminal was given back."""

    def __init__(self, argv: list[str], *, cols: int = 80, rows: int = 24, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        from tests.support.markers import require

        require("pty")
        self.master, self.slave = pty.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.modes = termios.tcgetattr(self.slave)
        environ = {k: v for k, v in os.environ.items()
                   if k not in ("COLUMNS", "LINES", "NO_COLOR", "PAGER", "SYMFONIC_PAGER", "PYTHONUNBUFFERED")}
        environ.setdefault("TERM", "xterm-256color")
        if environ["TERM"] == "dumb":
            environ["TERM"] = "xterm-256color"
        environ.update(env or {})

        def controlling_terminal() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(argv, stdin=self.slave, stdout=self.slave, stderr=self.slave, env=environ, cwd=cwd,
                                     start_new_session=True, preexec_fn=controlling_terminal)
        self.seen = b""

    @property
    def screen(self) -> str:
        return self.seen.decode("utf-8", "replace").replace("\r\n", "\n")

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:
            return False
        self.seen += chunk
        return bool(chunk)

    def read_until(self, text: str, timeout: float = 60) -> str:
        """Read until ``text`` is on the screen (AssertionError naming the screen if it is not in time)."""
        deadline = time.monotonic() + timeout
        while text not in self.screen:
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not on the screen in {timeout} s: {self.screen[-2000:]!r}")
            if not self._read(0.1) and self.proc.poll() is not None:
                raise AssertionError(f"ended ({self.proc.returncode}) before {text!r}: {self.screen[-2000:]!r}")
        return self.screen

    def settle(self, quiet: float = 0.5, timeout: float = 30) -> str:
        """Read until nothing new arrives for ``quiet`` seconds (the screen is drawn)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(quiet):
            pass
        return self.screen

    def send(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def running(self) -> bool:
        return self.proc.poll() is None

    def wait(self, timeout: float = 60) -> int:
        """The exit code, reading the screen to the end (the process is killed after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        if self.proc.poll() is None:
            self.proc.kill()
        code = self.proc.wait(timeout=10)
        while self._read(0.05):
            pass
        return code

    def left_running(self) -> list[str]:
        """The processes still in the command's session (a pager left behind), by pid and name."""
        left = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[3]) == self.proc.pid and fields[0] != "Z":  # session id; zombies are gone
                left.append(f"{entry} {stat[stat.index('(') + 1:stat.rindex(')')]}")
        return left

    def modes_restored(self) -> bool:
        return termios.tcgetattr(self.slave) == self.modes

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for pid in self.left_running():
            os.kill(int(pid.split()[0]), 9)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
