"""``threads list``'s note when nothing matches says what was asked, in words a person reads
correctly (``idle for 30 days or more: last activity before <instant>``), for every filter and
their combinations; on a real terminal at 80 and 120 columns, colour on and off; piped it is
silent. Hostile filter values are escaped."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.terminal import on_terminal

STORE = str(Path(__file__).resolve().parent.parent / "goldens" / "changes" / "store.db")
T = r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))"

# (options, the note between "no threads match (" and "); the store holds", as a pattern,
#  the durations the instants in it must be ago, in order: None for a fixed instant)
CASES = [
    (("--inactive-for", "30d", "--tenant", "nobody"),
     rf"--tenant 'nobody'; idle for 30 days or more: last activity before {T}", [timedelta(days=30)]),
    (("--inactive-for", "36h", "--status", "interrupted", "--tenant", "globex"),
     rf"--tenant 'globex'; idle for 36 hours or more: last activity before {T}; --status 'interrupted'", [timedelta(hours=36)]),
    (("--inactive-for", "1d", "--active-within", "2w", "--tenant", "nobody"),
     rf"--tenant 'nobody'; idle for 1 day or more: last activity before {T}; "
     rf"active within the last 14 days: last activity at or after {T}", [timedelta(days=1), timedelta(days=14)]),
    (("--inactive-since", "2000-01-01",), r"last activity before 2000-01-01T00:00:00Z", []),
    (("--until", "2020-01-01"), r"last activity up to the end of --until '2020-01-01', i\.e\. before 2020-01-02T00:00:00Z", []),
    (("--since", "2020-01-01", "--until", "2020-02-01T10:00"),
     r"last activity up to the end of --until '2020-02-01T10:00', i\.e\. before 2020-02-01T10:01:00Z; "
     r"last activity at or after 2020-01-01T00:00:00Z", []),
    (("--since", "2999-01-01", "--session", "s-001"), r"last activity at or after 2999-01-01T00:00:00Z; --session 's-001'", []),
    (("--active-within", "90m", "--tenant", "acme", "--sub-tenant", "nobody"),
     rf"--tenant 'acme'; --sub-tenant 'nobody'; active within the last 90 minutes: last activity at or after {T}",
     [timedelta(minutes=90)]),
]


def _ago_ok(instant: str, ago: timedelta) -> bool:
    at = datetime.fromisoformat(instant.replace("Z", "+00:00"))
    return abs(datetime.now(timezone.utc) - ago - at) < timedelta(minutes=2)


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("no_color", [False, True])
@pytest.mark.parametrize("args,said,agos", CASES, ids=lambda v: "_".join(v) if isinstance(v, tuple) else None)
def test_the_empty_note_says_what_was_asked(args, said, agos, cols, no_color):
    code, screen = on_terminal("threads", "list", "-s", STORE, *args, "--no-pager", cols=cols,
                               env={"NO_COLOR": "1"} if no_color else None)
    assert code == 0, screen
    notes = [line for line in screen.splitlines() if line.startswith("symfonic:")]
    assert len(notes) == 1, screen
    m = re.fullmatch(rf"symfonic: no threads match \({said}\); the store holds 8 threads", notes[0])
    assert m, notes[0]
    assert all(_ago_ok(instant, ago) for instant, ago in zip(m.groups(), agos)), (notes[0], agos)
    piped = run("threads", "list", "-s", STORE, *args)
    assert piped.code == 0 and piped.err == "", piped.err


def test_the_zone_of_tz_and_hostile_values_are_escaped():
    code, screen = on_terminal("threads", "list", "-s", STORE, "--inactive-for", "30d", "--tz", "Asia/Kolkata",
                               "--tenant", "x\x1b[2J\u202e", "--session", "a\nb", "--no-pager", cols=80)
    assert code == 0, screen
    notes = [line for line in screen.splitlines() if line.startswith("symfonic:")]
    assert len(notes) == 1 and "\x1b" not in notes[0] and "\u202e" not in notes[0], screen
    local = r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+05:30)"
    m = re.fullmatch(r"symfonic: no threads match \(--tenant 'x\\x1b\[2J\\u202e'; idle for 30 days or more: "
                     rf"last activity before {local}; --session 'a\\nb'\); the store holds 8 threads", notes[0])
    assert m and _ago_ok(m.group(1), timedelta(days=30)), notes[0]
