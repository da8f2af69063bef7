"""Issue #37, item 9: colour that means something in compat's reports and in warnings: a corrupt or
newer checkpoint red, a write a crash interrupted and an anomaly yellow, ``warning`` yellow; only
when colour is on (a pseudo-terminal of 80 or 120 columns): NO_COLOR, ``--color never`` and pipes
get no escape at all."""

from __future__ import annotations

import re

import pytest

from tests.compat.test_compat import THREADS, _write
from tests.support.cli import run_process
from tests.support.terminal import on_terminal

ONLY = ("acme:_:migrated", "acme:_:legacy", "bad:_:string", "future:_:v2", "crash:_:old", "flags:_:strings")
RED, YELLOW = r"\x1b\[31m", r"\x1b\[33m"


@pytest.fixture(scope="module")
def url(_sqlite_backend) -> str:
    return _write(_sqlite_backend, {k: THREADS[k] for k in ONLY}).url


def _value_line(screen: str, label: str) -> str:
    plain = re.sub(r"\x1b\[[0-9;]*m", "", screen)
    lines = screen.splitlines()
    for n, line in enumerate(plain.splitlines()):
        if line.startswith(label):
            return lines[n]
    raise AssertionError(f"{label!r} not on the screen:\n{plain}")


@pytest.mark.parametrize("cols", [80, 120])
def test_findings_in_colour_when_colour_is_on(url, cols):
    code, screen = on_terminal("compat", "report", "-s", url, "--fail-on", "", "--no-pager", cols=cols, rows=300)
    assert code == 0, screen
    assert re.search(RED, _value_line(screen, "corrupt: ")), screen
    assert re.search(RED, _value_line(screen, "newer: format_version 2"))
    assert re.search(RED, _value_line(screen, "threads whose latest checkpoint is corrupt"))
    assert re.search(YELLOW, _value_line(screen, "unfinalized interrupted by a crash"))
    assert re.search(RED, _value_line(screen, "migrated services can read all"))
    # What needs no look stays plain.
    for label in ("checkpoints ", "threads whose latest checkpoint is migrated", "unfinalized in flight"):
        assert not re.search(r"\x1b\[3[13]m", _value_line(screen, label)), label

    code, screen = on_terminal("compat", "report", "-s", url, "--fail-on", "", "--by-thread", "--no-pager", cols=cols, rows=300)
    assert code == 0, screen
    assert re.search(RED + r"corrupt", screen) and re.search(RED + r"newer", screen)
    assert not re.search(r"\x1b\[3\dm(migrated|legacy)", screen)

    code, screen = on_terminal("compat", "show", "-s", url, "bad:_:string", "--no-pager", cols=cols, rows=300)
    assert code == 0 and re.search(RED + r"corrupt", screen), screen

    code, screen = on_terminal("compat", "report", "-s", url, "crash:_:old", "--fail-on", "", "--no-pager", cols=cols, rows=300)
    assert code == 0 and re.search(YELLOW + r"interrupted by a crash", screen), screen
    code, screen = on_terminal("compat", "report", "-s", url, "flags:_:strings", "--fail-on", "", "--no-pager", cols=cols, rows=300)
    assert code == 0 and re.search(YELLOW, _value_line(screen, "anomaly ")), screen


@pytest.mark.parametrize("cols", [80, 120])
def test_no_colour_under_no_color_never_and_pipes(url, cols):
    for args, env in (((), {"NO_COLOR": "1"}), (("--color", "never"), {})):
        for extra in ((), ("--by-thread",), ("crash:_:old",)):
            code, screen = on_terminal("compat", "report", "-s", url, "--fail-on", "", *extra, *args, "--no-pager", cols=cols, rows=300,
                                       env=env)
            assert code == 0 and "\x1b" not in screen, (extra, args, screen)
    piped = run_process("compat", "report", "-s", url, "--fail-on", "")
    assert piped.code == 0 and "\x1b" not in piped.out + piped.err and "corrupt" in piped.out


@pytest.mark.parametrize("cols", [80, 120])
def test_warnings_in_colour_only_when_colour_is_on(tmp_path, cols):
    from tests.transcript.test_transcript import app_class_store

    path = str(app_class_store(tmp_path))
    code, screen = on_terminal("thread", "diff", "-s", path, "t:_:app", "-2", "-1", "--no-pager", cols=cols, rows=100)
    assert code == 0 and re.search(r"symfonic: \x1b\[33mwarning:\x1b\[0m \S.*AppMessage", screen), screen
    code, screen = on_terminal("thread", "diff", "-s", path, "t:_:app", "-2", "-1", "--no-pager", cols=cols, rows=100, env={"NO_COLOR": "1"})
    assert code == 0 and re.search(r"symfonic: warning: \S.*AppMessage", screen) and "\x1b" not in screen, screen
    piped = run_process("thread", "diff", "-s", path, "t:_:app", "-2", "-1")
    assert piped.code == 0 and piped.err.startswith("symfonic: warning: ") and "AppMessage" in piped.err and "\x1b" not in piped.err
