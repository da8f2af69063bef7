"""A sweep's plan echoes ``--inactive-for`` as the duration typed, in the unit the grammar reads
back (issue 37 item 3: ``30d``, not an instant alone), as prune echoes ``--older-than``: one rule
(clock.human_duration) for both commands, with the cut-off instant beside it; the JSON keeps what
it documents (``selection.inactive_for`` as typed and ``selection.cut_off``). On every store kind,
piped, in the confirmation's plan and on a pseudo-terminal at 80 and 120 columns.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from tests.support.cli import run
from tests.support.old_threads import write_aged
from tests.support.terminal import on_terminal

# typed -> echoed: the largest unit that divides it (weeks are read, days are shown, as --older-than).
TYPED = {"30d": "30d", "720h": "30d", "30D": "30d", "2w": "14d", "90m": "90m", "1.5d": "36h"}
INSTANT = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z"


@pytest.fixture
def idle_store(any_kind):
    url = any_kind.new_store(scenarios=False)
    write_aged(any_kind, url, {"acme:_:idle": timedelta(days=100)}, turns=1)
    return url


@pytest.mark.parametrize("command", ["erase", "prune"])
def test_the_plan_echoes_the_duration_typed(idle_store, command):
    url = idle_store
    for typed, shown in TYPED.items():
        dry = run("thread", command, "-s", url, "--inactive-for", typed, "--dry-run")
        assert dry.code == 0, dry.err
        head = dry.out.splitlines()[0]
        assert re.search(rf" idle for {shown} \(last activity before {INSTANT}\)", head), (typed, head)
        assert "1 thread(s)" in head
        # Without --yes and without a terminal: the plan the confirmation would show, nothing changed.
        asked = run("thread", command, "-s", url, "--inactive-for", typed)
        assert asked.code == 6 and f" idle for {shown} (last activity before " in asked.out.splitlines()[0], (typed, asked.out)
        # JSON: the option as typed and the cut-off instant, as documented.
        doc = json.loads(run("thread", command, "-s", url, "--inactive-for", typed, "--dry-run", "-f", "json").out)
        assert doc["selection"]["inactive_for"] == typed
        assert re.fullmatch(INSTANT, doc["selection"]["cut_off"])
    since = run("thread", command, "-s", url, "--inactive-since", "2026-01-01", "--dry-run")
    assert " idle since 2026-01-01T00:00:00Z" in since.out.splitlines()[0], since.out


@pytest.mark.parametrize("cols", [80, 120])
def test_the_echo_on_a_terminal(_sqlite_backend, cols):
    url = _sqlite_backend.new_store(scenarios=False)
    write_aged(_sqlite_backend, url, {"acme:_:idle": timedelta(days=100)}, turns=1)
    for command in ("erase", "prune"):
        for colour in ({"NO_COLOR": "1"}, {}):
            code, screen = on_terminal("thread", command, "-s", url, "--inactive-for", "720h", "--dry-run", cols=cols, env=colour)
            assert code == 0, screen
            flat = " ".join(screen.split())
            assert re.search(rf"idle for 30d \(last activity before {INSTANT}\)", flat), screen
            assert all(len(line) <= cols for line in screen.splitlines()), screen
