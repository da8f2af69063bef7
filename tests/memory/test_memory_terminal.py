"""What a person sees of ``--resume-window``, ``--retained`` and ``thread show``'s restart line: the
real binary on a pseudo-terminal at 80 and 120 columns, colour on and off; piped; a bad argument."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest

from symfonic_cli.clock import age

from tests.support import agent_stores as ag
from tests.support.cli import run, run_process
from tests.support.terminal import on_terminal

ESC = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _ages_between(iso: str, before: datetime, after: datetime) -> set[str]:
    instant = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    steps = int((after - before).total_seconds()) + 2
    return {age(instant, before + timedelta(seconds=k)) for k in range(steps)}


def _lines(screen: str) -> list[str]:
    return ESC.sub("", screen).splitlines()


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("colour", [True, False])
def test_screens_fit_and_keep_times_whole(agent_sqlite, cols, colour):
    env = {} if colour else {"NO_COLOR": "1"}
    url = agent_sqlite
    window = json.loads(run("transcript", "show", "-s", url, "-t", ag.LONG, "--resume-window", "-f", "json").out)
    before = datetime.now(timezone.utc)
    code, screen = on_terminal("transcript", "show", "-s", url, "-t", ag.LONG, "--resume-window", "--truncate", "40", "--no-pager",
                               cols=cols, rows=400, env=env)
    after = datetime.now(timezone.utc)
    assert code == 0, screen
    lines = _lines(screen)
    assert max(len(line) for line in lines) <= cols
    # Issue #37 item 5: ages in the table (clock.age, as every table), the instants with --absolute-time.
    cells = [[c.strip() for c in re.split(r"[│┃]", line)] for line in lines if "│" in line]
    shown = [c[1] for c in cells if c[0] in ("user", "assistant")]
    assert len(shown) == len(window) and not any(row["timestamp"] in screen for row in window)
    for row, cell in zip(window, shown):
        assert cell in _ages_between(row["timestamp"], before, after), (cell, row)
    assert ("\x1b[" in screen) == colour
    code, screen = on_terminal("--absolute-time", "transcript", "show", "-s", url, "-t", ag.LONG, "--resume-window", "--truncate", "40",
                               "--no-pager", cols=cols, rows=400, env=env)
    assert code == 0, screen
    lines = _lines(screen)
    assert max(len(line) for line in lines) <= cols
    for row in window:
        assert any(row["timestamp"] in line for line in lines), row
    held = json.loads(run("transcript", "show", "-s", url, "-t", ag.LONG, "--retained", "-f", "json").out)
    code, screen = on_terminal("transcript", "show", "-s", url, "-t", ag.LONG, "--retained", "--truncate", "30", "--no-pager",
                               cols=cols, rows=2000, env=env)
    assert code == 0, screen
    lines = _lines(screen)
    assert max(len(line) for line in lines) <= cols
    assert sum("compaction" in line for line in lines) == sum(1 for m in held if m["removed_by"] == "compaction")
    code, screen = on_terminal("thread", "show", "-s", url, "-t", ag.LONG, "--no-pager", cols=cols, rows=100, env=env)
    assert code == 0 and "restart recalls" in screen and f"{len(window)} turns, the last at {window[-1]['timestamp']}" in " ".join(_lines(screen))


def test_piped_and_bad_arguments(agent_sqlite):
    piped = run_process("transcript", "show", "-s", agent_sqlite, "-t", ag.SHORT, "--resume-window")
    assert piped.code == 0 and "\x1b[" not in piped.out and piped.out.startswith(("user ", "assistant "))
    bad = run_process("transcript", "show", "-s", agent_sqlite, "-t", ag.SHORT, "--resume-window", "--max-entries", "many")
    assert bad.code == 2 and "Traceback" not in bad.err and bad.out == ""
    code, screen = on_terminal("transcript", "show", "-s", agent_sqlite, "-t", ag.SHORT, "--retained", "--speaker", "user", cols=80)
    assert code == 2 and "--retained" in screen and "Traceback" not in screen
