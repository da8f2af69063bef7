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


def read_chunk(master: int, wait: float) -> bytes:
    """What arrives on a pseudo-terminal's master within ``wait`` seconds; b"" when nothing does
    or the terminal is closed."""
    ready, _, _ = select.select([master], [], [], wait)
    if not ready:
        return b""
    try:
        return os.read(master, 65536)
    except OSError:
        return b""


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
        ended = proc.poll() is not None  # judged before the read: what it wrote just before is read
        ready, _, _ = select.select([master], [], [], 0.05 if ended else 0.2)
        if not ready:
            if ended:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    code = proc.wait(timeout=timeout)
    return code, seen.decode("utf-8", "replace").replace("\r\n", "\n")


class Session:
    """A command on a new pseudo-terminal that is its controlling terminal, as in a shell: Ctrl-C
    typed there is SIGINT to its foreground process group (the command and its pager). The test
    reads the screen, types keys and waits for the end; the terminal's modes before and after
    and the processes left in the session tell whether the terminal was given back."""

    def __init__(self, argv: list[str], *, cols: int = 80, rows: int = 24, env: dict[str, str | None] | None = None,
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
        for name, value in (env or {}).items():  # None: unset
            if value is None:
                environ.pop(name, None)
            else:
                environ[name] = value

        def controlling_terminal() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(argv, stdin=self.slave, stdout=self.slave, stderr=self.slave, env=environ, cwd=cwd,
                                     start_new_session=True, preexec_fn=controlling_terminal)
        self.seen = b""

    @property
    def screen(self) -> str:
        return self.seen.decode("utf-8", "replace").replace("\r\n", "\n")

    def read_some(self, wait: float) -> bool:
        """Read what arrives within ``wait`` seconds; whether anything did."""
        chunk = read_chunk(self.master, wait)
        self.seen += chunk
        return bool(chunk)

    def drain(self) -> str:
        """Read what is left on the terminal (what an ended process wrote just before its end)."""
        while self.read_some(0.05):
            pass
        return self.screen

    def read_until(self, text: str, timeout: float = 60) -> str:
        """Read until ``text`` is on the screen (AssertionError naming the screen if it is not in time)."""
        deadline = time.monotonic() + timeout
        while text not in self.screen:
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not on the screen in {timeout} s: {self.screen[-2000:]!r}")
            if not self.read_some(0.1) and self.proc.poll() is not None:
                if text in self.drain():
                    break
                raise AssertionError(f"ended ({self.proc.returncode}) before {text!r}: {self.screen[-2000:]!r}")
        return self.screen

    def settle(self, quiet: float = 0.5, timeout: float = 30) -> str:
        """Read until nothing new arrives for ``quiet`` seconds (the screen is drawn)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.read_some(quiet):
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
            self.read_some(0.1)
        if self.proc.poll() is None:
            self.proc.kill()
        code = self.proc.wait(timeout=10)
        self.drain()
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


def shell_environment(home: object, extra: dict[str, str]) -> dict[str, str | None]:
    """A person's shell for ``Session``: the real ``symfonic`` of this interpreter first on PATH, an
    empty home, ``extra`` (a pager, NO_COLOR), and no one's store, zone, debug, config or key
    settings (None unsets)."""
    environ: dict[str, str | None] = {
        "HOME": str(home), "PATH": f"{os.path.dirname(sys.executable)}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "LC_ALL": "C.UTF-8", **extra,
    }
    environ.update({k: None for k in os.environ if k.startswith(("SYMFONIC_", "LANGGRAPH_")) or k == "XDG_CONFIG_HOME"})
    return environ


MARK = "@@terminal-line"


class LineRun:
    """One command line's run in ``lines_on_terminal``: exit code, whether the terminal's modes were
    as before it (``stty -g``), whether it was sent ``q``, and what it showed."""

    def __init__(self, line: str, code: int, restored: bool, sent_q: bool, shown: str) -> None:
        self.line, self.code, self.restored, self.sent_q, self.shown = line, code, restored, sent_q, shown

    def __repr__(self) -> str:
        return f"LineRun({self.line!r}, exit {self.code}, restored={self.restored}, sent_q={self.sent_q}, {self.shown[-800:]!r})"


def _script(lines: list[str], stderr_dir: str | None) -> str:
    out = ["set +e"]
    for n, line in enumerate(lines):
        err = f' 2>"{stderr_dir}/{n}.err"' if stderr_dir else ""
        out += [
            "modes=$(stty -g)",
            f"printf '{MARK} {n} begin@@\\n'",
            f"{{ {line}\n}}{err}",
            "rc=$?",
            'if [ "$(stty -g)" = "$modes" ]; then t=restored; else t=changed; stty "$modes"; fi',
            f"printf '\\n{MARK} {n} end rc=%s %s@@\\n' \"$rc\" \"$t\"",
        ]
    out.append(f"printf '{MARK} done@@\\n'")
    return "\n".join(out) + "\n"


def lines_on_terminal(lines: list[str], *, cwd: str, cols: int = 80, rows: int = 24,
                      env: dict[str, str | None] | None = None, interactive: set[int] | frozenset[int] = frozenset(),
                      idle_q: float | None = None, stderr_dir: str | None = None, timeout: float = 300) -> list[LineRun]:
    """Shell command lines run in order by one ``bash`` on one pseudo-terminal (its controlling
    terminal), as a person types them: each line's exit code, the terminal's modes after it and
    its part of the screen. A line numbered in ``interactive`` is sent ``q`` once its screen is
    drawn; with ``idle_q``, so is any line still running after that many quiet seconds (a
    full-screen command found by walking the commands). ``stderr_dir``: each line's stderr goes
    to ``<n>.err`` there, so the screen is stdout's alone."""
    import re

    script = os.path.join(cwd, ".terminal-lines.sh")
    with open(script, "w", encoding="utf-8") as f:
        f.write(_script(lines, stderr_dir))
    sent: set[int] = set()
    with Session(["bash", "--noprofile", "--norc", script], cols=cols, rows=rows, env=env, cwd=cwd) as s:
        for n in range(len(lines)):
            s.read_until(f"{MARK} {n} begin@@", timeout=timeout)
            if n in interactive:
                s.settle(quiet=1.0)  # the screen drawn
                s.send(b"q")
                sent.add(n)
            deadline = time.monotonic() + timeout
            while f"{MARK} {n} end" not in s.screen:
                if s.proc.poll() is not None and f"{MARK} {n} end" in s.drain():
                    break
                if time.monotonic() > deadline or s.proc.poll() is not None:
                    raise AssertionError(f"{lines[n]!r} did not end: {s.screen[-2000:]!r}")
                if not s.read_some(idle_q or 0.1) and idle_q and n not in sent:
                    s.send(b"q")
                    sent.add(n)
        s.read_until(f"{MARK} done@@")
        assert s.wait(timeout=30) == 0, s.screen[-2000:]
        screen = s.screen
    os.unlink(script)
    runs = []
    for n, line in enumerate(lines):
        begin = screen.index(f"{MARK} {n} begin@@\n") + len(f"{MARK} {n} begin@@\n")
        end = re.compile(re.escape(MARK) + rf" {n} end rc=(\d+) (restored|changed)@@").search(screen, begin)
        assert end is not None, line
        shown = screen[begin:end.start()]
        runs.append(LineRun(line, int(end.group(1)), end.group(2) == "restored", n in sent, shown[:-1] if shown.endswith("\n") else shown))
    return runs


# Written to each terminal after the command: what comes before it on the master is all it wrote.
_END = b"\x00\x00run-on-pty-end\x00\x00"


def run_on_pty(*args: str, cols: int = 100, rows: int = 24, env: dict[str, str] | None = None,
               idle_q: float = 5.0, timeout: float = 120) -> tuple[int, str, str, bool]:
    """``symfonic ARGS`` through its real entry point in this process, with stdin and stdout on one
    new pseudo-terminal of ``cols`` x ``rows`` and stderr on another (so stdout's screen holds the
    output alone): (exit code, stdout's screen, stderr's screen, whether it was sent ``q``: a
    full-screen view still running after ``idle_q`` quiet seconds). Much cheaper than a process a
    command; the real binary on a terminal is ``Session``'s."""
    import threading
    from unittest import mock

    from symfonic_cli.cli.app import main
    from symfonic_cli.environment import Environment
    from tests.support.markers import require

    require("pty")
    pairs = [pty.openpty(), pty.openpty()]
    for _, slave in pairs:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    seen = [bytearray(), bytearray()]
    done = threading.Event()
    sent_q: list[bool] = []

    def drain() -> None:
        quiet_since = time.monotonic()
        while True:
            ready, _, _ = select.select([pairs[0][0], pairs[1][0]], [], [], 0.1)
            for i, (master, _) in enumerate(pairs):
                if master in ready:
                    try:
                        seen[i] += os.read(master, 65536)
                    except OSError:
                        pass
                    quiet_since = time.monotonic()
            # Both ends marked: all that was written is read (no quiet wait after each command).
            if done.is_set() and all(_END in bytes(s) for s in seen):
                return
            if done.is_set() and not ready and time.monotonic() - quiet_since > 2:
                return
            if not done.is_set() and not sent_q and time.monotonic() - quiet_since > idle_q:
                os.write(pairs[0][0], b"q")
                sent_q.append(True)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out = open(pairs[0][1], "w", encoding="utf-8", closefd=False)
    err = open(pairs[1][1], "w", encoding="utf-8", closefd=False)
    stdin = open(pairs[0][1], encoding="utf-8", closefd=False)
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith("SYMFONIC_") or k.startswith(("SYMFONIC_TEST_", "SYMFONIC_REQUIRE_"))}
    environ = {k: v for k, v in environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "PAGER")}
    environ.setdefault("TERM", "xterm-256color")
    environ.update(env or {})
    code = 0
    try:
        with mock.patch.dict(os.environ, environ, clear=True):
            try:
                main(list(args), environment=Environment(stdout=out, stderr=err, stdin=stdin))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        for stream in (out, err):
            stream.flush()
    finally:
        for _, slave in pairs:
            os.write(slave, _END)
        done.set()
        reader.join(timeout)
        for stream in (out, err, stdin):
            stream.close()
        for master, slave in pairs:
            os.close(master)
            os.close(slave)
    screens = [bytes(b).replace(_END, b"").decode("utf-8", "replace").replace("\r\n", "\n") for b in seen]
    return code, screens[0], screens[1], bool(sent_q)
