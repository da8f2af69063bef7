"""``symfonic browse`` as a person starts it: the real binary on a pseudo-terminal (keys pressed,
the screen read, ``q`` quits and the terminal is left as it was found), without a terminal
(one line, exit 2), and the keys the config file rebinds."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

from symfonic_cli.errors import UsageError
from tests.support.cli import run

CSI = re.compile(r"\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from symfonic_cli.demo import create_demo_store

    path = tmp_path_factory.mktemp("browse-cli") / "demo.db"
    create_demo_store(path)
    return path


def test_without_a_terminal_it_says_so_and_exits_2(demo):
    r = run("browse", "--store", str(demo))
    assert r.code == 2 and r.out == ""
    assert r.err.count("\n") == 1 and "browse needs a terminal" in r.err and "Traceback" not in r.err


def test_a_missing_store_is_one_line_and_exit_4_before_any_screen(tmp_path):
    code, screen, before, after, _ = _drive(["browse", "--store", str(tmp_path / "none.db")], [])
    assert code == 4 and "\x1b[?1049h" not in screen and after == before
    assert CSI.sub("", screen).strip().count("\n") == 0 and "no SQLite file" in screen


def test_keys_from_the_config_file():
    from symfonic_cli.browse.app import binding_ids, keymap_from_config

    assert {"quit", "back", "help", "copy", "command", "tools", "history", "diff", "mark", "search", "filter"} <= binding_ids()
    assert keymap_from_config({}) == {}
    assert keymap_from_config({"browse": {"keys": {"quit": "Q, ctrl+q", "history": "H"}}}) == {"quit": "Q,ctrl+q", "history": "H"}
    for bad in ({"browse": []}, {"browse": {"keys": 3}}, {"browse": {"keys": {"launch": "l"}}},
                {"browse": {"keys": {"quit": ""}}}, {"browse": {"keys": {"quit": 7}}}, {"browse": {"keys": {"quit": "q,,x"}}}):
        with pytest.raises(UsageError):
            keymap_from_config(bad)


def test_a_bad_key_in_the_config_file_is_exit_2_on_one_line(demo, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[browse.keys]\nlaunch = "l\\u001b[2J"\n', encoding="utf-8")
    code, screen, _, _, _ = _drive(["browse", "--store", str(demo)], [], env={"SYMFONIC_CONFIG": str(config)})
    assert code == 2
    assert "[browse.keys] has no key 'launch'" in screen and "\x1b[2J" not in screen and "Traceback" not in screen


def _drive(args: list[str], steps: list[tuple[str, bytes]], *, cols: int = 80, rows: int = 24,
           env: dict[str, str] | None = None, timeout: float = 60, cwd: str | None = None) -> tuple[int, str, list, list, list[str]]:
    """Run ``symfonic ARGS`` on a new pseudo-terminal; for each step wait until the screen shows its
    text, then type its bytes. (exit code, everything written, tty modes before, tty modes after,
    the steps whose text appeared)."""
    from tests.support.markers import require

    require("pty")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    before = termios.tcgetattr(slave)
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "SYMFONIC_STORE")}
    environ["TERM"] = "xterm-256color"
    environ.update(env or {})
    proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", *args], stdin=slave, stdout=slave, stderr=slave,
                            env=environ, cwd=cwd, start_new_session=True)
    seen = b""
    since = 0  # each step's text is looked for in what was written after the step before
    pending = list(steps)
    done: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
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
        if pending and pending[0][0] in CSI.sub("", seen[since:].decode("utf-8", "replace")):
            wanted, keys = pending.pop(0)
            done.append(wanted)
            since = len(seen)
            time.sleep(0.2)
            os.write(master, keys)
    try:
        code = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # stuck: ended here, and the test fails on the exit code
        proc.kill()
        code = proc.wait()
    after = termios.tcgetattr(slave)
    os.close(master)
    os.close(slave)
    return code, seen.decode("utf-8", "replace"), before, after, done


@pytest.mark.parametrize("cols,rows", [(80, 24), (120, 40)])
@pytest.mark.parametrize("mode", ["colour", "NO_COLOR", "--color never"])
def test_the_real_binary_on_a_terminal(demo, cols, rows, mode):
    steps = [
        ("acme:_:s-001", b"s"),  # the listing is up: the first thread's state
        ("RuntimeError", b"\x1b"),  # its error shown; Esc back
        ("8 threads", b"/"),  # search
        ("search message content", b"kettle\r"),
        ("3 matching messages", b"\r"),  # open the hit
        ("transcript acme:eu:s-040", b"q"),
    ]
    env = {"NO_COLOR": "1"} if mode == "NO_COLOR" else {}
    root = ["--color", "never"] if mode == "--color never" else []
    no_color = mode != "colour"
    code, screen, before, after, done = _drive([*root, "browse", "--store", str(demo)], steps, cols=cols, rows=rows, env=env)
    text = CSI.sub("", screen)
    assert code == 0, text[-2000:]
    assert done == [wanted for wanted, _ in steps], text[-2000:]
    assert "Is the blue kettle back in stock?" in text and "Traceback" not in text
    # The terminal as it was found: the alternate screen left, the tty's modes (raw mode) restored.
    assert screen.rfind("\x1b[?1049h") < screen.rfind("\x1b[?1049l")
    assert after == before
    # NO_COLOR: Textual draws in shades of grey only (its monochrome filter); otherwise in colour.
    colours = set(re.findall(r"[34]8;(5;\d+|2;\d+;\d+;\d+)", screen))
    assert colours
    assert all(_grey(c) for c in colours) is no_color, colours


def _grey(code: str) -> bool:
    """An SGR colour (``5;N`` of the 256, ``2;R;G;B``) that is black, white or a grey."""
    parts = [int(p) for p in code.split(";")[1:]]
    if len(parts) == 3:
        return parts[0] == parts[1] == parts[2]
    return parts[0] in (0, 7, 8, 15, 16, 231) or parts[0] >= 232

